"""The propose flow when GitHub's API, its log storage or the model answer slowly or fail: each
ends typed (a `UserError` with the cause and what to do, or a halt), never as a traceback, and
nothing is written to GitHub; a log host that recovers within the retries changes nothing."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from ci_autofix.agent.llm import Model, build_client
from ci_autofix.errors import UserError
from ci_autofix.settings import Settings
from tests.testing.calc_scenario import API_KEY, seed
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import FakeMessagesAPI, reply, slow
from tests.testing.format_scenario import REPO, Scenario
from tests.testing.propose import FAST, propose_in_process

JOBS = r"^/repos/[^/]+/[^/]+/actions/runs/\d+/attempts/\d+/jobs$"
SHORT = replace(FAST, timeout=1)


def writes(emu: GitHubEmulator) -> list[str]:
    return [f"{r.method} {r.path}" for r in emu.api_requests() if r.method != "GET"]


def test_a_slow_api_ends_in_an_error_that_says_github_did_not_answer(
    scenario: Scenario, tmp_path: Path
) -> None:
    scenario.emu.delay("GET", JOBS, 3)
    with pytest.raises(UserError) as raised:
        propose_in_process(scenario.emu, tmp_path, scenario.run, scenario.workspace, client=SHORT)
    assert (
        f"GitHub did not answer in time while listing the jobs of run {scenario.run.id}" in raised.value.cause
    )
    assert "githubstatus.com" in raised.value.remedy and "re-run" in raised.value.remedy
    assert writes(scenario.emu) == []


def test_one_slow_api_answer_is_retried_by_the_client(scenario: Scenario, tmp_path: Path) -> None:
    """`ClientSettings.retries` covers a read timeout of a GET: the second try is answered."""
    scenario.emu.delay("GET", JOBS, 3)
    proposed = propose_in_process(
        scenario.emu, tmp_path, scenario.run, scenario.workspace, client=replace(SHORT, retries=1)
    )
    assert proposed.outcome.status == "proposed", proposed.outcome.message
    assert len(scenario.emu.api_requests("GET", JOBS)) == 2


def test_a_log_host_that_recovers_within_the_retries_changes_nothing(
    scenario: Scenario, tmp_path: Path
) -> None:
    scenario.emu.fail_blob(503, times=2)
    proposed = propose_in_process(scenario.emu, tmp_path, scenario.run, scenario.workspace)
    assert proposed.outcome.status == "proposed", proposed.outcome.message
    assert [r.status for r in scenario.emu.requests if r.server == "blob"] == [503, 503, 200]


def test_a_log_host_that_does_not_answer_ends_in_an_error_to_re_run(
    scenario: Scenario, tmp_path: Path
) -> None:
    scenario.emu.delay("GET", r"^/_signed/", 3, server="blob", times=None)
    client = replace(SHORT, log_retries=1)
    with pytest.raises(UserError) as raised:
        propose_in_process(scenario.emu, tmp_path, scenario.run, scenario.workspace, client=client)
    assert "GitHub's log storage did not answer" in raised.value.cause
    assert "no answer within 1s (2 tries)" in raised.value.cause
    assert "Re-run this job" in raised.value.remedy
    assert writes(scenario.emu) == []
    assert scenario.emu.refs(REPO, "refs/heads/ci-autofix/") == {}


def test_a_model_that_does_not_answer_in_time_halts_model_unavailable(
    github_emulator: GitHubEmulator,
    messages_api: FakeMessagesAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A failing test no fixer repairs: the agent's first turn outlasts the SDK's timeout, and so
    does its one retry."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    broken = seed(github_emulator, tmp_path)
    messages_api.push(slow(2, reply("Looking.")), slow(2, reply("Still looking.")))

    def llm() -> Model:
        settings = Settings(anthropic_api_key=API_KEY)
        return build_client(settings, base_url=messages_api.url, max_retries=1, timeout=0.5, strict=True)

    proposed = propose_in_process(
        github_emulator, tmp_path, broken.run, broken.workspace, llm=llm, anthropic_api_key=API_KEY
    )
    outcome = proposed.outcome
    assert (outcome.status, outcome.reason) == ("halted", "model-unavailable"), outcome.message
    assert "the Messages API did not answer within 0.5s (tried 2 times)" in outcome.message
    assert "re-run the job later" in outcome.message
    assert len(messages_api.message_requests) == 2
    # nothing but the attempt's record on the failing commit: it counts toward `max-attempts`
    assert writes(github_emulator) == [f"POST /repos/{broken.run.repo}/statuses/{broken.run.head_sha}"]
    (record,) = [
        s
        for s in github_emulator.statuses(broken.run.repo, broken.run.head_sha)
        if s.context.startswith("ci-autofix/attempt/")
    ]
    assert record.description == f"halted model-unavailable for run {broken.run.id}; spent 0.0000 USD"
