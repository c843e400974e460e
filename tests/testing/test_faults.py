"""The test doubles' slow and failing answers behave like the real services: a late answer still
did its work, a protected branch refuses only itself, and the Messages fake's slow turn is
answered late: too late for an impatient client, in time for a patient one."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from ci_autofix.agent.llm import LLM, build_client
from ci_autofix.errors import Halt, HaltReason
from ci_autofix.git import auth_env
from ci_autofix.settings import DEFAULT_MODEL, Settings
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import FakeMessagesAPI, reply, slow
from tests.testing.fakes.messages_fixtures import TEST_KEY
from tests.testing.git import commit, git, init_repo

REPO = "acme/widgets"


def test_a_late_api_answer_still_did_its_work(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    sha = init_repo(tmp_path / "src", {"app.py": "x = 1\n"})
    emu.create_repo(REPO, source=tmp_path / "src")
    emu.delay("POST", r"/git/refs$", 1.5)
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.post(
            f"{emu.api_url}/repos/{REPO}/git/refs",
            json={"ref": "refs/heads/late", "sha": sha},
            headers={"Authorization": f"token {emu.token}"},
            timeout=0.3,
        )
    for _ in range(50):  # the answer is on its way; the branch exists already or soon
        if emu.branch_sha(REPO, "late") == sha:
            break
        time.sleep(0.1)
    assert emu.branch_sha(REPO, "late") == sha


def test_a_protected_branch_refuses_only_itself(
    github_emulator: GitHubEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    emu = github_emulator
    init_repo(tmp_path / "src", {"app.py": "x = 1\n"})
    emu.create_repo(REPO, source=tmp_path / "src")
    emu.protect_branch(REPO, "main")
    auth = auth_env(emu.server_url, emu.token)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", emu.clone_url(REPO), str(work), env=auth)
    sha = commit(work, {"app.py": "x = 2\n"}, "Change")
    with pytest.raises(RuntimeError, match="GH006: Protected branch update failed for refs/heads/main"):
        git(work, "push", "-q", "origin", "HEAD:refs/heads/main", env=auth)
    git(work, "push", "-q", "origin", "HEAD:refs/heads/other", env=auth)
    assert emu.branch_sha(REPO, "other") == sha


def test_a_slow_turn_outlasts_an_impatient_client_and_reaches_a_patient_one(
    messages_api: FakeMessagesAPI,
) -> None:
    def client(timeout: float) -> LLM:
        settings = Settings(anthropic_api_key=TEST_KEY)
        return build_client(settings, base_url=messages_api.url, max_retries=0, timeout=timeout, strict=True)

    hello = {"model": DEFAULT_MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "Hi"}]}
    messages_api.push(slow(1.5, reply("Too late.")), slow(0.5, reply("Done.")))
    with pytest.raises(Halt) as raised:
        client(0.3).create(**hello)
    assert raised.value.reason == HaltReason.MODEL_UNAVAILABLE
    assert client(10).create(**hello).content == [{"type": "text", "text": "Done."}]
