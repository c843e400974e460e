"""Issue 10, class 9: smaller holes.

- The agent's `search` tool with a pathological pattern ran past `max-minutes` until killed from
  outside: one search now has a time limit and a bound on its work, and a pattern that takes too
  long comes back to the model as actionable text.
- The fork guard failed open when the run's `head_repository` was null or missing: a run is from
  this repository only when the payload says so.

End to end through the entrypoint laid out like the runner (uid 1001), against the GitHub
emulator and a scripted Claude session. The search test is bounded by construction: the runner
simulation's subprocess timeout ends a search that never returns, and the test then fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ci_autofix.agent.files import MAX_SEARCH_FILES, SEARCH_SECONDS, SearchLimits, search
from ci_autofix.agent.tools import Toolbox
from ci_autofix.sandbox import Sandbox
from tests.security.ci_guards_helpers import fix_and_finish, seed, tool_results
from tests.testing.calc_scenario import messages_process
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import reply, tool_use

MANY_AS = ("a" * 40 + "!\n") * 3  # `(a|aa)+$` backtracks through 2^40 ways on each line


def test_a_pathological_search_pattern_ends_within_its_limit_with_actionable_text(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    calc = seed(github_emulator, tmp_path, {"data/as.txt": MANY_AS})
    turns = [
        reply(tool_use("search", {"pattern": "(a+)+$", "path": "data"})),
        reply(tool_use("search", {"pattern": "(a|aa)+$", "path": "data"})),
        *fix_and_finish(),
    ]
    with messages_process(turns, tmp_path) as (url, record):
        result = calc.propose(url, timeout=90)

    nested, overlapping = tool_results(record)[:2]
    assert nested.startswith("No match for '(a+)+$'"), nested  # answered, not hung
    assert "took too long" in overlapping and "simplify" in overlapping, overlapping
    assert result.outputs["status"] == "proposed", result.log  # the agent went on and fixed it


def test_one_search_reads_a_bounded_number_of_files_and_bytes(tmp_path: Path) -> None:
    for i in range(6):
        (tmp_path / f"f{i}.txt").write_text("needle\n" + "x" * 1000 + "\n")
    few_files = search(Sandbox(tmp_path), "needle", limits=SearchLimits(max_files=3))
    assert few_files.startswith("3 matches in 3 files")
    assert "stopped after 3 files" in few_files and "narrow the path or glob" in few_files
    few_bytes = search(Sandbox(tmp_path), "needle", limits=SearchLimits(max_bytes=2500))
    assert "stopped after" in few_bytes and "narrow the path or glob" in few_bytes
    assert few_bytes.startswith(("2 matches", "3 matches"))
    told = Toolbox.search.__doc__ or ""  # what the model reads about the limits is true
    assert f"{MAX_SEARCH_FILES:,} files" in told and f"{SEARCH_SECONDS:g} seconds" in told


def _without(run: dict[str, Any], key: str, how: str) -> None:
    if how == "null":
        run[key] = None
    else:
        del run[key]


UNKNOWN_ORIGINS = [
    *(
        ("head_repository", "null", event)
        for event in ("pull_request", "pull_request_target", "workflow_run", "push")
    ),
    ("head_repository", "missing", "pull_request"),
    ("repository", "null", "pull_request_target"),
    ("repository", "missing", "pull_request"),
]


@pytest.mark.parametrize(("key", "how", "event"), UNKNOWN_ORIGINS)
def test_a_run_whose_origin_is_unknown_is_treated_as_a_fork_before_any_request(
    github_emulator: GitHubEmulator, tmp_path: Path, event: str, key: str, how: str
) -> None:
    emu = github_emulator
    calc = seed(emu, tmp_path)
    payload = calc.event()
    payload["workflow_run"]["event"] = event
    _without(payload["workflow_run"], key, how)
    requests_before = len(emu.requests)

    result = calc.propose("http://127.0.0.1:9", event=payload)

    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "fork"), result.log
    assert "allow-forks" in result.summary
    assert emu.requests[requests_before:] == []  # no API, git or blob request at all


def test_allow_forks_still_lets_a_run_of_unknown_origin_through_the_guard(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    calc = seed(emu, tmp_path)
    payload = calc.event()
    payload["workflow_run"]["event"] = "pull_request"
    payload["workflow_run"]["head_repository"] = None
    with messages_process(fix_and_finish(), tmp_path) as (url, _):
        result = calc.propose(url, event=payload, **{"allow-forks": "true"})
    assert result.outputs["status"] == "proposed", result.log
