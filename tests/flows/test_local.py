"""The local flow (`flows.local.fix`) in this process, on a real checkout and the real log of its
failing `ruff format --check .`: the fix lands on a new branch whose parent is HEAD, by the
identity the checkout commits with (else the Action's bot); the working tree, the index and the
current branch stay as they were; a branch the fix cannot take, or a directory that is no checkout,
is refused before any work. (`ci-autofix fix` as a subprocess: tests/flows/local/test_cli.py.)"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from ci_autofix.cli.demo import job_log
from ci_autofix.errors import UserError
from ci_autofix.flows.local import fix
from ci_autofix.git import BOT_EMAIL, BOT_NAME
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from tests.testing.git import git, init_repo

BROKEN = {"pyproject.toml": "[tool.ruff]\nline-length = 100\n", "app.py": "def f( x ):\n    return x*2\n"}
FIXED = "def f(x):\n    return x * 2"


class Checkout:
    def __init__(self, root: Path) -> None:
        self.repo = root / "repo"
        self.head = init_repo(self.repo, BROKEN)
        self.log = job_log(self.repo, ["ruff format --check ."])
        self.out = io.StringIO()

    def fix(self, branch: str | None = None) -> tuple[str, str]:
        """The local fix onto `branch`: (its commit, the branch)."""
        runner = Runner(in_actions=False, stream=self.out)
        proposal, name = fix(
            self.repo, self.log, Settings(fixers=["auto"], command_timeout=120), runner, branch=branch
        )
        return proposal.fix_sha, name

    def branches(self) -> str:
        return git(self.repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/")


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Checkout:
    """ruff is this interpreter's; HOME is the test's own (no global git identity)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return Checkout(tmp_path)


def test_the_fix_is_a_new_branch_on_head_and_nothing_else_moves(checkout: Checkout) -> None:
    repo = checkout.repo
    (repo / "notes.txt").write_text("my uncommitted work\n")
    git(repo, "add", "notes.txt")
    status = git(repo, "status", "--porcelain")
    sha, branch = checkout.fix("autofix/format")
    assert branch == "autofix/format"
    assert git(repo, "rev-parse", "refs/heads/autofix/format") == sha
    assert git(repo, "rev-parse", f"{sha}^") == checkout.head
    assert git(repo, "show", f"{sha}:app.py") == FIXED
    assert git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", sha) == "app.py"
    assert (git(repo, "symbolic-ref", "--short", "HEAD"), git(repo, "rev-parse", "HEAD")) == (
        "main",
        checkout.head,
    )
    assert git(repo, "status", "--porcelain") == status
    assert (repo / "app.py").read_text() == BROKEN["app.py"]
    assert "uncommitted changes" in checkout.out.getvalue()
    assert git(repo, "log", "-1", "--format=%an <%ae>", sha) == f"{BOT_NAME} <{BOT_EMAIL}>"


def test_without_a_branch_name_the_fix_gets_a_fresh_one_under_the_prefix(checkout: Checkout) -> None:
    sha, branch = checkout.fix()
    assert branch.startswith("ci-autofix/main/local-")
    assert git(checkout.repo, "rev-parse", f"refs/heads/{branch}") == sha


def test_the_commit_is_by_the_identity_the_checkout_commits_with(checkout: Checkout) -> None:
    git(checkout.repo, "config", "user.name", "Ada Lovelace")
    git(checkout.repo, "config", "user.email", "ada@example.com")
    sha, _ = checkout.fix("autofix/format")
    assert git(checkout.repo, "log", "-1", "--format=%an <%ae>", sha) == "Ada Lovelace <ada@example.com>"


@pytest.mark.parametrize(
    ("name", "cause", "remedy"),
    [
        ("main", "main is the branch checked out in", "Pass a new branch name with --branch"),
        ("a..b", "`a..b` is not a valid git branch name.", "check-ref-format"),
        ("ci-autofix/main/earlier", "A branch named ci-autofix/main/earlier already exists", "branch -D"),
        ("mine", "A branch named mine already exists", "Pass a new branch name with --branch"),
        ("ci-autofix/main/earlier/x", "A branch named ci-autofix/main/earlier exists", "outside"),
    ],
)
def test_a_branch_the_fix_cannot_take_is_refused_before_any_work(
    checkout: Checkout, name: str, cause: str, remedy: str
) -> None:
    git(checkout.repo, "branch", "ci-autofix/main/earlier")
    git(checkout.repo, "branch", "mine")
    before = checkout.branches()
    with pytest.raises(UserError) as raised:
        checkout.fix(name)
    assert cause in raised.value.cause
    assert remedy in raised.value.remedy
    assert ("branch -D" in raised.value.remedy) == (name == "ci-autofix/main/earlier")  # only for a fix's
    assert checkout.branches() == before
    assert checkout.out.getvalue() == ""  # nothing ran: not even triage


def test_a_directory_that_is_no_checkout_is_a_clear_error(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    runner = Runner(in_actions=False, stream=io.StringIO())
    for where, said in [
        (plain, "is not a git repository"),
        (tmp_path / "missing", "does not exist"),
    ]:
        with pytest.raises(UserError) as raised:
            fix(where, b"", Settings(fixers=["auto"]), runner)
        assert said in raised.value.cause
        assert "--repo" in raised.value.remedy


CACHED_WORKFLOW = """\
on: push
env:
  BUILD_CACHE_KEY: ${{ github.sha }}
  CACHED_BUILD_PATHS: |
    ${{ github.workspace }}/dist-serverless
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ruff format --check src
"""


def test_a_step_whose_env_names_the_run_is_replayed_with_its_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sentry-python: the workflow's `env:` uses `${{ github.sha }}` and `${{ github.workspace }}`;
    # the step is replayed with their values, so the fixer keeps to the step's paths and leaves
    # alone a file the step does not check
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    repo = tmp_path / "repo"
    files = {
        "pyproject.toml": "[tool.ruff]\n",
        "src/app.py": BROKEN["app.py"],
        "scripts/build.py": "x = {  'a':1 }\n",  # unformatted too, outside the step's paths
        ".github/workflows/ci.yml": CACHED_WORKFLOW,
    }
    head = init_repo(repo, files)
    log = job_log(repo, ["ruff format --check src"])
    out = io.StringIO()
    settings = Settings(fixers=["auto"], command_timeout=120)
    proposal, _name = fix(repo, log, settings, Runner(in_actions=False, stream=out), branch="fix")
    [command] = proposal.commands
    assert command == (  # the checkout's directory is the copy the step runs in
        'export GITHUB_WORKSPACE="$PWD"\n'
        f"export BUILD_CACHE_KEY={head}\n"
        "export CACHED_BUILD_PATHS=\"$GITHUB_WORKSPACE\"'/dist-serverless\n'\n"
        "ruff format --check src"
    )
    assert git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", proposal.fix_sha) == "src/app.py"
    assert proposal.verification is not None and proposal.verification.outcome == "verified", out.getvalue()
