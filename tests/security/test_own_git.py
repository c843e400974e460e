"""Class 1 of issue 10: ci-autofix's own git never runs code that the repository wrote.

The failing branch's `conftest.py` (run by the failing command while reproducing and verifying)
plants every git knob that executes a command, in every place git might read it: the HOME and
XDG config it sees, the `.git/` of the tree it runs in and of the real checkout (it knows the
runner's layout), a hooks directory, attributes files. Each knob runs a payload that records
itself and copies its parent's environment. ci-autofix then runs to the end (fixers, snapshot,
commit, diff, push): no payload runs, no secret is copied, and the suggestion holds exactly
the formatting fix.
"""

from __future__ import annotations

from pathlib import Path

from tests.security.isolation_helpers import FIXED, REPO, leaked, make_attack, open_dir, run_as_root_only
from tests.testing.emulator import GitHubEmulator
from tests.testing.git import git

__all__ = ["open_dir"]  # the fixture

HOOKS = (
    "pre-commit",
    "pre-push",
    "post-checkout",
    "post-index-change",
    "reference-transaction",
    "pre-auto-gc",
    "post-rewrite",
    "fsmonitor-watchman",
    "push-to-checkout",
    "pre-receive",
    "update",
    "post-receive",
    "post-update",
)

ATTACK = f"""
import os
from pathlib import Path

HOOKS = {HOOKS!r}


def knobs():
    return f'''[core]
\\tattributesFile = {{MARKS}}/attributes
\\tfsmonitor = {{PAYLOAD}} fsmonitor
\\thooksPath = {{MARKS}}/hooks
\\tsshCommand = {{PAYLOAD}} ssh-command
\\tpager = {{PAYLOAD}} pager
\\texcludesFile = {{MARKS}}/excludes
[include]
\\tpath = {{MARKS}}/included.gitconfig
[filter "evil"]
\\tclean = {{PAYLOAD}} filter-clean
\\tsmudge = {{PAYLOAD}} filter-smudge
[diff "evil"]
\\ttextconv = {{PAYLOAD}} textconv
\\tcommand = {{PAYLOAD}} diff-driver
[diff]
\\texternal = {{PAYLOAD}} diff-external
[credential]
\\thelper = !{{PAYLOAD}} credential-helper
[http]
\\textraHeader = X-Planted: 1
[url "file://{{MARKS}}/stolen.git/"]
\\tinsteadOf = http://
\\tinsteadOf = https://
[pager]
\\tdiff = {{PAYLOAD}} pager-diff
'''


def write(place, path, text, mode="a"):
    try:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open(mode) as f:
            f.write(text)
        if mode == "w":
            path.chmod(0o755)
        Path(MARKS, "wrote-" + place).write_text(str(path))
    except OSError:
        pass


def plant(place, git_dir):
    write(place + "-config", Path(git_dir) / "config", knobs())
    write(place + "-info-attributes", Path(git_dir) / "info" / "attributes", "*.py filter=inc diff=evil\\n")
    for hook in HOOKS:
        write(place + "-hook", Path(git_dir) / "hooks" / hook, f"#!/bin/sh\\nexec {{PAYLOAD}} hook-{{hook}}\\n", "w")


Path(MARKS, "conftest-ran-" + str(os.getpid())).write_text(str(os.getuid()))
home = os.environ.get("HOME", "")
xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
write("home-gitconfig", os.path.join(home, ".gitconfig"), knobs())
write("xdg-git-config", os.path.join(xdg, "git", "config"), knobs())
write("xdg-git-attributes", os.path.join(xdg, "git", "attributes"), "* filter=evil diff=evil\\n")
plant("own-git-dir", ".git")
plant("checkout-git-dir", os.path.join(WORKSPACE, ".git"))
write("attributes", Path(MARKS, "attributes"), "* filter=evil diff=evil\\n")
write("included", Path(MARKS, "included.gitconfig"), f'[filter "inc"]\\n\\tclean = {{PAYLOAD}} include-clean\\n')
for hook in HOOKS:
    write("hooks-path", Path(MARKS, "hooks", hook), f"#!/bin/sh\\nexec {{PAYLOAD}} hooks-path-{{hook}}\\n", "w")
"""


def test_knobs_planted_by_repository_code_never_run_in_our_git(
    github_emulator: GitHubEmulator, open_dir: Path
) -> None:
    run_as_root_only()
    attack = make_attack(
        github_emulator, open_dir, ATTACK, extra={".gitattributes": "* filter=evil diff=evil\n"}
    )
    result = attack.propose()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.outputs["status"] == "proposed", result.summary
    assert list(attack.marks.glob("conftest-ran-*")), (
        "the repository's code never ran: the test proves nothing"
    )
    assert (attack.marks / "wrote-home-gitconfig").is_file()

    assert attack.ran() == [], "our git ran commands the repository's code planted"
    assert leaked(attack.loot(), attack.secrets()) == []

    # the suggestion holds exactly the formatter's fix, pushed to the real remote
    diff = attack.fix_diff()
    assert [line for line in diff.splitlines() if line.startswith("+++ ")] == ["+++ b/widgets.py"]
    [pull] = attack.emu.pulls(REPO)
    bare = attack.emu.bare_path(REPO)
    assert git(bare, "show", f"{attack.emu.branch_sha(REPO, pull.head_ref)}:widgets.py") + "\n" == FIXED
    stolen = attack.marks / "stolen.git"
    assert not stolen.exists() or not list((stolen / "refs").rglob("*"))
