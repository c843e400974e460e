"""`ci-autofix fix` refuses, before any stage runs, what would make it fail at the end: a checkout
whose `.git` it cannot write, a branch name that is taken (the checked-out branch above all), a
directory that is no repository or one without a commit, a bad setting or environment value.
Every message names the flag, never the Action's `with:`; all through the real entrypoint."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from ci_autofix.cli.demo import job_log
from tests.cli.test_mistakes import BIN, BROKEN, TRACEBACK, a_failing_checkout, assert_told, ci_autofix
from tests.testing.git import git, init, init_repo

# Root writes through any file mode: as root, `.git` is made read-only by a read-only bind mount
# in a mount namespace of the command's own (the machine's mounts are untouched).
READ_ONLY_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def assert_before_any_stage(stderr: str) -> None:
    assert "triage" not in stderr and "fixers" not in stderr, stderr


# ---- a checkout it cannot write ------------------------------------------------------------------
def _in_namespace(read_only: Path, argv: list[str]) -> list[str]:
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        READ_ONLY_MOUNT,
        "sh",
        str(read_only),
        *argv,
    ]


def _can_mount(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    probe.mkdir()
    try:
        done = subprocess.run(_in_namespace(probe, ["true"]), capture_output=True, timeout=30, check=False)
    except OSError:
        return False
    return done.returncode == 0


def _chmod_tree(path: Path, *, writable: bool) -> None:
    for entry in [path, *path.rglob("*")]:
        if not entry.is_symlink():
            mode = stat.S_IMODE(entry.stat().st_mode)
            entry.chmod(mode | 0o200 if writable else mode & ~0o222)


def test_a_checkout_it_cannot_write_is_refused_before_any_work(tmp_path: Path) -> None:
    repo, log, head = a_failing_checkout(tmp_path)
    argv = [str(BIN / "ci-autofix"), "fix", str(log), "--repo", str(repo), "--fixers", "ruff-format"]
    as_root = os.geteuid() == 0
    if as_root:
        if not _can_mount(tmp_path):
            pytest.skip("as root, needs unshare and mount to make a read-only checkout")
        argv = _in_namespace(repo / ".git", argv)
    else:
        _chmod_tree(repo / ".git", writable=False)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "INPUT_", "GITHUB_", "GIT_"))
    }
    env.update({"HOME": str(tmp_path), "PATH": f"{BIN}{os.pathsep}{env['PATH']}"})
    try:
        done = subprocess.run(
            argv, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300, check=False
        )
    finally:
        if not as_root:
            _chmod_tree(repo / ".git", writable=True)
    assert TRACEBACK not in done.stderr, done.stderr
    assert done.returncode == 2, done.stderr
    assert f"Cannot write the fix branch into {repo / '.git'}" in done.stderr
    assert "What to do:" in done.stderr and "write access" in done.stderr
    assert_before_any_stage(done.stderr)
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "branch", "--list") == "* main"


# ---- the branch -----------------------------------------------------------------------------------
def test_the_checked_out_branch_is_refused_without_advice_to_delete_it(tmp_path: Path) -> None:
    repo, log, head = a_failing_checkout(tmp_path)
    result = ci_autofix("fix", str(log), "--repo", str(repo), "--branch", "main", cwd=tmp_path)
    assert_told(result, 2, "main is the branch checked out in")
    assert "branch -D" not in result.stderr and "delete" not in result.stderr
    assert "--branch" in result.stderr
    assert_before_any_stage(result.stderr)
    assert git(repo, "rev-parse", "main") == head


def test_a_branch_of_yours_is_never_advised_deleted(tmp_path: Path) -> None:
    repo, log, _ = a_failing_checkout(tmp_path)
    git(repo, "branch", "feature")
    result = ci_autofix("fix", str(log), "--repo", str(repo), "--branch", "feature", cwd=tmp_path)
    assert_told(result, 2, "A branch named feature already exists")
    assert "branch -D" not in result.stderr
    assert_before_any_stage(result.stderr)


def test_an_earlier_fix_branch_may_be_deleted(tmp_path: Path) -> None:
    repo, log, _ = a_failing_checkout(tmp_path)
    git(repo, "branch", "ci-autofix/main/local-1")
    result = ci_autofix(
        "fix", str(log), "--repo", str(repo), "--branch", "ci-autofix/main/local-1", cwd=tmp_path
    )
    assert_told(result, 2, "A branch named ci-autofix/main/local-1 already exists")
    assert f"git -C {repo} branch -D ci-autofix/main/local-1" in result.stderr


def test_a_branch_named_like_the_prefix_is_found_before_any_work(tmp_path: Path) -> None:
    """A branch `ci-autofix` keeps git from creating `ci-autofix/main/local-...` (a ref is a file,
    its prefix would be a folder): said at the start, with the flag that avoids it."""
    repo, log, _ = a_failing_checkout(tmp_path)
    git(repo, "branch", "ci-autofix")
    result = ci_autofix("fix", str(log), "--repo", str(repo), "--fixers", "ruff-format", cwd=tmp_path)
    assert_told(result, 2, "A branch named ci-autofix exists")
    assert "--branch-prefix" in result.stderr
    assert_before_any_stage(result.stderr)


def test_a_name_that_is_a_folder_of_branches(tmp_path: Path) -> None:
    repo, log, _ = a_failing_checkout(tmp_path)
    git(repo, "branch", "team/one")
    result = ci_autofix("fix", str(log), "--repo", str(repo), "--branch", "team", cwd=tmp_path)
    assert_told(result, 2, "Branches named team/... exist")
    assert_before_any_stage(result.stderr)


# ---- not a repository, or one without a commit ------------------------------------------------------
def test_a_directory_that_is_no_repository(tmp_path: Path) -> None:
    _, log, _ = a_failing_checkout(tmp_path)
    (tmp_path / "plain").mkdir()
    result = ci_autofix("fix", str(log), "--repo", str(tmp_path / "plain"), cwd=tmp_path)
    assert_told(result, 2, f"{tmp_path / 'plain'} is not a git repository")
    assert "no commit" not in result.stderr


def test_a_repository_without_a_commit(tmp_path: Path) -> None:
    _, log, _ = a_failing_checkout(tmp_path)
    init(tmp_path / "fresh", branch="main")
    result = ci_autofix("fix", str(log), "--repo", str(tmp_path / "fresh"), cwd=tmp_path)
    assert_told(result, 2, f"The repository {tmp_path / 'fresh'} has no commit yet")
    assert "git commit" in result.stderr
    assert "not a git repository" not in result.stderr


# ---- settings and environment values, at start-up, in the words of a local run ------------------
@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--max-minutes", "0", "`--max-minutes` (got 0.0): Input should be greater than 0"),
        ("--max-turns", "500", "`--max-turns` (got 500): Input should be less than or equal to 200"),
        ("--branch-prefix", "a..b", "`--branch-prefix`"),
        ("--fixers", "prettyfier", "`--fixers`"),
    ],
)
def test_a_bad_flag_value_names_the_flag_not_the_workflow(
    tmp_path: Path, flag: str, value: str, said: str
) -> None:
    repo, log, _ = a_failing_checkout(tmp_path)
    result = ci_autofix("fix", str(log), "--repo", str(repo), flag, value, cwd=tmp_path)
    assert_told(result, 2, said)
    assert "with:" not in result.stderr and "input `" not in result.stderr
    assert "ci-autofix fix --help" in result.stderr


@pytest.mark.parametrize("prices", ["nope", "[1, 2]", '{"claude-x": {"input": -1, "output": 3}}'])
def test_a_bad_price_table_is_reported_before_any_work(tmp_path: Path, prices: str) -> None:
    repo, log, _ = a_failing_checkout(tmp_path)
    result = ci_autofix(
        "fix",
        str(log),
        "--repo",
        str(repo),
        "--fixers",
        "ruff-format",
        cwd=tmp_path,
        env={"CI_AUTOFIX_PRICES": prices},
    )
    assert_told(result, 2, "CI_AUTOFIX_PRICES is not a valid price table")
    assert_before_any_stage(result.stderr)
    assert git(repo, "branch", "--list") == "* main"


# ---- the ladder's words, locally ------------------------------------------------------------------
def test_a_halt_names_the_flag_that_caused_it(tmp_path: Path) -> None:
    """No workflow runs the failing command, so the fix cannot be verified here: with
    `--require-verified` the halt says so, naming the flag (the ladder words it as the input)."""
    repo, log, _ = a_failing_checkout(tmp_path)
    result = ci_autofix(
        "fix", str(log), "--repo", str(repo), "--fixers", "ruff-format", "--require-verified", cwd=tmp_path
    )
    assert result.returncode == 3, result.stderr
    assert "halted (unverified-fix)" in result.stderr
    assert "`--require-verified` is on" in result.stderr
    assert "`require-verified`" not in result.stderr


def test_a_setup_that_fails_is_shown_with_the_flag_to_replace_it(tmp_path: Path) -> None:
    """The project cannot be installed by the default setup (its build backend does not exist), so
    the test command cannot run: the report shows the setup command, the end of its output and
    `--setup-command`."""
    repo = tmp_path / "repo"
    workflow = "on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ruff format --check .\n"
    pyproject = (
        '[build-system]\nrequires = []\nbuild-backend = "no_such_backend"\n\n'
        '[project]\nname = "app"\nversion = "0"\n\n[tool.ruff]\nline-length = 100\n'
    )
    init_repo(repo, {**BROKEN, "pyproject.toml": pyproject, ".github/workflows/ci.yml": workflow})
    (tmp_path / "ci.log").write_bytes(job_log(repo, ["ruff format --check ."]))
    result = ci_autofix(
        "fix", str(tmp_path / "ci.log"), "--repo", str(repo), "--test-command", "python -c pass", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr  # a fix, not verifiable here: the report says so
    assert "Verification: unverified (The environment could not be prepared" in result.stdout
    assert "  setup: pip install -e .: exit " in result.stdout
    assert "No module named 'no_such_backend'" in result.stdout  # pip's own error
    assert "pass its command with --setup-command" in result.stdout


def test_a_provider_whose_environment_is_missing_is_reported_before_any_work(tmp_path: Path) -> None:
    """`--provider vertex` needs its extra and `CLOUD_ML_REGION`: the agent would find out after the
    fixers ran; the command says so at start-up, in a local run's words."""
    repo, log, _ = a_failing_checkout(tmp_path)
    result = ci_autofix("fix", str(log), "--repo", str(repo), "--provider", "vertex", cwd=tmp_path)
    assert_told(result, 2, "The `vertex` provider needs")
    assert_before_any_stage(result.stderr)
    assert "step's" not in result.stderr and "Build an image" not in result.stderr
