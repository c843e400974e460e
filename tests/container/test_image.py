"""The built image, run exactly like the runner runs it (see container_harness), against the GitHub
emulator and the Messages fake on 127.0.0.1. Skipped unless CI_AUTOFIX_IMAGE names an image."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ci_autofix.cli.demo import job_log
from tests.container.container_harness import RUNNER_UID, ContainerRun, make_runner_checkout, run_like_runner
from tests.testing.calc_scenario import (
    API_KEY,
    CALC_BROKEN,
    CALC_OK,
    CALC_TEST,
    PYTEST,
    SUMMARY,
    fixing_turns,
)
from tests.testing.emulator import GitHubEmulator, JobSpec, Run, StepSpec
from tests.testing.fakes.messages import FakeMessagesAPI
from tests.testing.git import ALICE, commit, git, init_repo

REPO = "acme/widgets"
BRANCH = "feature"
AUTHOR = ("alice", "alice@example.com")
UNFORMATTED = 'def greet( name ):\n    return "hello, "+name\n\n\n\n\nPI=3.14\n'


def _emulator_env(emu: GitHubEmulator) -> dict[str, str]:
    return {"GITHUB_API_URL": emu.api_url, "GITHUB_SERVER_URL": emu.server_url, "GITHUB_REPOSITORY": REPO}


def _unmasked(result: ContainerRun) -> str:
    """What the run printed and wrote, but its `::add-mask::` commands (which must name the secret)."""
    printed = "\n".join(
        line for line in (result.stdout + result.stderr).splitlines() if "::add-mask::" not in line
    )
    return printed + result.summary + json.dumps(result.outputs)


def _minimal_run_event(conclusion: str) -> dict[str, Any]:
    repo = {"id": 7, "full_name": REPO, "default_branch": "main"}
    run = {
        "id": 4242,
        "name": "CI",
        "head_branch": "main",
        "head_sha": "1" * 40,
        "path": ".github/workflows/ci.yml",
        "run_attempt": 1,
        "event": "push",
        "status": "completed",
        "conclusion": conclusion,
        "pull_requests": [],
        "head_repository": repo,
        "repository": repo,
    }
    return {"action": "completed", "workflow_run": run, "repository": repo}


def _empty_workspace(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    (source / "README.md").write_text("widgets\n")
    git(source, "add", ".")
    git(source, "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-qm", "init")
    return make_runner_checkout(source, tmp_path / "workspace", git(source, "rev-parse", "HEAD"))


# ---- what the runner needs from the image itself -------------------------------------------------------


def _inspect(image: str, template: str) -> str:
    out = subprocess.run(
        ["podman", "image", "inspect", "--format", template, image],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def _in_image(image: str, script: str) -> str:
    out = subprocess.run(
        ["podman", "run", "--rm", "--network", "none", "--entrypoint", "sh", image, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return out.stdout.strip()


def test_the_image_runs_as_the_runner_expects(image: str) -> None:
    # exec form (a shell would drop INPUT_GITHUB-TOKEN and the like), no CMD left from the base
    # (the runner would pass it as arguments), no USER and no WORKDIR (the runner sets both)
    assert json.loads(_inspect(image, "{{json .Config.Entrypoint}}")) == ["python", "-m", "ci_autofix"]
    assert _inspect(image, "{{json .Config.Cmd}}") == "null"
    assert _inspect(image, "{{.Config.User}}") == ""
    assert _inspect(image, "{{.Config.WorkingDir}}") == ""


def test_the_image_holds_git_and_bytecode_but_no_fixer_tools_and_no_build_tools(image: str) -> None:
    facts = _in_image(
        image,
        " ; ".join(
            [
                "git config --system --get-all safe.directory",
                "for t in ruff black isort gcc cc make pip git-shell scalar; do command -v $t || echo no-$t; done",
                "ls /usr/lib/git-core/git-daemon /usr/lib/git-core/git-http-backend 2>/dev/null || echo no-git-daemon",
                "python -c 'from ci_autofix.fixers.install import default; "
                'print(*(f"default {p}=={default(p).version}" for p in ("ruff", "black", "isort")), sep="\\n")\'',
                "test -f /etc/ssl/certs/ca-certificates.crt && echo ca-ok",
                "python -c 'import ci_autofix.cli as m, importlib.util as u; print(u.cache_from_source(m.__file__))' | xargs ls",
                # the standard library's bytecode for what the action imports (python:*-slim has none)
                "python -c 'import json, importlib.util as u; print(u.cache_from_source(json.__file__))' | xargs ls",
                # the startup path (everything before the first API call) leaves the model SDK unloaded
                "python -c 'import sys, ci_autofix.cli, ci_autofix.flows.propose; "
                'print("anthropic-loaded" if "anthropic" in sys.modules else "anthropic-lazy")\'',
            ]
        ),
    )
    lines = facts.splitlines()
    assert lines[0] == "/github/workspace"
    # the fixers' tools are installed from their hash-pinned defaults when a run needs one
    assert {"no-ruff", "no-black", "no-isort", "no-git-shell", "no-scalar", "no-git-daemon"} <= set(lines)
    assert {"default ruff==0.17.6", "default black==26.10.1", "default isort==9.0.2"} <= set(lines)
    assert "ca-ok" in lines
    assert any(line.endswith("cli/__pycache__/__init__.cpython-313.pyc") for line in lines)
    assert any(line.endswith("json/__pycache__/__init__.cpython-313.pyc") for line in lines)
    assert {"no-gcc", "no-cc", "no-make"} <= set(lines)
    assert "/opt/venv/bin/pip" not in lines  # the base's own pip stays, for setup commands
    assert "anthropic-lazy" in lines


# ---- paths that exist without a flow: guards and input validation ---------------------------------


def test_a_skipped_run_halts_not_a_failure_before_any_api_call(
    image: str, tmp_path: Path, github_emulator: GitHubEmulator
) -> None:
    result = run_like_runner(
        image,
        _empty_workspace(tmp_path),
        event_name="workflow_run",
        event=_minimal_run_event("skipped"),  # a success may end a loop: it reads GitHub
        inputs={"fail-on-halt": ""},
        github_token=github_emulator.token,
        env=_emulator_env(github_emulator),
    )

    assert result.exit_code == 0, result.explain()
    assert result.outputs["status"] == "halted", result.explain()
    assert result.outputs["reason"] == "not-a-failure", result.explain()
    assert "skipped" in result.stdout + result.stderr, result.explain()
    assert github_emulator.api_requests() == []
    assert github_emulator.token not in _unmasked(result), result.explain()


def test_fail_on_halt_makes_the_halt_fail_the_step(image: str, tmp_path: Path) -> None:
    result = run_like_runner(
        image,
        _empty_workspace(tmp_path),
        event_name="workflow_run",
        event=_minimal_run_event("cancelled"),
        inputs={"fail-on-halt": "true"},
    )

    assert result.exit_code != 0, result.explain()
    assert result.outputs["reason"] == "not-a-failure", result.explain()


@pytest.mark.parametrize(("name", "value"), [("mode", "sometimes"), ("max-attempts", "lots")])
def test_an_invalid_input_fails_naming_the_input_as_written(
    image: str, tmp_path: Path, name: str, value: str
) -> None:
    # hyphenated names reach the entrypoint only because it is exec-form (dash drops them)
    result = run_like_runner(
        image,
        _empty_workspace(tmp_path),
        event_name="workflow_run",
        event=_minimal_run_event("failure"),
        inputs={name: value},
    )

    assert result.exit_code != 0, result.explain()
    assert f"`{name}`" in result.stdout + result.stderr, result.explain()
    assert value in result.stdout + result.stderr, result.explain()  # the value as received
    assert result.outputs["status"] == "error", result.explain()  # outputs even when the inputs are bad


# ---- a complete run of a flow -----------------------------------------------------------------------


def _runner_log(command: str, output: str) -> bytes:
    stamp = "2026-11-30T03:00:0{}.1234567Z "
    lines = [
        stamp.format(0) + "##[group]Run actions/checkout@v4",
        stamp.format(0) + "##[endgroup]",
        stamp.format(1) + f"##[group]Run {command}",
        stamp.format(1) + command,
        stamp.format(1) + "shell: /usr/bin/bash -e {0}",
        stamp.format(1) + "##[endgroup]",
        *(stamp.format(2) + line for line in output.splitlines()),
        stamp.format(3) + "##[error]Process completed with exit code 1.",
    ]
    return ("\n".join(lines) + "\n").encode()


def _seed_format_failure(emu: GitHubEmulator, tmp_path: Path) -> tuple[Path, Run, str]:
    """A repository whose CI failed on `ruff format --check .` on branch `feature`, with the real
    tool's output as the job's log."""
    source = tmp_path / "source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    (source / "pyproject.toml").write_text(
        '[project]\nname = "widgets"\nversion = "0.1.0"\n\n[tool.ruff]\nline-length = 100\n'
    )
    (source / ".github" / "workflows").mkdir(parents=True)
    (source / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - run: pip install ruff==0.17.6\n      - run: ruff format --check .\n"
    )
    (source / "widgets.py").write_text("PI = 3.14\n")
    author = ["-c", f"user.name={AUTHOR[0]}", "-c", f"user.email={AUTHOR[1]}"]
    git(source, "add", ".")
    git(source, *author, "commit", "-qm", "Start")
    git(source, "checkout", "-q", "-b", BRANCH)
    (source / "widgets.py").write_text(UNFORMATTED)
    git(source, "add", ".")
    git(source, *author, "commit", "-qm", "Add greet")
    sha = git(source, "rev-parse", "HEAD")
    check = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."],
        cwd=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 1, check.stdout + check.stderr
    emu.create_repo(REPO, source=source)
    emu.add_user(AUTHOR[0], "write", email=AUTHOR[1])
    steps = [
        StepSpec("Set up job"),
        StepSpec("Run actions/checkout@v4"),
        StepSpec("Run ruff format --check .", "failure"),
    ]
    run = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        BRANCH,
        sha,
        "failure",
        actor=AUTHOR[0],
        jobs=[
            JobSpec(
                "lint",
                "failure",
                steps,
                log=_runner_log("ruff format --check .", check.stdout + check.stderr),
            )
        ],
    )
    return source, run, sha


def _expected_format_diff(source: Path, tmp_path: Path) -> str:
    copy = tmp_path / "expected"
    git(tmp_path, "clone", "-q", "-b", BRANCH, str(source), str(copy))
    subprocess.run([sys.executable, "-m", "ruff", "format", "."], cwd=copy, check=True, capture_output=True)
    return git(copy, "diff")


def _propose_in_image(image: str, emu: GitHubEmulator, tmp_path: Path) -> tuple[ContainerRun, Run, str, str]:
    """The propose job: a failed run's event, the failing commit checked out, the image run as the runner does."""
    source, run, sha = _seed_format_failure(emu, tmp_path)
    expected_diff = _expected_format_diff(source, tmp_path)
    workspace = make_runner_checkout(source, tmp_path / "workspace", sha)
    with FakeMessagesAPI().start() as messages:
        result = run_like_runner(
            image,
            workspace,
            event_name="workflow_run",
            event=emu.workflow_run_event(run),
            inputs={"anthropic-api-key": "sk-ant-test-key"},
            github_token=emu.token,
            env={**_emulator_env(emu), "GITHUB_RUN_ID": "555", "ANTHROPIC_BASE_URL": messages.url},
        )
        # the deterministic fixer suffices: the model is never asked
        assert messages.message_requests == [], result.explain()
    assert "sk-ant-test-key" not in _unmasked(result), result.explain()
    return result, run, sha, expected_diff


def _check_proposed(
    emu: GitHubEmulator, result: ContainerRun, run: Run, sha: str, expected_diff: str
) -> None:
    assert result.exit_code == 0, result.explain()
    out = result.outputs
    assert out["status"] == "proposed", result.explain()
    assert out["fix-branch"] == f"ci-autofix/{BRANCH}/{run.id}", result.explain()
    assert emu.branch_sha(REPO, out["fix-branch"]) == out["fix-sha"]
    bare = emu.bare_path(REPO)
    assert git(bare, "rev-parse", f"{out['fix-sha']}^") == sha
    assert git(bare, "diff", sha, out["fix-sha"]) == expected_diff
    assert emu.branch_sha(REPO, BRANCH) == sha  # nothing lands before a human approves
    pulls = emu.pulls(REPO)
    assert len(pulls) == 1
    assert out["pull-request"] == str(pulls[0].number), result.explain()
    assert pulls[0].base_ref == BRANCH
    users, _teams = emu.review_requests(REPO, pulls[0].number)
    assert AUTHOR[0] in users
    assert "ci-autofix" in emu.labels(REPO, pulls[0].number)
    assert "widgets.py" in result.summary, result.explain()
    assert "+PI = 3.14" in result.summary, result.explain()  # the diff is shown
    assert f"pull/{pulls[0].number}" in result.summary, result.explain()
    # the fix was checked by re-running the failing command in the container
    assert json.loads(out["result-json"])["details"]["verification"] == "verified", result.explain()
    assert emu.token not in _unmasked(result), result.explain()


def _apply_in_image(image: str, emu: GitHubEmulator, tmp_path: Path, number: str) -> ContainerRun:
    """The apply job: `workflow_dispatch` of the apply workflow by a user with write access (after the
    approval), no checkout."""
    workspace = tmp_path / "apply-workspace"
    workspace.mkdir()
    os.chown(workspace, RUNNER_UID, RUNNER_UID)
    event = emu.workflow_dispatch_event(
        REPO, ".github/workflows/ci-autofix-apply.yml", "main", {"pull-request": number}
    )
    return run_like_runner(
        image,
        workspace,
        event_name="workflow_dispatch",
        event=event,
        inputs={"pull-request": number},
        github_token=emu.token,
        env={
            **_emulator_env(emu),
            "GITHUB_RUN_ID": "556",
            "GITHUB_ACTOR": AUTHOR[0],
            "GITHUB_TRIGGERING_ACTOR": AUTHOR[0],
        },
    )


@pytest.mark.parametrize("flow", ["propose", "apply"])
def test_a_complete_flow_in_the_image(
    image: str, tmp_path: Path, github_emulator: GitHubEmulator, flow: str
) -> None:
    emu = github_emulator
    proposed, run, sha, expected_diff = _propose_in_image(image, emu, tmp_path)
    _check_proposed(emu, proposed, run, sha, expected_diff)
    if flow == "propose":
        return
    fix_sha, fix_branch, number = (proposed.outputs[k] for k in ("fix-sha", "fix-branch", "pull-request"))

    applied = _apply_in_image(image, emu, tmp_path, number)

    assert applied.exit_code == 0, applied.explain()
    assert applied.outputs["status"] == "applied", applied.explain()
    assert applied.outputs["head-sha"] == fix_sha, applied.explain()
    assert emu.branch_sha(REPO, BRANCH) == fix_sha  # the reviewed commit itself, fast-forwarded
    assert emu.branch_sha(REPO, fix_branch) is None
    assert emu.pull(REPO, int(number)).state == "closed"
    assert emu.token not in _unmasked(applied), applied.explain()


# ---- the agent rung in the image: the SDK, imported late, talks to the Messages fake ---------------


def test_the_agent_fixes_a_failing_test_in_the_image(
    image: str, tmp_path: Path, github_emulator: GitHubEmulator
) -> None:
    emu = github_emulator
    source = tmp_path / "source"
    ci = f"on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: {PYTEST}\n"
    files = {"calc.py": CALC_OK, "tests/test_calc.py": CALC_TEST, "requirements.txt": "pytest==9.2.0\n"}
    init_repo(source, {**files, ".github/workflows/ci.yml": ci})
    git(source, "checkout", "-q", "-b", BRANCH)
    head_sha = commit(source, {"calc.py": CALC_BROKEN}, "Refactor add")
    log = job_log(source, [PYTEST])
    assert b"1 failed" in log
    emu.create_repo(REPO, source=source)
    emu.add_user("alice", permission="write", email=ALICE[1])
    run = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        BRANCH,
        head_sha,
        "failure",
        actor="alice",
        jobs=[JobSpec("test", "failure", [StepSpec(f"Run {PYTEST}", "failure")], log=log)],
    )
    workspace = make_runner_checkout(source, tmp_path / "workspace", head_sha)

    with FakeMessagesAPI(fixing_turns()).start() as messages:
        result = run_like_runner(
            image,
            workspace,
            event_name="workflow_run",
            event=emu.workflow_run_event(run),
            inputs={"anthropic-api-key": API_KEY},
            github_token=emu.token,
            env={**_emulator_env(emu), "ANTHROPIC_BASE_URL": messages.url},
        )
        asked = len(messages.message_requests)
        sent = messages.everything_sent()

    assert result.exit_code == 0, result.explain()
    assert result.outputs["status"] == "proposed", result.explain()
    assert asked == 4, result.explain()  # the scripted session, turn by turn, through the real SDK
    assert emu.token not in sent
    fix_sha = result.outputs["fix-sha"]
    bare = emu.bare_path(REPO)
    assert git(bare, "show", f"{fix_sha}:calc.py") == CALC_OK.strip()
    assert git(bare, "rev-parse", f"{fix_sha}^") == head_sha
    # verification re-ran the failing pytest in the container, in an environment it set up itself
    assert json.loads(result.outputs["result-json"])["details"]["verification"] == "verified", (
        result.explain()
    )
    assert SUMMARY in emu.pull(REPO, int(result.outputs["pull-request"])).body
    assert result.outputs["cost-usd"], result.explain()
    assert API_KEY not in _unmasked(result), result.explain()
