"""The kept work of a halted attempt is written, as root, into the runner's temp dir, which the
runner's user (and anything left running as it) may change: no link there may redirect a write,
and nothing is written into a directory someone else may write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ci_autofix.deliver.kept import write
from ci_autofix.errors import Kept
from ci_autofix.redact import Redactor

KEPT = Kept(diff="--- a/x\n+++ b/x\n", evidence="ok", transcript=({"role": "user", "content": "hi"},))
TOKEN = "ghp_" + "s" * 36


@pytest.fixture
def runner_temp(tmp_path: Path) -> Path:
    path = tmp_path / "runner_temp"
    path.mkdir()
    return path


def test_the_files_are_written_and_named_by_the_runners_path(runner_temp: Path) -> None:
    secret = Kept(diff=f"+token = '{TOKEN}'\n")
    outputs = write(secret, runner_temp, "run-1-1", Redactor([TOKEN]))
    patch = Path(outputs["patch-path"])
    assert patch == runner_temp / "ci-autofix" / "run-1-1" / "fix.patch"
    assert TOKEN not in patch.read_text() and "[REDACTED]" in patch.read_text()
    assert set(outputs) == {"patch-path"}  # no empty files


def test_a_link_in_place_of_our_directory_is_not_followed(runner_temp: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (runner_temp / "ci-autofix").symlink_to(elsewhere)
    with pytest.raises(OSError):
        write(KEPT, runner_temp, "run-1-1", Redactor())
    assert list(elsewhere.iterdir()) == []


def test_a_link_in_place_of_the_runs_directory_is_not_followed(runner_temp: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (runner_temp / "ci-autofix").mkdir()
    (runner_temp / "ci-autofix" / "run-1-1").symlink_to(elsewhere)
    with pytest.raises(OSError):
        write(KEPT, runner_temp, "run-1-1", Redactor())
    assert list(elsewhere.iterdir()) == []


def test_a_directory_others_may_write_is_refused(runner_temp: Path) -> None:
    shared = runner_temp / "ci-autofix"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could swap what is inside between our steps
    with pytest.raises(PermissionError):
        write(KEPT, runner_temp, "run-1-1", Redactor())
    assert list(shared.iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="ownership is handed over only as root")
def test_the_files_belong_to_the_temp_dirs_owner(runner_temp: Path) -> None:
    os.chown(runner_temp, 1001, 1001)
    outputs = write(KEPT, runner_temp, "run-1-1", Redactor())
    for path in (
        *map(Path, outputs.values()),
        runner_temp / "ci-autofix",
        runner_temp / "ci-autofix" / "run-1-1",
    ):
        assert (path.stat().st_uid, path.stat().st_gid) == (1001, 1001), path
