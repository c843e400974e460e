"""Issue 27, hole 1: code run for the repository reaches our root git through a submodule, or edits
the copy the fix is made in.

The failing commit has a submodule (`lib`, uninitialised: an empty directory). While the failure
is reproduced, the branch's `conftest.py` runs in the clean copy and reaches for the work copy
beside it (`../work`, where the fixers and the agent make the fix): it turns the submodule's
empty directory into a git repository whose config defines a clean filter, makes a file of it
stat-dirty, and edits a tracked file of the work copy. Before the fix, our root `git status`
asked git inside the submodule whether it was dirty, that child git ran the planted filter as
root, and the edit landed in the proposed fix as if we had made it.

After: judged runs (reproduction, verification) run as a uid of their own that cannot enter the
work copy, our git never starts a git inside the copy, and the fix is exactly the formatter's.
"""

from __future__ import annotations

from pathlib import Path

from emulator import GitHubEmulator
from isolation_helpers import FIXED, leaked, make_attack, open_dir, run_as_root_only

__all__ = ["open_dir"]  # the fixture

SUBMODULE_SHA = "4d0524e92d7ead0d4ae0a40f235b294a257cc283"

ATTACK = """
import os
import subprocess
from pathlib import Path

def mark(name, text=""):
    Path(MARKS, name).write_text(str(text))

mark("conftest-ran-" + str(os.getpid()), os.getuid())
work = Path.cwd().parent / "work"
git = ["git", "-c", "user.name=x", "-c", "user.email=x@example.com", "-c", "safe.directory=*"]
try:
    lib = work / "lib"
    subprocess.run([*git, "init", "-q", str(lib)], check=True, capture_output=True)
    with open(lib / ".git" / "config", "a") as config:
        config.write(f'[filter "evil"]\\n\\tclean = {PAYLOAD} filter-clean\\n\\trequired = false\\n')
    (lib / ".gitattributes").write_text("* filter=evil\\n")
    (lib / "f.txt").write_text("one\\n")
    subprocess.run([*git, "-C", str(lib), "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "-C", str(lib), "commit", "-qm", "planted"], check=True, capture_output=True)
    (lib / "f.txt").write_text("two\\n")  # stat-dirty: git status asks the filter
    mark("planted-submodule", lib)
except (OSError, subprocess.CalledProcessError) as exc:
    mark("plant-refused", exc)
try:
    with open(work / "widgets.py", "a") as source:
        source.write("\\n\\ndef planted():\\n    return 'planted by the clean copy'\\n")
    mark("edited-work-copy", work)
except OSError as exc:
    mark("edit-refused", exc)
"""


def test_a_submodule_planted_from_the_clean_copy_never_runs_in_our_git(
    github_emulator: GitHubEmulator, open_dir: Path
) -> None:
    run_as_root_only()
    attack = make_attack(github_emulator, open_dir, ATTACK, submodules={"lib": SUBMODULE_SHA})
    result = attack.propose()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert list(attack.marks.glob("conftest-ran-*")), "the attack never ran: the test proves nothing"
    assert attack.ran() == [], f"planted git knobs ran: {attack.ran()}"
    assert leaked(attack.loot(), attack.secrets()) == []
    assert not (attack.marks / "edited-work-copy").exists(), "a judged run could write the work copy"
    assert not (attack.marks / "planted-submodule").exists(), "a judged run could plant a repository"
    assert result.outputs["status"] == "proposed", result.summary
    diff = attack.fix_diff()
    assert "planted" not in diff
    assert FIXED.splitlines()[0] in diff
    changed = [line for line in diff.splitlines() if line.startswith("+++ ")]
    assert changed == ["+++ b/widgets.py"], diff
