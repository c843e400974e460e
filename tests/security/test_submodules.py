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

import os
import subprocess
from pathlib import Path

import pytest

from ci_autofix.errors import Halt, HaltReason
from ci_autofix.git import Git, git_env
from ci_autofix.ladder.workarea import workarea
from tests.security.isolation_helpers import FIXED, leaked, make_attack, open_dir, run_as_root_only
from tests.testing.emulator import GitHubEmulator
from tests.testing.git import git as git_
from tests.testing.git import init_repo

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
    assert (attack.marks / "edit-refused").exists() and (attack.marks / "plant-refused").exists()
    assert result.outputs["status"] == "proposed", result.summary
    diff = attack.fix_diff()
    assert "planted" not in diff
    assert FIXED.splitlines()[0] in diff
    changed = [line for line in diff.splitlines() if line.startswith("+++ ")]
    assert changed == ["+++ b/widgets.py"], diff


# ---- the class: whatever is planted below a copy's root, our git never starts a git there ----------

NESTED = {
    # a repository in a submodule's (gitlink's) directory, with a clean filter and a stat-dirty file
    "submodule-repository": lambda copy, payload: _repository(copy / "lib", payload),
    # a `.git` file pointing at a git directory elsewhere (what `git submodule` makes)
    "gitdir-pointer": lambda copy, payload: _pointer(copy / "lib", payload),
    # a repository in an ordinary directory, deep down
    "deep-repository": lambda copy, payload: _repository(copy / "pkg" / "data", payload),
    # a `.git` that is a link to a repository elsewhere
    "linked-repository": lambda copy, payload: _linked(copy / "pkg", payload),
    # a repository whose config points its work tree at the copy's root
    "core-worktree": lambda copy, payload: _repository(copy / "pkg", payload, worktree=copy),
}


def _repository(where: Path, payload: Path, *, worktree: Path | None = None) -> None:
    where.mkdir(parents=True, exist_ok=True)
    git_(where, "init", "-q", ".")  # as root, in a directory the sandbox's uid owns: the attacker's git
    config = f'[filter "evil"]\n\tclean = {payload} filter-clean\n[core]\n\tfsmonitor = {payload} fsmonitor\n'
    if worktree is not None:
        config += f"\tworktree = {worktree}\n"
    with (where / ".git" / "config").open("a") as handle:
        handle.write(config)
    (where / ".gitattributes").write_text("* filter=evil\n")
    (where / "f.txt").write_text("one\n")
    trusting = ("-c", "safe.directory=*", "-c", "user.name=x", "-c", "user.email=x@example.com")
    git_(where, *trusting, "add", "-A")
    git_(where, *trusting, "commit", "-qm", "planted")
    (where / "f.txt").write_text("two\n")


def _pointer(where: Path, payload: Path) -> None:
    elsewhere = where.parent.parent / f"planted-{where.name}.git"
    _repository(elsewhere, payload)
    where.mkdir(parents=True, exist_ok=True)
    (where / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")


def _linked(where: Path, payload: Path) -> None:
    elsewhere = where.parent.parent / "planted-linked"
    _repository(elsewhere, payload)
    where.mkdir(parents=True, exist_ok=True)
    (where / ".git").symlink_to(elsewhere / ".git")


@pytest.mark.parametrize("operation", ["snapshot_tree", "status", "is_dirty"])
@pytest.mark.parametrize("planted", sorted(NESTED))
def test_our_git_never_runs_a_planted_repository(tmp_path: Path, planted: str, operation: str) -> None:
    """The snapshot and the status of a copy refuse it (`unsafe-copy`); `is_dirty`, which a local
    run asks of the user's own checkout (whose submodules may well be initialised), ignores
    submodules and never looks into them. No payload runs either way."""
    marks = tmp_path / "marks"
    marks.mkdir()
    payload = marks / "payload.sh"
    payload.write_text('#!/bin/sh\ntouch "$(dirname "$0")/ran-$1"\nexec cat\n')
    payload.chmod(0o755)
    source = tmp_path / "source"
    init_repo(source, {"app.py": "x = 1\n", "pkg/__init__.py": ""})
    git_(source, "update-index", "--add", "--cacheinfo", f"160000,{SUBMODULE_SHA},lib")
    git_(source, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-qm", "gitlink")
    head = git_(source, "rev-parse", "HEAD")
    with workarea(source, head) as area:
        NESTED[planted](area.work, payload)
        for planting in marks.glob("ran-*"):  # the attacker's own git ran them while planting
            planting.unlink()
        if operation == "is_dirty":
            Git(area.work, git_dir=area.git_dir, work_tree=area.work).is_dirty()
        else:
            with pytest.raises(Halt) as halted:
                area.git.snapshot_tree(head) if operation == "snapshot_tree" else area.git.status()
            assert halted.value.reason is HaltReason.UNSAFE_COPY
            assert "lib/.git" in halted.value.message or "pkg/" in halted.value.message
    assert sorted(p.name for p in marks.glob("ran-*")) == []


def test_without_a_planted_repository_the_submodule_entry_never_moves(tmp_path: Path) -> None:
    source = tmp_path / "source"
    init_repo(source, {"app.py": "x = 1\n"})
    git_(source, "update-index", "--add", "--cacheinfo", f"160000,{SUBMODULE_SHA},lib")
    git_(source, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-qm", "gitlink")
    head = git_(source, "rev-parse", "HEAD")
    with workarea(source, head) as area:
        (area.work / "app.py").write_text("x = 2\n")
        (area.work / "lib" / "planted.py").write_text("x = 3\n")  # written where the submodule is
        tree = area.git.snapshot_tree(head, ["lib/planted.py"])
        assert area.git.out("rev-parse", f"{tree}:lib") == SUBMODULE_SHA
        assert area.git.status() == ["app.py"]


def test_a_git_started_outside_the_path_we_trust_refuses_another_uids_repository(tmp_path: Path) -> None:
    """Our global config trusts no directory: only a `Git` given a checkout trusts that one path."""
    run_as_root_only()
    repo = tmp_path / "theirs"
    init_repo(repo, {"a.txt": "a\n"})
    for directory, dirs, names in os.walk(repo):
        for name in (directory, *(os.path.join(directory, n) for n in (*dirs, *names))):
            os.lchown(name, 1001, 1001)
    assert Git(repo).rev_parse("HEAD")  # the checkout we were given: trusted by its exact path
    inside = subprocess.run(
        ["git", "-C", str(repo), "status"], env=git_env(), capture_output=True, text=True, check=False
    )
    assert inside.returncode != 0 and "dubious ownership" in inside.stderr
