"""`ci_autofix.github.GitHub` through the real PyGithub against the GitHub emulator."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from ci_autofix.deliver.ci import dispatchable
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.github import GitHub, GitHubError, permission_entries
from ci_autofix.redact import Redacted
from ci_autofix.workflow.definition import has_dispatch_trigger
from tests.testing.emulator import GitHubEmulator, JobSpec, StepSpec
from tests.testing.git import Author, commit, git, init_repo
from tests.testing.propose import FAST

REPO = "acme/widgets"
RETRYING = replace(FAST, retries=2)  # loopback timings, and PyGithub's retries on
CI = """name: CI
on: [push, pull_request]  # not workflow_dispatch
jobs: {}
"""
FIX = """name: Fix
on:
  workflow_dispatch:
    inputs:
      pull-request: {required: true}
jobs: {}
"""


@dataclass
class World:
    emu: GitHubEmulator
    gh: GitHub
    src: Path
    main_sha: str
    feature_sha: str


@pytest.fixture
def world(github_emulator: GitHubEmulator, tmp_path: Path) -> World:
    src = tmp_path / "src"
    main_sha = init_repo(
        src, {"app.py": "x = 1\n", ".github/workflows/ci.yml": CI, ".github/workflows/fix.yml": FIX}
    )
    git(src, "checkout", "-q", "-b", "feature/login")
    feature_sha = commit(src, {"app.py": "x = 2\n"}, "Change x")
    git(src, "checkout", "-q", "main")
    emu = github_emulator
    emu.create_repo(REPO, source=src)
    emu.add_user("alice", "write", email="alice@example.com")
    emu.add_user("bob", "maintain")
    emu.add_user("carol", "none")
    emu.add_team(REPO, "acme/reviewers")
    emu.add_workflow(REPO, ".github/workflows/ci.yml", "CI")
    emu.add_workflow(
        REPO, ".github/workflows/fix.yml", "Fix", dispatch=True, inputs={"pull-request": {"required": True}}
    )
    gh = GitHub(emu.token, emu.api_url, REPO, settings=RETRYING)
    return World(emu, gh, src, main_sha, feature_sha)


def failing_run(w: World, **kwargs: object) -> object:
    jobs = [
        JobSpec(
            "lint",
            "failure",
            [
                StepSpec("Set up job"),
                StepSpec("Run ruff format --check", "failure"),
                StepSpec("Complete job"),
            ],
            log=b"2026-01-01T00:00:00.0000000Z lint log\n",
            annotations=[
                {"path": "app.py", "start_line": 3, "message": "Would reformat"},
                {"message": "Process completed with exit code 1."},
            ],
        ),
        JobSpec("test", "timed_out", [StepSpec("Run pytest", "timed_out")], log=b"slow"),
        JobSpec("build", "success", [StepSpec("Run make")]),
        JobSpec("docs", "cancelled", [StepSpec("Run mkdocs", "cancelled")]),
    ]
    return w.emu.add_workflow_run(
        REPO, ".github/workflows/ci.yml", "feature/login", w.feature_sha, "failure", jobs=jobs, **kwargs
    )  # type: ignore[arg-type]


# ---- construction -------------------------------------------------------------------------------
def test_construction_makes_no_request(world: World) -> None:
    GitHub(world.emu.token, world.emu.api_url, REPO, settings=RETRYING)
    assert world.emu.requests == []


# ---- runs, jobs, logs -----------------------------------------------------------------------------
def test_workflow_run(world: World) -> None:
    world.emu.add_pull(REPO, "feature/login", "main", user="alice")
    run = world.emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        "feature/login",
        world.feature_sha,
        "failure",
        event="pull_request",
        actor="alice",
        triggering_actor="bob",
        run_attempt=2,
        pull_requests=[1],
    )
    info = world.gh.workflow_run(run.id)
    assert (info.id, info.head_sha, info.head_branch, info.conclusion) == (
        run.id,
        world.feature_sha,
        "feature/login",
        "failure",
    )
    assert (info.run_attempt, info.event, info.actor, info.triggering_actor) == (
        2,
        "pull_request",
        "alice",
        "bob",
    )
    assert info.workflow_path == ".github/workflows/ci.yml" and info.name == "CI"
    assert info.pull_numbers == [1]
    assert info.html_url.startswith(world.emu.server_url)


def test_failed_jobs_of_an_attempt(world: World) -> None:
    run = failing_run(world)
    retry_jobs = world.emu.add_attempt(run, "success", [JobSpec("lint", "success", [StepSpec("Run ruff")])])
    first = world.gh.failed_jobs(run.id, 1)  # type: ignore[attr-defined]
    assert [(j.name, j.conclusion) for j in first] == [("lint", "failure"), ("test", "timed_out")]
    lint = first[0]
    assert [s.name for s in lint.steps] == ["Set up job", "Run ruff format --check", "Complete job"]
    assert [(s.number, s.name, s.conclusion) for s in lint.failed_steps] == [
        (2, "Run ruff format --check", "failure")
    ]
    assert first[1].failed_steps[0].conclusion == "timed_out"
    assert lint.run_attempt == 1 and lint.html_url.startswith(world.emu.server_url)
    assert world.gh.failed_jobs(run.id, 2) == []  # type: ignore[attr-defined]
    assert [j.id for j in world.gh.jobs(run.id, 2)] == [retry_jobs[0].id]  # type: ignore[attr-defined]


def test_jobs_are_paginated_past_one_hundred(world: World) -> None:
    specs = [JobSpec(f"shard {i}", "failure" if i % 3 == 0 else "success") for i in range(130)]
    run = world.emu.add_workflow_run(REPO, ".github/workflows/ci.yml", "main", world.main_sha, jobs=specs)
    failed = world.gh.failed_jobs(run.id, 1)
    assert [j.name for j in failed] == [f"shard {i}" for i in range(0, 130, 3)]
    pages = world.emu.api_requests("GET", r"/attempts/1/jobs$")
    assert [parse_qs(r.query).get("page", ["1"]) for r in pages] == [["1"], ["2"]]


def test_job_log_follows_the_redirect_without_authorization(world: World, tmp_path: Path) -> None:
    run = failing_run(world)
    log = world.gh.job_log(run.jobs[0].id, tmp_path / "job.log").read_bytes()  # type: ignore[attr-defined]
    assert log == b"\xef\xbb\xbf2026-01-01T00:00:00.0000000Z lint log\n"
    api = world.emu.api_requests("GET", r"/logs$")
    blob = [r for r in world.emu.requests if r.server == "blob"]
    assert [r.status for r in api] == [302]
    assert [r.status for r in blob] == [200]  # the blob host answers 403 to any Authorization header


def test_job_log_sends_no_credentials_even_from_netrc(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password hunter2\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    run = failing_run(world)
    log = world.gh.job_log(run.jobs[0].id, tmp_path / "job.log")  # type: ignore[attr-defined]
    assert log.read_bytes().endswith(b"lint log\n")
    assert [r.status for r in world.emu.requests if r.server == "blob"] == [200]


def test_expired_log_halts(world: World, tmp_path: Path) -> None:
    run = failing_run(world)
    job_id = run.jobs[0].id  # type: ignore[attr-defined]
    world.emu.expire_logs(job_id)
    with pytest.raises(Halt) as caught:
        world.gh.job_log(job_id, tmp_path / "job.log")
    assert caught.value.reason is HaltReason.LOGS_EXPIRED
    assert "90 days" in caught.value.message and "too old" in caught.value.message


def test_missing_log_halts(world: World, tmp_path: Path) -> None:
    run = failing_run(world)
    job_id = run.jobs[0].id  # type: ignore[attr-defined]
    world.emu.remove_logs(job_id)
    with pytest.raises(Halt) as caught:
        world.gh.job_log(job_id, tmp_path / "job.log")
    assert caught.value.reason is HaltReason.LOGS_UNAVAILABLE
    assert "404" in caught.value.message


def test_annotations(world: World) -> None:
    run = failing_run(world)
    notes = world.gh.annotations(run.jobs[0].id)  # type: ignore[attr-defined]
    assert [(a.path, a.start_line, a.level, a.message) for a in notes] == [
        ("app.py", 3, "failure", "Would reformat"),
        (".github", 1, "failure", "Process completed with exit code 1."),
    ]


def test_rerun_failed_jobs(world: World) -> None:
    run = failing_run(world)
    world.gh.rerun_failed_jobs(run.id)  # type: ignore[attr-defined]
    assert [(r.repo, r.run_id) for r in world.emu.reruns] == [(REPO, run.id)]  # type: ignore[attr-defined]


def test_runs_for_commit(world: World) -> None:
    run = failing_run(world)
    world.emu.add_workflow_run(REPO, ".github/workflows/ci.yml", "main", world.main_sha, "success")
    found = world.gh.runs_for_commit(world.feature_sha)
    assert [r.id for r in found] == [run.id]  # type: ignore[attr-defined]


# ---- pull requests ------------------------------------------------------------------------------
def test_pull_lifecycle(world: World) -> None:
    gh = world.gh
    created = gh.create_pull("main", "feature/login", Redacted("Fix lint"), Redacted("Body text"))
    assert (created.number, created.state, created.head_ref, created.base_ref) == (
        1,
        "open",
        "feature/login",
        "main",
    )
    assert created.head_sha == world.feature_sha and created.author == "github-actions[bot]"
    assert created.html_url == f"{world.emu.server_url}/{REPO}/pull/1" and not created.merged
    again = gh.create_pull(
        "main", "feature/login", Redacted("Fix lint"), Redacted("Body text")
    )  # 422 "already exists"
    assert again.number == 1 and len(world.emu.pulls(REPO)) == 1
    assert gh.find_pull("feature/login") == gh.get_pull(1)
    assert gh.find_pull("nope") is None
    assert [p.number for p in gh.list_pulls("main")] == [1]
    assert gh.list_pulls("feature/login") == []
    assert [p.number for p in gh.pulls_for_commit(world.feature_sha)] == [1]
    assert gh.pulls_for_commit(world.main_sha) == []
    updated = gh.update_pull(1, body=Redacted("New body"))
    assert updated.body == "New body" and world.emu.pull(REPO, 1).body == "New body"
    gh.add_labels(1, ["ci-autofix", "bot"])
    gh.add_labels(1, ["ci-autofix"])
    assert gh.get_pull(1).labels == ["ci-autofix", "bot"] == world.emu.labels(REPO, 1)
    posted = gh.comment(1, Redacted("Looks stale"))
    assert posted.author == "github-actions[bot]" and posted.html_url.endswith(f"#issuecomment-{posted.id}")
    assert world.emu.comments(REPO, 1) == ["Looks stale"]
    gh.close_pull(1)
    assert gh.get_pull(1).state == "closed" and world.emu.pull(REPO, 1).state == "closed"
    assert gh.find_pull("feature/login", state="open") is None


def test_a_label_is_taken_off_and_one_that_is_not_there_is_no_error(world: World) -> None:
    world.emu.add_pull(REPO, "feature/login", "main", user="alice")
    world.gh.add_labels(1, ["ci-autofix", "ci-autofix:stuck"])
    world.gh.remove_label(1, "ci-autofix:stuck")
    world.gh.remove_label(1, "ci-autofix:stuck")  # already off: GitHub answers 404, which is fine
    assert world.emu.labels(REPO, 1) == ["ci-autofix"]
    assert [r.status for r in world.emu.api_requests("DELETE", r"/labels/")] == [200, 404]
    world.emu.fail("DELETE", r"/labels/", 403)
    with pytest.raises(UserError):  # any other refusal is one
        world.gh.remove_label(1, "ci-autofix")


def test_comments_on_a_pull_request_and_on_a_commit_are_read_back_and_edited_in_place(world: World) -> None:
    gh = world.gh
    world.emu.add_pull(REPO, "feature/login", "main", user="alice")
    posted = gh.comment(1, Redacted("first"))
    edited = gh.edit_comment(posted.id, Redacted("second"))
    assert (edited.id, edited.body) == (posted.id, "second")
    assert [(c.id, c.body) for c in gh.comments(1)] == [(posted.id, "second")]
    assert world.emu.comments(REPO, 1) == ["second"]
    on_commit = gh.commit_comment(world.feature_sha, Redacted("no pull request: asked here"))
    assert gh.commit_comments(world.main_sha) == []
    assert [c.body for c in gh.commit_comments(world.feature_sha)] == ["no pull request: asked here"]
    again = gh.edit_commit_comment(on_commit.id, Redacted("asked again"))
    assert (again.id, again.author) == (on_commit.id, "github-actions[bot]")
    assert world.emu.commit_comments(REPO, world.feature_sha) == ["asked again"]


def test_find_pull_only_matches_this_repository_head(world: World) -> None:
    world.emu.add_pull(REPO, "feature/login", "main", user="alice")
    assert world.gh.find_pull("feature/login") is not None
    requests = world.emu.api_requests("GET", r"/pulls$")
    assert "head=acme%3Afeature%2Flogin" in requests[0].query


def test_create_pull_with_no_commits_is_an_error(world: World) -> None:
    with pytest.raises(GitHubError) as caught:
        world.gh.create_pull("feature/login", "main", Redacted("t"), Redacted("b"))
    assert caught.value.status == 422


def test_request_reviewers_skips_who_cannot_be_requested(world: World) -> None:
    world.emu.add_pull(REPO, "feature/login", "main", user="alice")
    failed = world.gh.request_reviewers(
        1, ["alice", "carol", "bob", "nobody", "acme/reviewers", "acme/ghosts"]
    )
    assert failed == ["alice", "carol", "nobody", "acme/ghosts"]
    assert world.emu.review_requests(REPO, 1) == (["bob"], ["acme/reviewers"])
    statuses = [r.status for r in world.emu.api_requests("POST", "requested_reviewers")]
    assert statuses == [422, 422, 201, 422, 201, 422]
    author_reply = world.emu.api_requests("POST", "requested_reviewers")[0].body
    assert author_reply["message"] == "Review cannot be requested from pull request author."


# ---- branches, commits, permissions --------------------------------------------------------------------
def test_branches(world: World) -> None:
    gh = world.gh
    assert gh.branch_sha("feature/login") == world.feature_sha
    assert gh.branch_sha("missing") is None
    git(world.emu.bare_path(REPO), "update-ref", "refs/heads/ci-autofix/feature/login/1", world.main_sha)
    gh.delete_branch("ci-autofix/feature/login/1")
    gh.delete_branch("ci-autofix/feature/login/1")  # already gone: fine
    assert gh.branch_sha("ci-autofix/feature/login/1") is None
    assert gh.default_branch() == "main"


def test_the_branches_under_a_prefix_and_no_others(world: World) -> None:
    bare = world.emu.bare_path(REPO)
    git(bare, "update-ref", "refs/heads/ci-autofix/feature/login/1", world.main_sha)
    git(bare, "update-ref", "refs/heads/ci-autofix/feature/login/2", world.feature_sha)
    git(bare, "update-ref", "refs/heads/ci-autofix/other/3", world.main_sha)
    assert world.gh.branches("ci-autofix/feature/login/") == {
        "ci-autofix/feature/login/1": world.main_sha,
        "ci-autofix/feature/login/2": world.feature_sha,
    }
    assert world.gh.branches("ci-autofix/none/") == {}


def test_permission(world: World) -> None:
    assert [world.gh.permission(u) for u in ("alice", "bob", "carol", "acme", "ghost")] == [
        "write",
        "maintain",
        "none",
        "admin",
        "none",
    ]


def test_commit_author_login(world: World) -> None:
    assert world.gh.commit_author_login(world.feature_sha) == "alice"
    other = commit(
        world.src, {"b.py": "y = 1\n"}, "By a stranger", author=Author("Stranger", "who@example.org")
    )
    git(world.src, "push", "-q", str(world.emu.bare_path(REPO)), "main")
    assert world.gh.commit_author_login(other) is None
    assert world.gh.commit_author_login("0" * 40) is None


def test_commit_statuses_carry_the_identity_of_the_token_that_made_them(world: World) -> None:
    made = world.gh.create_status(
        world.feature_sha,
        context="ci-autofix/provenance",
        state="success",
        description="fix of x",
        target_url="https://example.invalid/run/1",
    )
    assert (made.creator, made.context, made.state) == (
        "github-actions[bot]",
        "ci-autofix/provenance",
        "success",
    )
    world.emu.add_token("ghp_malloryToken000000000000000000000000", "mallory")
    theirs = GitHub("ghp_malloryToken000000000000000000000000", world.emu.api_url, REPO, settings=RETRYING)
    theirs.create_status(world.feature_sha, context="ci-autofix/provenance", state="success", description="y")
    listed = world.gh.statuses(world.feature_sha)
    assert [(s.creator, s.description) for s in listed] == [
        ("mallory", "y"),
        ("github-actions[bot]", "fix of x"),
    ]
    assert listed[1].target_url == "https://example.invalid/run/1"
    assert world.gh.statuses(world.main_sha) == []
    assert [r.path for r in world.emu.api_requests(path_regex="statuses")] == [
        f"/repos/{REPO}/statuses/{world.feature_sha}",
        f"/repos/{REPO}/statuses/{world.feature_sha}",
        f"/repos/{REPO}/statuses/{world.feature_sha}",
        f"/repos/{REPO}/statuses/{world.main_sha}",
    ]


# ---- workflows --------------------------------------------------------------------------------------
def test_workflow_dispatch(world: World) -> None:
    gh = world.gh
    assert dispatchable(gh, ".github/workflows/fix.yml") is True
    assert dispatchable(gh, "fix.yml") is True
    assert dispatchable(gh, "ci.yml") is False  # only a comment names workflow_dispatch
    assert dispatchable(gh, "absent.yml") is False
    assert gh.default_branch_file(".github/workflows/absent.yml") is None
    info = gh.dispatch_workflow(".github/workflows/fix.yml", "main", {"pull-request": "1"})
    assert (
        info.run_id is not None
        and info.html_url == f"{world.emu.server_url}/{REPO}/actions/runs/{info.run_id}"
    )
    dispatch = world.emu.dispatches[0]
    assert (dispatch.workflow, dispatch.ref, dispatch.inputs) == (
        ".github/workflows/fix.yml",
        "main",
        {"pull-request": "1"},
    )
    with pytest.raises(GitHubError) as caught:
        gh.dispatch_workflow("ci.yml", "main")
    assert caught.value.status == 422 and "workflow_dispatch" in str(caught.value)


def test_has_dispatch_trigger() -> None:
    assert has_dispatch_trigger("on:\n  workflow_dispatch:\n")
    assert has_dispatch_trigger("on: [push, workflow_dispatch]\n")
    assert not has_dispatch_trigger("on: push  # workflow_dispatch later\n")
    assert not has_dispatch_trigger("on: push\njobs:\n  x:\n    name: my-workflow_dispatch-job\n")


# ---- errors ----------------------------------------------------------------------------------------------
def assert_no_token(err: BaseException, token: str) -> None:
    assert token not in str(err) and token not in repr(err)


def test_bad_token_names_the_input(world: World) -> None:
    bad = "ghs_wrongwrongwrongwrongwrong0123456789"
    gh = GitHub(bad, world.emu.api_url, REPO, settings=RETRYING)
    with pytest.raises(UserError) as caught:
        gh.get_pull(1)
    assert "401" in caught.value.cause and "`github-token`" in caught.value.remedy
    assert_no_token(caught.value, bad)


def test_missing_permission_names_the_permissions_entry(world: World) -> None:
    world.emu.deny("POST", r"/pulls$", permission="pull_requests=write")
    with pytest.raises(UserError) as caught:
        world.gh.create_pull("main", "feature/login", Redacted("t"), Redacted("b"))
    assert "Resource not accessible by integration" in caught.value.cause
    assert caught.value.remedy.startswith("add `pull-requests: write` to the job's `permissions:`")
    assert_no_token(caught.value, world.emu.token)


def test_missing_permission_without_header_uses_what_the_call_needs(world: World) -> None:
    world.emu.fail(
        "POST",
        r"/labels$",
        403,
        {
            "message": "Resource not accessible by integration",
            "documentation_url": "https://docs.github.com/rest",
            "status": "403",
        },
    )
    world.emu.add_pull(REPO, "feature/login", "main")
    with pytest.raises(UserError) as caught:
        world.gh.add_labels(1, ["x"])
    assert "`issues: write`" in caught.value.remedy


def test_permission_entries() -> None:
    assert permission_entries("pull_requests=write") == ["pull-requests: write"]
    assert permission_entries("issues=write; pull_requests=write") == [
        "issues: write",
        "pull-requests: write",
    ]
    assert permission_entries("contents=read, actions=write") == ["contents: read, actions: write"]
    assert permission_entries(None) == []


def test_primary_rate_limit_says_when_to_retry(world: World) -> None:
    world.emu.rate_limit("GET", r"/pulls/1$", kind="primary", reset_in=1800, times=None)
    with pytest.raises(UserError) as caught:
        world.gh.get_pull(1)
    assert "primary API rate limit" in caught.value.cause
    assert re.search(r"after \d\d:\d\d UTC \(in about 30 minutes\)", caught.value.remedy)
    assert len(world.emu.api_requests("GET", r"/pulls/1$")) == 1  # the wait exceeds the cap: no retry


def test_secondary_rate_limit_with_long_retry_after(world: World) -> None:
    world.emu.rate_limit("GET", r"/pulls/1$", kind="secondary", retry_after=60, times=None)
    with pytest.raises(UserError) as caught:
        world.gh.get_pull(1)
    assert "secondary API rate limit" in caught.value.cause and "in 60 seconds" in caught.value.remedy


def test_secondary_rate_limit_is_retried(world: World) -> None:
    world.emu.add_pull(REPO, "feature/login", "main")
    world.emu.rate_limit("GET", r"/pulls/1$", kind="secondary", retry_after=0, times=1)
    assert world.gh.get_pull(1).number == 1
    assert [r.status for r in world.emu.api_requests("GET", r"/pulls/1$")] == [403, 200]


def test_rate_limit_that_outlasts_the_retries(world: World) -> None:
    world.emu.rate_limit("GET", r"/pulls/1$", kind="secondary", retry_after=0, times=None)
    with pytest.raises(UserError) as caught:
        world.gh.get_pull(1)
    assert "rate limit" in caught.value.cause and "retrying did not help" in caught.value.cause
    assert len(world.emu.api_requests("GET", r"/pulls/1$")) == 3  # first try + 2 retries


def test_429_is_a_rate_limit(world: World) -> None:
    world.emu.rate_limit("POST", r"/comments$", kind="secondary", status=429, retry_after=600, times=None)
    world.emu.add_pull(REPO, "feature/login", "main")
    with pytest.raises(UserError) as caught:
        world.gh.comment(1, Redacted("hello"))
    assert "rate limit" in caught.value.cause and "600 seconds" in caught.value.remedy


def test_429_without_retry_after(world: World) -> None:
    world.emu.fail("GET", r"/git/ref/", 429, times=None)
    with pytest.raises(UserError) as caught:
        world.gh.branch_sha("main")
    assert "rate limit" in caught.value.cause and "in a few minutes" in caught.value.remedy


def test_server_errors_are_retried_then_reported(world: World) -> None:
    world.emu.fail("GET", r"/actions/runs/\d+$", 502, times=None)
    with pytest.raises(UserError) as caught:
        world.gh.workflow_run(1)
    assert caught.value.cause.startswith("GitHub is unavailable") and "502" in caught.value.cause
    assert len(world.emu.api_requests("GET", r"/actions/runs/\d+$")) == 3  # first try + 2 retries
    assert_no_token(caught.value, world.emu.token)


def test_unavailable_with_a_long_retry_after_is_not_a_rate_limit(world: World) -> None:
    world.emu.fail("GET", r"/pulls/1$", 503, headers={"Retry-After": "300"}, times=None)
    with pytest.raises(UserError) as caught:
        world.gh.get_pull(1)
    assert caught.value.cause.startswith("GitHub is unavailable") and "503" in caught.value.cause


def test_a_transient_server_error_is_retried(world: World) -> None:
    run = failing_run(world)
    world.emu.fail("GET", r"/actions/runs/\d+$", 503, times=1)
    assert world.gh.workflow_run(run.id).id == run.id  # type: ignore[attr-defined]


def test_unexpected_status_keeps_githubs_message(world: World) -> None:
    with pytest.raises(GitHubError) as caught:
        world.gh.get_pull(99)
    assert caught.value.status == 404 and "Not Found" in caught.value.cause


def test_pull_files_lists_what_the_pr_changes_with_githubs_patches(world: World) -> None:
    git(world.src, "checkout", "-q", "-b", "feature/files", "main")
    files = {"app.py": None, "lib/app.py": "x = 1\n", "notes.txt": "a\nb\n", "logo.png": b"\x89PNG\x00\x01"}
    head = commit(world.src, files, "Move app.py, add notes and a logo")
    git(world.src, "push", "-q", str(world.emu.bare_path(REPO)), f"{head}:refs/heads/feature/files")
    number = world.emu.add_pull(REPO, "feature/files", "main", user="alice").number

    listed = {f.filename: f for f in world.gh.pull_files(number)}
    assert set(listed) == {"lib/app.py", "notes.txt", "logo.png"}
    moved = listed["lib/app.py"]
    assert (moved.status, moved.previous_filename, moved.patch) == ("renamed", "app.py", None)
    assert listed["notes.txt"].status == "added" and listed["notes.txt"].patch == "@@ -0,0 +1,2 @@\n+a\n+b"
    assert (listed["logo.png"].status, listed["logo.png"].patch) == ("added", None)  # binary: no patch
