"""The agent's file tools run in ci-autofix's own process, with its rights: what code run for the
repository leaves in the copy must not turn them against us (found by an adversarial review).

- A hard link: code we ran links a file of ours (root-owned, outside the copy) into the copy;
  viewing it would hand its content to the model, editing it would change our file.
- The copy's own `.git`: it belongs to the sandbox, which can write its config, index and
  excludes; listing files must use our git directory, never that one.
"""

from __future__ import annotations

import os
from pathlib import Path

from ci_autofix.agent.files import repo_files
from ci_autofix.agent.tools import Toolbox
from ci_autofix.ladder.workarea import workarea
from ci_autofix.sandbox import Sandbox
from tests.testing.git import commit, init_repo

EDITOR = "str_replace_based_edit_tool"


def _toolbox(sandbox: Sandbox) -> Toolbox:
    return Toolbox(sandbox, allowed_commands=["true"], allow_shell=False, command_timeout=30)


def test_a_file_hard_linked_into_the_copy_is_neither_read_nor_written(tmp_path: Path) -> None:
    ours = tmp_path / "ours" / "settings.py"
    ours.parent.mkdir()
    ours.write_text("NOTE = 'only-root-may-read-this'\n")
    copy = tmp_path / "copy"
    copy.mkdir()
    os.link(ours, copy / "notes.py")  # what a command of the repository's did
    tools = _toolbox(Sandbox(copy))

    viewed, _ = tools.dispatch(EDITOR, {"command": "view", "path": "notes.py"})
    replaced, _ = tools.dispatch(
        EDITOR, {"command": "str_replace", "path": "notes.py", "old_str": "NOTE", "new_str": "OWNED"}
    )

    assert "only-root-may-read-this" not in viewed
    assert "hard link" in viewed and "hard link" in replaced
    assert ours.read_text() == "NOTE = 'only-root-may-read-this'\n"


def test_listing_files_uses_our_git_not_the_copys_own(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    init_repo(checkout, {"calc.py": "x = 1\n"})
    head = commit(checkout, {"calc.py": "x = 2\n"}, "Change x")
    with workarea(checkout, head) as area:
        # the sandbox owns the copy and its `.git`: it leaves a file and tells that `.git` to hide it
        (area.work / "left_behind.py").write_text("import os\n")
        (area.work / ".git" / "info").mkdir(exist_ok=True)
        (area.work / ".git" / "info" / "exclude").write_text("left_behind.py\n")

        listed = repo_files(area.sandbox(protected=(), timeout=30))

    assert "calc.py" in listed
    assert "left_behind.py" in listed, "the listing read the copy's own .git"
