"""The work area: the copy the fix is made in stays out of reach of the judged runs, and is checked to
be exactly the failing commit's tree before the fixers and the agent start from it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ci_autofix.errors import Halt, HaltReason
from ci_autofix.ladder.workarea import workarea
from tests.testing.git import init_repo


def _root_only() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: the judged runs get a uid of their own only when we are root")


def test_the_judged_runs_have_a_uid_of_their_own(tmp_path: Path) -> None:
    _root_only()
    source = tmp_path / "source"
    head = init_repo(source, {"app.py": "x = 1\n"})
    with workarea(source, head) as area:
        judged = area.clean_copy(head, protected=(), timeout=30)
        assert judged.user is not None and area.uid is not None
        assert judged.user != area.uid
        assert (judged.root / "app.py").stat().st_uid == judged.user
        assert (area.work / "app.py").stat().st_uid == area.uid


def test_a_judged_run_cannot_reach_the_work_copy_even_where_it_was_left_open(tmp_path: Path) -> None:
    """The agent's commands (the work copy's uid) may have opened the copy to everyone: a judged run
    still cannot write, or even read, a file there while it runs."""
    _root_only()
    source = tmp_path / "source"
    head = init_repo(source, {"app.py": "x = 1\n"})
    with workarea(source, head) as area:
        for path in (area.work, area.work / "app.py", area.home):
            path.chmod(0o777 if path.is_dir() else 0o666)
        judged = area.clean_copy(head, protected=(), timeout=30)
        script = 'echo planted >> "$1/app.py"; cat "$1/app.py"; touch "$2/planted"'
        result = judged.run(["bash", "-c", script, "judged", str(area.work), str(area.home)])
        assert not result.ok
        assert "Permission denied" in result.output
        assert (area.work / "app.py").read_text() == "x = 1\n"
        assert not (area.home / "planted").exists()
        assert area.work.stat().st_mode & 0o777 == 0o777  # opened again once the run ended


def test_a_copy_changed_before_the_fixers_start_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "source"
    head = init_repo(source, {"app.py": "x = 1\n", ".gitignore": "build/\n"})
    with workarea(source, head) as area:
        area.pristine()  # as made
        (area.work / "build").mkdir()
        (area.work / "build" / "steer.toml").write_text("[tool]\n")  # ignored files count too
        with pytest.raises(Halt) as halted:
            area.pristine()
        assert halted.value.reason is HaltReason.UNSAFE_COPY
        assert "build/" in halted.value.message
