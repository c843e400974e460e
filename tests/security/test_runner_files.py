"""Class 3 of issue 10 (the runner's files): code run for the repository cannot write the
runner's file-command files.

The failing branch's `conftest.py` appends `LD_PRELOAD=...` to `GITHUB_ENV`, a directory to
`GITHUB_PATH`, a forged output to `GITHUB_OUTPUT`, text to the step summary and state, finding
their paths in its environment, in its parent's `/proc/<pid>/environ`, and in the runner's
known layout. Nothing it wrote lands.
"""

from __future__ import annotations

from pathlib import Path

from tests.security.isolation_helpers import make_attack, open_dir, run_as_root_only
from tests.testing.emulator import GitHubEmulator

__all__ = ["open_dir"]  # the fixture

ATTACK = """
import glob
import os
from pathlib import Path

Path(MARKS, "conftest-ran-" + str(os.getpid())).write_text(str(os.getuid()))
NAMES = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_STATE")
paths = {os.environ[n] for n in NAMES if n in os.environ}
try:
    for item in open(f"/proc/{os.getppid()}/environ", "rb").read().split(b"\\0"):
        name, _, value = item.decode(errors="replace").partition("=")
        if name in NAMES:
            paths.add(value)
except OSError:
    pass
paths.update(glob.glob(os.path.join(RUNNER_ROOT, "file_commands", "*")))
for path in paths:
    try:
        with open(path, "a") as f:
            f.write("LD_PRELOAD=/tmp/evil.so\\nNODE_OPTIONS=--require=/tmp/evil.js\\n/tmp/evil/bin\\nforged=1\\n")
        Path(MARKS, "wrote-" + os.path.basename(path)).write_text(path)
    except OSError:
        pass
"""


def test_repository_code_cannot_write_the_runner_files(
    github_emulator: GitHubEmulator, open_dir: Path
) -> None:
    run_as_root_only()
    attack = make_attack(github_emulator, open_dir, ATTACK)
    result = attack.propose()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert list(attack.marks.glob("conftest-ran-*")), (
        "the repository's code never ran: the test proves nothing"
    )
    assert sorted(p.name for p in attack.marks.glob("wrote-*")) == []
    assert result.runner_files == {"GITHUB_ENV": "", "GITHUB_PATH": "", "GITHUB_STATE": ""}
    assert "forged" not in result.outputs
    assert "LD_PRELOAD" not in result.summary
    assert result.outputs["status"] == "proposed", result.summary
