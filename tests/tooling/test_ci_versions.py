"""The tool versions CI ran: read from the failed job's log, and from the index's release dates."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ci_autofix.tooling.ci_versions import CIRun, IndexUnknown, log_lines, newest_at, printed_versions
from ci_autofix.tooling.versions import Requirement
from tests.testing.index import ruff_index

BIN = Path(sys.executable).parent
STAMP = "2025-01-08T10:00:00.1234567Z "


def _own(tool: str) -> tuple[str, str]:
    """The `--version` line a real tool prints, and its version."""
    line = subprocess.run([str(BIN / tool), "--version"], capture_output=True, text=True, check=True)
    first = line.stdout.splitlines()[0]
    return first, first.replace(",", " ").split()[1]


def test_the_tools_own_version_lines_are_read() -> None:
    ruff_line, ruff = _own("ruff")
    black_line, black = _own("black")
    found = printed_versions([STAMP + "##[group]Run ruff --version", STAMP + ruff_line, STAMP + black_line])
    assert (found["ruff"].version, found["black"].version) == (ruff, black)
    assert found["ruff"].line == ruff_line


def test_installers_reports_are_read_and_the_last_install_wins() -> None:
    log = [
        "Successfully installed black-23.1.0 click-8.1.7 mypy-extensions-1.0.0",
        "Resolved 3 packages in 2ms",
        " + ruff==0.8.6",
        "  - Installing isort (5.12.0)",
        "Successfully installed black-24.2.0",
        "[INFO] Installing environment for https://github.com/astral-sh/ruff-pre-commit@v0.4.1.",
    ]
    found = printed_versions(STAMP + line for line in log)
    assert {name: p.version for name, p in found.items()} == {
        "black": "24.2.0",
        "click": "8.1.7",
        "mypy-extensions": "1.0.0",
        "ruff": "0.4.1",  # pre-commit's hook revision came last
        "isort": "5.12.0",
    }
    assert found["black"].line == "Successfully installed black-24.2.0"


@pytest.mark.parametrize(
    "line",
    [
        "Successfully installed ruff-0.8.6;curl${IFS}evil",
        "Successfully installed ruff-$(id)",
        " + ruff==0.8.6 --index-url http://evil",
        "ruff 0.8.6 && rm -rf /",
        "ruff 0.8.6-evil",
        "[INFO] Installing environment for https://github.com/astral-sh/ruff-pre-commit@main.",
        "say ruff 0.8.6",
    ],
)
def test_a_line_whose_version_is_not_strictly_a_version_says_nothing(line: str) -> None:
    assert "ruff" not in printed_versions([STAMP + line])


def test_a_log_file_and_its_bytes_read_alike(tmp_path: Path) -> None:
    text = f"{STAMP}Successfully installed ruff-0.8.6\n{STAMP}ruff 0.8.6\n"
    (tmp_path / "job.log").write_text(text)
    assert list(log_lines(tmp_path / "job.log")) == list(log_lines(text.encode())) == text.splitlines()
    assert list(log_lines(tmp_path / "missing.log")) == []


# ---- the index's release dates ------------------------------------------------------------------------
@pytest.fixture
def index() -> Iterator[tuple[str, list[str]]]:
    with ruff_index() as served:
        yield served


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("spec", "date", "version"),
    [
        (None, "2025-01-08T18:00:00", "0.8.6"),  # no pin: the newest that day
        (None, "2025-01-08T11:00:00", "0.8.5"),  # before that day's upload: the one before
        (None, "2025-03-01T00:00:00", "0.9.1"),
        (">=0.8,<0.9", "2025-03-01T00:00:00", "0.8.6"),  # the range's newest at the date
        ("~=0.8.4", "2025-01-03T00:00:00", "0.8.5"),
    ],
)
def test_the_newest_release_at_the_commits_date_that_fits(
    index: tuple[str, list[str]], spec: str | None, date: str, version: str
) -> None:
    requirement = Requirement.parse(spec) if spec else None
    assert newest_at("ruff", requirement, _day(date), index[0]) == version
    assert index[1] == ["/pypi/ruff/json"]


@pytest.mark.parametrize(
    ("spec", "date", "version"),
    [
        (None, "2020-06-22T00:00:00", "19.10b0"),  # pyramid's unpinned `black` in tox.ini, as CI installed it
        (None, "2020-09-01T00:00:00", "20.8b1"),
        ("<20", "2021-12-06T00:00:00", "19.10b0"),
        (None, "2022-02-02T00:00:00", "22.1.0"),  # once a final release fits, no pre-release (nor .dev)
        ("<22.1.0", "2022-02-02T00:00:00", "21.12b0"),
    ],
)
def test_with_no_final_release_that_fits_the_newest_pre_release_is_what_pip_installed(
    index: tuple[str, list[str]], spec: str | None, date: str, version: str
) -> None:
    requirement = Requirement.parse(spec) if spec else None
    assert newest_at("black", requirement, _day(date), index[0]) == version


def test_when_the_index_cannot_say_the_reason_is_given(index: tuple[str, list[str]]) -> None:
    with pytest.raises(IndexUnknown, match=r"could not be read for isort: HTTP Error 404"):
        newest_at("isort", None, _day("2025-01-08T00:00:00"), index[0])
    with pytest.raises(IndexUnknown, match=r"had no release of ruff allowed by `>=1.0` on 2025-01-08"):
        newest_at("ruff", Requirement.parse(">=1.0"), _day("2025-01-08T00:00:00"), index[0])
    with pytest.raises(IndexUnknown, match="not an http"):
        newest_at("ruff", None, _day("2025-01-08T00:00:00"), "file:///etc")
    run = CIRun(date=_day("2025-01-08T00:00:00"), index="")
    with pytest.raises(IndexUnknown, match="not asked"):
        run.released("ruff", None)
    # nor are the job's installs resolved at that date: release dates are off
    assert run.as_of is None
    assert CIRun(date=_day("2025-01-08T00:00:00"), index=index[0]).as_of == _day("2025-01-08T00:00:00")


def test_the_index_is_asked_once_per_package_and_range(index: tuple[str, list[str]]) -> None:
    run = CIRun(date=_day("2025-01-08T18:00:00"), index=index[0])
    assert run.released("ruff", None) == run.released("ruff", None) == "0.8.6"
    assert index[1] == ["/pypi/ruff/json"]


def test_the_date_is_when_the_job_ran_when_that_is_after_the_commit(index: tuple[str, list[str]]) -> None:
    # the commit is from the morning of 2025-01-08, before that day's 0.8.6; CI ran two days later
    commit = _day("2025-01-08T09:00:00")
    log = "2025-01-10T18:00:00.1234567Z ##[group]Run ruff format --check .\n2025-01-10T18:00:01.0Z would reformat a.py\n"
    assert CIRun.read([log], commit, index[0]).released("ruff", None) == "0.9.1"
    assert CIRun.read([log.encode()], commit, index[0]).date == _day("2025-01-10T18:00:00")
    # a stamp before the commit (a clock, or a log, that cannot be right) and no stamp: the commit's date
    early = log.replace("2025-01-10", "2024-12-01")
    assert CIRun.read([early], commit, index[0]).released("ruff", None) == "0.8.5"
    assert CIRun.read(["ruff format --check .\n"], commit, index[0]).date == commit
    # a job whose log starts in the commit's own second (a push, and CI at once): when the job ran
    prompt = log.replace("2025-01-10T18:00:00", "2025-01-08T09:00:00")
    assert CIRun.read([prompt], commit, index[0]).dated == "when the failed job ran"
