"""The GitHub emulator itself: git over smart HTTP with auth, the lease, logs, pagination, checks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import requests

from ci_autofix.git import auth_env
from tests.testing.emulator import GitHubEmulator, JobSpec, StepSpec
from tests.testing.git import commit, git, init_repo, try_git

REPO = "acme/widgets"


@pytest.fixture
def emu(github_emulator: GitHubEmulator, tmp_path: Path) -> GitHubEmulator:
    init_repo(tmp_path / "src", {"README.md": "hello\n"})
    github_emulator.create_repo(REPO, source=tmp_path / "src")
    return github_emulator


def api(
    emu: GitHubEmulator,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = "default",  # noqa: S107 - "default" means the emulator's token
    **kwargs: Any,
) -> requests.Response:
    headers = {"Accept": "application/vnd.github+json"}
    if token:
        headers["Authorization"] = f"token {emu.token if token == 'default' else token}"
    return requests.request(method, f"{emu.api_url}{path}", json=body, headers=headers, timeout=10, **kwargs)


# ---- git smart HTTP --------------------------------------------------------------------------------
def test_clone_and_push_need_the_token(emu: GitHubEmulator, tmp_path: Path) -> None:
    url = emu.clone_url(REPO)
    anonymous = try_git(tmp_path, "clone", "-q", url, "anon")
    assert anonymous.returncode != 0 and not (tmp_path / "anon").exists()
    wrong = try_git(tmp_path, "clone", "-q", url, "wrong", env=auth_env(emu.server_url, "ghs_not_the_token"))
    assert wrong.returncode != 0
    assert [r.status for r in emu.requests if r.server == "git"] == [401, 401]

    auth = auth_env(emu.server_url, emu.token)
    assert try_git(tmp_path, "clone", "-q", url, "work", env=auth).returncode == 0
    work = tmp_path / "work"
    sha = commit(work, {"a.txt": "a\n"}, "Add a")
    pushed = try_git(work, "push", "-q", "origin", "HEAD:refs/heads/topic", env=auth)
    assert pushed.returncode == 0, pushed.stderr
    assert emu.branch_sha(REPO, "topic") == sha
    assert api(emu, "GET", f"/repos/{REPO}/git/ref/heads/topic").json()["object"]["sha"] == sha


def test_bearer_and_basic_auth_on_git(emu: GitHubEmulator) -> None:
    url = f"{emu.clone_url(REPO)}/info/refs?service=git-upload-pack"
    assert requests.get(url, timeout=10).status_code == 401
    assert requests.get(url, timeout=10).headers["WWW-Authenticate"].startswith("Basic")
    assert requests.get(url, headers={"Authorization": f"Bearer {emu.token}"}, timeout=10).status_code == 200
    assert requests.get(url, auth=("x-access-token", emu.token), timeout=10).status_code == 200


def test_api_refs_and_pushes_agree(emu: GitHubEmulator, tmp_path: Path) -> None:
    auth = auth_env(emu.server_url, emu.token)
    try_git(tmp_path, "clone", "-q", emu.clone_url(REPO), "work", env=auth)
    work = tmp_path / "work"
    base = git(work, "rev-parse", "HEAD")
    created = api(emu, "POST", f"/repos/{REPO}/git/refs", {"ref": "refs/heads/made-by-api", "sha": base})
    assert created.status_code == 201
    assert created.headers["Location"] == f"{emu.api_url}/repos/{REPO}/git/refs/heads/made-by-api"
    assert (
        api(emu, "POST", f"/repos/{REPO}/git/refs", {"ref": "refs/heads/made-by-api", "sha": base}).json()[
            "message"
        ]
        == "Reference already exists"
    )
    remote = try_git(work, "ls-remote", "origin", "refs/heads/made-by-api", env=auth).stdout
    assert remote.split() == [base, "refs/heads/made-by-api"]

    ahead = commit(work, {"b.txt": "b\n"}, "Ahead")
    assert try_git(work, "push", "-q", "origin", "HEAD:refs/heads/made-by-api", env=auth).returncode == 0
    assert api(emu, "GET", f"/repos/{REPO}/git/ref/heads/made-by-api").json()["object"]["sha"] == ahead
    back = api(emu, "PATCH", f"/repos/{REPO}/git/refs/heads/made-by-api", {"sha": base})
    assert (back.status_code, back.json()["message"]) == (422, "Update is not a fast forward")
    assert api(emu, "PATCH", f"/repos/{REPO}/git/refs/heads/made-by-api", {"sha": base, "force": True}).ok
    assert emu.branch_sha(REPO, "made-by-api") == base
    assert api(emu, "DELETE", f"/repos/{REPO}/git/refs/heads/made-by-api").status_code == 204
    assert try_git(work, "ls-remote", "origin", "refs/heads/made-by-api", env=auth).stdout == ""
    assert api(emu, "DELETE", f"/repos/{REPO}/git/refs/heads/main").status_code == 422


def test_force_with_lease_is_rejected_when_stale(emu: GitHubEmulator, tmp_path: Path) -> None:
    auth = auth_env(emu.server_url, emu.token)
    try_git(tmp_path, "clone", "-q", emu.clone_url(REPO), "work", env=auth)
    work = tmp_path / "work"
    recorded = git(work, "rev-parse", "HEAD")
    fix = commit(work, {"fix.txt": "fix\n"}, "Fix")
    # someone else moves main after our proposal
    other = tmp_path / "other"
    try_git(tmp_path, "clone", "-q", emu.clone_url(REPO), "other", env=auth)
    moved = commit(other, {"other.txt": "x\n"}, "Someone else's work")
    assert try_git(other, "push", "-q", "origin", "main", env=auth).returncode == 0

    stale = try_git(
        work,
        "push",
        "--porcelain",
        f"--force-with-lease=refs/heads/main:{recorded}",
        "origin",
        f"{fix}:refs/heads/main",
        env=auth,
    )
    assert stale.returncode == 1 and "[rejected] (stale info)" in stale.stdout
    assert emu.branch_sha(REPO, "main") == moved
    fresh = try_git(
        work,
        "push",
        "--porcelain",
        f"--force-with-lease=refs/heads/main:{moved}",
        "origin",
        f"{fix}:refs/heads/main",
        env=auth,
    )
    assert fresh.returncode == 0 and "(forced update)" in fresh.stdout
    assert emu.branch_sha(REPO, "main") == fix


def test_large_push_uses_chunked_requests(emu: GitHubEmulator, tmp_path: Path) -> None:
    auth = auth_env(emu.server_url, emu.token)
    try_git(tmp_path, "clone", "-q", emu.clone_url(REPO), "work", env=auth)
    work = tmp_path / "work"
    (work / "blob.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    sha = commit(work, {}, "Large file")
    pushed = try_git(work, "push", "-q", "origin", "HEAD:refs/heads/big", env=auth)
    assert pushed.returncode == 0, pushed.stderr
    assert emu.branch_sha(REPO, "big") == sha


# ---- API basics -------------------------------------------------------------------------------------
def test_api_requires_a_token_and_sends_rate_limit_headers(emu: GitHubEmulator) -> None:
    missing = api(emu, "GET", f"/repos/{REPO}", token=None)
    assert (missing.status_code, missing.json()["message"]) == (401, "Requires authentication")
    bad = api(emu, "GET", f"/repos/{REPO}", token="ghs_bad")
    assert (bad.status_code, bad.json()) == (
        401,
        {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"},
    )
    ok = api(emu, "GET", f"/repos/{REPO}")
    assert ok.json()["default_branch"] == "main"
    for response in (missing, bad, ok, api(emu, "GET", f"/repos/{REPO}/pulls/9")):
        assert {
            "x-ratelimit-limit",
            "x-ratelimit-remaining",
            "x-ratelimit-reset",
            "x-ratelimit-used",
            "x-ratelimit-resource",
        } <= {k.lower() for k in response.headers}


def urls_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.startswith(("http://", "https://")) else []
    if isinstance(value, dict):
        return [u for v in value.values() for u in urls_in(v)]
    if isinstance(value, list):
        return [u for v in value for u in urls_in(v)]
    return []


def test_every_url_points_at_the_emulator(emu: GitHubEmulator, tmp_path: Path) -> None:
    src = tmp_path / "src"
    git(src, "checkout", "-q", "-b", "topic")
    commit(src, {"t.txt": "t\n"}, "Topic")
    git(src, "push", "-q", str(emu.bare_path(REPO)), "topic")
    pull = emu.add_pull(REPO, "topic", "main")
    run = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        "topic",
        emu.branch_sha(REPO, "topic") or "",
        pull_requests=[pull.number],
        jobs=[JobSpec("test")],
    )
    bodies = [
        api(emu, "GET", path).json()
        for path in (
            f"/repos/{REPO}",
            f"/repos/{REPO}/pulls/1",
            f"/repos/{REPO}/actions/runs/{run.id}",
            f"/repos/{REPO}/actions/runs/{run.id}/jobs",
            f"/repos/{REPO}/commits/main",
            "/rate_limit",
        )
    ]
    bodies.append(emu.workflow_run_event(run))
    found = [u for body in bodies for u in urls_in(body)]
    assert len(found) > 100
    foreign = [u for u in found if not u.startswith(emu.server_url)]
    assert foreign == [], foreign
    api_like = [u for u in found if "/repos/" in u and not u.startswith(f"{emu.api_url}/repos/")]
    assert all(u.startswith(f"{emu.server_url}/{REPO}") for u in api_like)


def test_job_log_redirects_to_a_blob_host_that_refuses_authorization(emu: GitHubEmulator) -> None:
    sha = emu.branch_sha(REPO, "main") or ""
    run = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        "main",
        sha,
        jobs=[JobSpec("test", "failure", [StepSpec("Run pytest", "failure")], log=b"boom\n")],
    )
    job_id = run.jobs[0].id
    redirect = api(emu, "GET", f"/repos/{REPO}/actions/jobs/{job_id}/logs", allow_redirects=False)
    assert redirect.status_code == 302 and redirect.content == b""
    location = redirect.headers["Location"]
    assert location.startswith(emu.blob_url) and emu.blob_url != emu.server_url
    with_auth = requests.get(location, headers={"Authorization": f"token {emu.token}"}, timeout=10)
    assert with_auth.status_code == 403
    plain = requests.get(location, timeout=10)
    assert plain.status_code == 200 and plain.content == b"\xef\xbb\xbfboom\n"
    assert plain.headers["Content-Type"].startswith("text/plain")
    emu.expire_logs(job_id)
    gone = api(emu, "GET", f"/repos/{REPO}/actions/jobs/{job_id}/logs", allow_redirects=False)
    assert gone.status_code == 410
    assert gone.json() == {
        "message": "Server Error",
        "documentation_url": "https://docs.github.com/rest/actions/"
        "workflow-jobs#download-job-logs-for-a-workflow-run",
        "status": "410",
    }


def test_pagination_links(emu: GitHubEmulator) -> None:
    sha = emu.branch_sha(REPO, "main") or ""
    run = emu.add_workflow_run(
        REPO, ".github/workflows/ci.yml", "main", sha, jobs=[JobSpec(f"job {i}") for i in range(5)]
    )
    first = api(emu, "GET", f"/repos/{REPO}/actions/runs/{run.id}/jobs?per_page=2")
    assert first.json()["total_count"] == 5 and len(first.json()["jobs"]) == 2
    links = requests.utils.parse_header_links(first.headers["Link"])
    by_rel = {link["rel"]: link["url"] for link in links}
    assert set(by_rel) == {"next", "last"} and by_rel["next"].startswith(emu.api_url)
    last = requests.get(by_rel["last"], headers={"Authorization": f"token {emu.token}"}, timeout=10)
    assert [j["name"] for j in last.json()["jobs"]] == ["job 4"]
    assert {link["rel"] for link in requests.utils.parse_header_links(last.headers["Link"])} == {
        "first",
        "prev",
    }


def test_filter_all_lists_every_attempt(emu: GitHubEmulator) -> None:
    sha = emu.branch_sha(REPO, "main") or ""
    run = emu.add_workflow_run(REPO, ".github/workflows/ci.yml", "main", sha, jobs=[JobSpec("first try")])
    emu.add_attempt(run, "success", [JobSpec("second try", "success")])
    latest = api(emu, "GET", f"/repos/{REPO}/actions/runs/{run.id}/jobs").json()["jobs"]
    every = api(emu, "GET", f"/repos/{REPO}/actions/runs/{run.id}/jobs?filter=all").json()["jobs"]
    assert [j["name"] for j in latest] == ["second try"]
    assert [(j["name"], j["run_attempt"]) for j in every] == [("first try", 1), ("second try", 2)]
    assert api(emu, "GET", f"/repos/{REPO}/actions/runs/{run.id}").json()["run_attempt"] == 2


def test_dispatch_requires_the_trigger(emu: GitHubEmulator) -> None:
    emu.add_workflow(REPO, ".github/workflows/ci.yml", "CI")
    emu.add_workflow(REPO, ".github/workflows/apply.yml", "Apply", dispatch=True)
    refused = api(emu, "POST", f"/repos/{REPO}/actions/workflows/ci.yml/dispatches", {"ref": "main"})
    assert (refused.status_code, refused.json()["message"]) == (
        422,
        "Workflow does not have 'workflow_dispatch' trigger",
    )
    plain = api(emu, "POST", f"/repos/{REPO}/actions/workflows/apply.yml/dispatches", {"ref": "main"})
    assert plain.status_code == 204
    detailed = api(
        emu,
        "POST",
        f"/repos/{REPO}/actions/workflows/apply.yml/dispatches",
        {"ref": "main", "return_run_details": True},
    )
    assert detailed.status_code == 200 and set(detailed.json()) == {"workflow_run_id", "run_url", "html_url"}
    assert [d.workflow for d in emu.dispatches] == [".github/workflows/apply.yml"] * 2


def test_commit_statuses_are_created_as_the_token_and_listed_newest_first(emu: GitHubEmulator) -> None:
    sha = emu.branch_sha(REPO, "main")
    assert sha is not None
    emu.add_token("ghp_malloryToken000000000000000000000000", "mallory")
    body = {"state": "success", "context": "ci-autofix/provenance", "description": "fix of x"}
    made = api(emu, "POST", f"/repos/{REPO}/statuses/{sha}", body)
    assert made.status_code == 201 and made.headers["Location"].endswith(f"/statuses/{sha}")
    assert made.json()["creator"]["login"] == "github-actions[bot]"
    theirs = api(
        emu, "POST", f"/repos/{REPO}/statuses/{sha}", body, token="ghp_malloryToken000000000000000000000000"
    )
    assert theirs.json()["creator"]["login"] == "mallory"
    for path in (f"/repos/{REPO}/commits/{sha}/statuses", f"/repos/{REPO}/commits/main/statuses"):
        listed = api(emu, "GET", path).json()
        assert [s["creator"]["login"] for s in listed] == ["mallory", "github-actions[bot]"]
    assert [s.creator for s in emu.statuses(REPO, sha)] == ["mallory", "github-actions[bot]"]
    assert api(emu, "POST", f"/repos/{REPO}/statuses/{'0' * 40}", body).status_code == 422
    assert api(emu, "POST", f"/repos/{REPO}/statuses/{sha}", {"state": "great"}).status_code == 201
    assert [v.kind for v in emu.violations] == ["request-body"]  # `great` is not a state GitHub knows
    emu.violations.clear()


def test_labels_accept_an_object_or_a_bare_array(emu: GitHubEmulator, tmp_path: Path) -> None:
    src = tmp_path / "src"
    git(src, "checkout", "-q", "-b", "topic")
    commit(src, {"t.txt": "t\n"}, "Topic")
    git(src, "push", "-q", str(emu.bare_path(REPO)), "topic")
    emu.add_pull(REPO, "topic", "main")
    assert api(emu, "POST", f"/repos/{REPO}/issues/1/labels", {"labels": ["a"]}).status_code == 200
    names = [label["name"] for label in api(emu, "POST", f"/repos/{REPO}/issues/1/labels", ["b"]).json()]
    assert names == ["a", "b"] == emu.labels(REPO, 1)


# Required fields of a `workflow_run` object in webhook payloads (octokit/webhooks
# payload-schemas/api.github.com/common/workflow-run.schema.json).
WORKFLOW_RUN_REQUIRED = [
    "id",
    "name",
    "node_id",
    "head_branch",
    "head_sha",
    "path",
    "display_title",
    "run_number",
    "run_attempt",
    "event",
    "status",
    "conclusion",
    "workflow_id",
    "check_suite_id",
    "check_suite_node_id",
    "url",
    "html_url",
    "pull_requests",
    "created_at",
    "updated_at",
    "run_started_at",
    "previous_attempt_url",
    "actor",
    "triggering_actor",
    "head_commit",
    "head_repository",
    "repository",
    "jobs_url",
    "logs_url",
    "check_suite_url",
    "artifacts_url",
    "cancel_url",
    "rerun_url",
    "workflow_url",
]


def test_webhook_payloads(emu: GitHubEmulator) -> None:
    sha = emu.branch_sha(REPO, "main") or ""
    run = emu.add_workflow_run(
        REPO, ".github/workflows/ci.yml", "main", sha, "failure", event="push", actor="alice"
    )
    event = emu.workflow_run_event(run)
    assert event["action"] == "completed" and event["sender"]["login"] == "alice"
    assert set(event) >= {"action", "workflow_run", "workflow", "repository", "sender"}
    assert set(WORKFLOW_RUN_REQUIRED) <= set(event["workflow_run"])
    assert set(event["workflow"]) >= {"id", "name", "path", "state", "url", "html_url", "badge_url"}
    wr = event["workflow_run"]
    assert (wr["id"], wr["head_sha"], wr["conclusion"], wr["path"], wr["run_attempt"]) == (
        run.id,
        sha,
        "failure",
        ".github/workflows/ci.yml",
        1,
    )
    assert wr["head_repository"]["id"] == wr["repository"]["id"] == event["repository"]["id"]
    assert wr["head_commit"]["id"] == sha
    dispatch = emu.workflow_dispatch_event(REPO, ".github/workflows/apply.yml", "main", {"pull-request": "3"})
    assert (dispatch["ref"], dispatch["inputs"], dispatch["workflow"]) == (
        "refs/heads/main",
        {"pull-request": "3"},
        ".github/workflows/apply.yml",
    )


# ---- fault injection --------------------------------------------------------------------------------
def test_faults_and_denials(emu: GitHubEmulator) -> None:
    emu.rate_limit("GET", rf"^/repos/{REPO}$", kind="primary", times=1)
    limited = api(emu, "GET", f"/repos/{REPO}")
    assert limited.status_code == 403 and limited.headers["x-ratelimit-remaining"] == "0"
    assert limited.json()["message"].startswith("API rate limit exceeded")
    assert api(emu, "GET", f"/repos/{REPO}").status_code == 200  # times=1
    emu.rate_limit("GET", rf"^/repos/{REPO}$", kind="secondary", status=429, times=1)
    secondary = api(emu, "GET", f"/repos/{REPO}")
    assert secondary.status_code == 429 and secondary.headers["retry-after"] == "60"
    assert "secondary rate limit" in secondary.json()["message"]
    emu.deny("POST", r"/pulls$", permission="pull_requests=write")
    denied = api(emu, "POST", f"/repos/{REPO}/pulls", {"head": "x", "base": "main"})
    assert denied.status_code == 403
    assert denied.json()["message"] == "Resource not accessible by integration"
    assert denied.headers["X-Accepted-GitHub-Permissions"] == "pull_requests=write"


# ---- OpenAPI checking ----------------------------------------------------------------------------------
def test_openapi_checking_catches_bad_requests(tmp_path: Path) -> None:
    emu = GitHubEmulator.start(tmp_path / "gh")
    try:
        init_repo(tmp_path / "src", {"a": "a\n"})
        emu.create_repo(REPO, source=tmp_path / "src")
        assert api(emu, "GET", f"/repos/{REPO}").status_code == 200
        assert emu.violations == []
        api(emu, "POST", f"/repos/{REPO}/git/refs", {"ref": 5})  # `sha` missing, `ref` not a string
        api(emu, "GET", f"/repos/{REPO}/secret-scanning/alerts")  # not an operation we know
        api(emu, "POST", f"/repos/{REPO}/actions/workflows/ci.yml/dispatches", {"inputs": {}})  # no `ref`
        api(emu, "GET", f"/repos/{REPO}/pulls?state=merged&colour=red&per_page=many")
    finally:
        emu.close()
    kinds = [(v.kind, v.method, v.path) for v in emu.violations]
    assert ("request-body", "POST", f"/repos/{REPO}/git/refs") in kinds
    assert ("unknown-operation", "GET", f"/repos/{REPO}/secret-scanning/alerts") in kinds
    assert ("request-body", "POST", f"/repos/{REPO}/actions/workflows/ci.yml/dispatches") in kinds
    queries = sorted(v.detail for v in emu.violations if v.kind == "query")
    assert queries == [
        "`per_page=many` is not a integer",
        "`state`: 'merged' is not one of ['open', 'closed', 'all']",
        "undeclared query parameter `colour`",
    ]
    details = " ".join(v.detail for v in emu.violations)
    assert "'sha' is a required property" in details and "5 is not of type 'string'" in details


def test_the_fixture_fails_a_test_that_breaks_the_description(pytester: pytest.Pytester) -> None:
    # In process (no second interpreter to start under a loaded CI machine), with only our plugin.
    pytester.makepyfile(
        test_bad_client="""
        import requests

        def test_bad(github_emulator):
            requests.post(f"{github_emulator.api_url}/repos/a/b/pulls", json={"title": 3},
                          headers={"Authorization": f"token {github_emulator.token}"}, timeout=10)

        def test_good(github_emulator):
            requests.get(f"{github_emulator.api_url}/rate_limit",
                         headers={"Authorization": f"token {github_emulator.token}"}, timeout=10)
        """
    )
    result = pytester.runpytest_inprocess(
        "-q", "-p", "tests.testing.emulator.fixtures", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2, errors=1)  # test_bad passes its call, fails at teardown
    result.stdout.fnmatch_lines(["*request-body: POST /repos/a/b/pulls*"])


def test_response_checking_uses_the_response_schema(tmp_path: Path) -> None:
    from tests.testing.emulator import openapi

    spec = openapi.load()
    op = spec.find("GET", "/repos/a/b/git/ref/heads/main")
    assert op is not None and op.template == "/repos/{owner}/{repo}/git/ref/{ref}"
    good = {
        "ref": "refs/heads/main",
        "node_id": "x",
        "url": "http://h/x",
        "object": {"type": "commit", "sha": "a" * 40, "url": "http://h/y"},
    }
    assert spec.check_response(op, "/p", 200, good) == []
    bad = json.loads(json.dumps(good))
    del bad["object"]
    assert [v.kind for v in spec.check_response(op, "/p", 200, bad)] == ["response-body"]
    assert [v.kind for v in spec.check_response(op, "/p", 201, good)] == ["response-status"]
    assert spec.check_response(op, "/p", 500, {"message": "Server Error"}) == []
    assert [v.kind for v in spec.check_response(op, "/p", 503, "oops")] == ["response-body"]


# ---- the runner simulation ---------------------------------------------------------------------------
def test_outputs_file_is_parsed_like_the_runner() -> None:
    from tests.testing.runner_sim import RunnerFileError, parse_outputs

    text = "status=proposed\nbody<<ghadelimiter_1\nline 1\nline=2\nghadelimiter_1\nempty=\n"
    assert parse_outputs(text) == {"status": "proposed", "body": "line 1\nline=2", "empty": ""}
    with pytest.raises(RunnerFileError, match="Matching delimiter not found"):
        parse_outputs("body<<EOF\nline\n")
    with pytest.raises(RunnerFileError, match="EOF marker missing new line"):
        parse_outputs("body<<EOF\nline\nEOF")
    with pytest.raises(RunnerFileError, match="Invalid format"):
        parse_outputs("no separator\n")


def test_workflow_commands_are_parsed() -> None:
    from tests.testing.runner_sim import parse_commands

    commands = parse_commands(
        "hello\n::add-mask::s3cret\n::error file=src/a.py,line=3,title=A%2C B::bad%0Anews\n"
    )
    assert [(c.name, c.properties, c.message) for c in commands] == [
        ("add-mask", {}, "s3cret"),
        ("error", {"file": "src/a.py", "line": "3", "title": "A, B"}, "bad\nnews"),
    ]


def test_declared_inputs_come_from_action_yml() -> None:
    from ci_autofix.settings import Settings
    from tests.testing.runner_sim import declared_inputs

    declared = declared_inputs()
    assert declared["github-token"] == "${{ github.token }}"
    assert declared["mode"] == "auto"
    assert set(declared) >= {"github-token", "max-attempts", "fail-on-halt"}
    assert set(declared) <= set(Settings.input_names()) | {"apply-workflow"}


def test_runner_sim_runs_the_action_with_hyphenated_inputs(emu: GitHubEmulator, tmp_path: Path) -> None:
    from tests.testing.runner_sim import RunnerSim

    sha = emu.branch_sha(REPO, "main") or ""
    run = emu.add_workflow_run(REPO, ".github/workflows/ci.yml", "main", sha, "cancelled")
    sim = RunnerSim(tmp_path).for_emulator(emu, REPO)
    event = emu.workflow_run_event(run)
    halted = sim.run(event_name="workflow_run", event=event, workspace=tmp_path / "src")
    assert halted.exit_code == 0, halted.stderr
    assert (halted.outputs["status"], halted.outputs["reason"]) == ("halted", "not-a-failure")
    assert "not-a-failure" in halted.summary and emu.token in halted.masks
    assert halted.env["INPUT_GITHUB-TOKEN"] == emu.token and halted.env["INPUT_FAIL-ON-HALT"] == "false"
    assert halted.env["INPUT_ANTHROPIC-API-KEY"] == ""  # declared, not given, no default: set to ""
    assert halted.result_json()["status"] == "halted"
    # the hyphenated name reaches the process: fail-on-halt turns the same halt into a failure
    failing = sim.run(
        event_name="workflow_run", event=event, workspace=tmp_path / "src", inputs={"fail-on-halt": "true"}
    )
    assert failing.exit_code != 0 and failing.outputs["status"] == "halted"


def test_matching_refs_and_run_log_zip(emu: GitHubEmulator) -> None:
    import io
    import zipfile

    sha = emu.branch_sha(REPO, "main") or ""
    for name in ("ci-autofix/main/1", "ci-autofix/main/2", "ci-autofixes"):
        assert api(emu, "POST", f"/repos/{REPO}/git/refs", {"ref": f"refs/heads/{name}", "sha": sha}).ok
    listed = api(emu, "GET", f"/repos/{REPO}/git/matching-refs/heads/ci-autofix/").json()
    assert [item["ref"] for item in listed] == [
        "refs/heads/ci-autofix/main/1",
        "refs/heads/ci-autofix/main/2",
    ]
    run = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        "main",
        sha,
        jobs=[JobSpec("lint", log=b"lint says no\n"), JobSpec("test", log=b"ok\n")],
    )
    redirect = api(emu, "GET", f"/repos/{REPO}/actions/runs/{run.id}/logs", allow_redirects=False)
    assert redirect.status_code == 302
    archive = zipfile.ZipFile(io.BytesIO(requests.get(redirect.headers["Location"], timeout=10).content))
    assert archive.namelist() == ["0_lint.txt", "1_test.txt"]
    assert archive.read("0_lint.txt") == b"\xef\xbb\xbflint says no\n"


def test_default_token_cannot_push_workflow_files(emu: GitHubEmulator, tmp_path: Path) -> None:
    auth = auth_env(emu.server_url, emu.token)
    try_git(tmp_path, "clone", "-q", emu.clone_url(REPO), "work", env=auth)
    work = tmp_path / "work"
    commit(work, {".github/workflows/ci.yml": "on: push\n"}, "Touch CI")
    refused = try_git(work, "push", "origin", "HEAD:refs/heads/wf", env=auth)
    assert refused.returncode == 1
    assert (
        "refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml`"
        in refused.stderr
    )
    assert emu.branch_sha(REPO, "wf") is None
    emu.add_token("ghp_personalAccessToken0123456789", "alice")
    pat = auth_env(emu.server_url, "ghp_personalAccessToken0123456789")
    assert try_git(work, "push", "-q", "origin", "HEAD:refs/heads/wf", env=pat).returncode == 0
    assert emu.branch_sha(REPO, "wf") == git(work, "rev-parse", "HEAD")


def test_push_without_contents_write(emu: GitHubEmulator, tmp_path: Path) -> None:
    auth = auth_env(emu.server_url, emu.token)
    assert try_git(tmp_path, "clone", "-q", emu.clone_url(REPO), "work", env=auth).returncode == 0
    emu.forbid_push()
    work = tmp_path / "work"
    commit(work, {"x.txt": "x\n"}, "X")
    denied = try_git(work, "push", "origin", "HEAD:refs/heads/x", env=auth)
    assert denied.returncode != 0 and "403" in denied.stderr
    assert (
        try_git(tmp_path, "clone", "-q", emu.clone_url(REPO), "again", env=auth).returncode == 0
    )  # reads work
