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
from emulator import GitHubEmulator
from isolation_helpers import leaked, make_attack, open_dir, run_as_root_only

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
