"""Class 2 of issue 10: code run for the repository cannot reach a secret we hold.

The failing branch's `conftest.py` reads what an attacker would: `/proc/<pid>/environ` and
`/proc/<pid>/cmdline` of every process it can see (ci-autofix's own, git's), the real
checkout's `.git/` (where actions/checkout persists an Authorization header) and everything
under the runner's directories (the credentials file actions/checkout v6 writes to
RUNNER_TEMP). None of the tokens, literally or base64-encoded, is in what it gathered: with
the checkout owned by the runner's uid 1001 (GitHub's runners) and owned by root (self-hosted).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security.isolation_helpers import leaked, make_attack, open_dir, run_as_root_only
from tests.testing.emulator import GitHubEmulator

__all__ = ["open_dir"]  # the fixture

ATTACK = """
import os
from pathlib import Path

dump = Path(MARKS, f"dump-{os.getpid()}")
Path(MARKS, "conftest-ran-" + str(os.getpid())).write_text(str(os.getuid()))


def grab(path):
    try:
        with open(path, "rb") as f:
            data = f.read(4 * 1024 * 1024)
    except OSError:
        return
    with dump.open("ab") as out:
        out.write(f"\\n== {path}\\n".encode() + data)


for pid in os.listdir("/proc"):
    if pid.isdigit():
        for name in ("environ", "cmdline"):
            grab(f"/proc/{pid}/{name}")
for top in (os.path.join(WORKSPACE, ".git"), RUNNER_ROOT):
    for directory, _, files in os.walk(top):
        for name in files:
            if "objects" not in directory:
                grab(os.path.join(directory, name))
with dump.open("ab") as out:
    out.write(repr(dict(os.environ)).encode())
"""


@pytest.mark.parametrize("owner", [1001, None], ids=["runner-owned-checkout", "root-owned-checkout"])
def test_repository_code_finds_no_token(
    github_emulator: GitHubEmulator, open_dir: Path, owner: int | None
) -> None:
    run_as_root_only()
    attack = make_attack(github_emulator, open_dir, ATTACK, runner_uid=owner)
    result = attack.propose()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.outputs["status"] == "proposed", result.summary
    ran = list(attack.marks.glob("conftest-ran-*"))
    assert ran, "the repository's code never ran: the test proves nothing"
    loot = attack.loot()
    assert b"== /proc/" in loot  # it did look
    assert leaked(loot, attack.secrets()) == []
    assert "0" not in {p.read_text() for p in ran}, "the repository's code ran as root"


PROBE = """
import os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from ci_autofix.secret_env import withdraw
withdraw([os.environ["SECRET_VALUE"]])
child = subprocess.run(
    ["sh", "-c", 'cat /proc/$PPID/environ /proc/$PPID/mem 2>/dev/null | base64 -w0; echo; base64 -w0 /proc/$PPID/cmdline'],
    capture_output=True, text=True,
)
print("CHILD-ENV", "SECRET_VALUE" in os.environ, "ANTHROPIC_API_KEY" in os.environ)
print(child.stdout)
"""


def test_a_process_of_our_own_uid_cannot_read_our_environment_once_secrets_are_withdrawn(
    tmp_path: Path,
) -> None:
    """The local `fix` case (and a non-root runner): commands run with our uid; what they can read of us."""
    run_as_root_only()
    import shutil
    import subprocess

    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("needs a python3 that any uid can run")
    secret = "sk-ant-api03-" + "W" * 40
    src = Path(__file__).resolve().parents[2] / "src"
    result = subprocess.run(
        [python, "-c", PROBE, str(src)],
        env={"PATH": "/usr/bin:/bin", "SECRET_VALUE": secret, "ANTHROPIC_API_KEY": secret},
        user=64999,
        group=64999,
        extra_groups=[],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "CHILD-ENV False False" in result.stdout
    import base64

    dumped = b"".join(base64.b64decode(line) for line in result.stdout.splitlines()[1:] if line.strip())
    assert secret.encode() not in dumped
