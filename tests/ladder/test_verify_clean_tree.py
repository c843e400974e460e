"""Judged runs happen on clean trees: exactly one git tree, a fresh HOME, an environment no
test run can change; and the tree the original-tests guard runs is the fix with the failing
commit's test files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ci_autofix.git import Git
from ci_autofix.ladder.evidence import OriginalTests, Verification
from ci_autofix.ladder.verify import CleanRuns, guard_findings
from ci_autofix.ladder.workarea import Workarea, workarea
from tests.testing.git import commit, git, init_repo
from tests.testing.sandbox_tools import sandbox_path

SHOW = "python show.py"


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    init_repo(root, {"app.py": "VALUE = 1\n", "tests/test_app.py": "def test_x():\n    assert True\n"})
    head = commit(root, {"show.py": "import os\nprint(sorted(os.listdir('.')))\n"}, "show")
    return root, head


def clean_runs(area: Workarea, commands: list[str], setup: str = "") -> CleanRuns:
    return CleanRuns(area, commands, setup_command=setup, test_command="", timeout=120, protected=())


def test_a_clean_copy_holds_exactly_the_tree(
    checkout: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, head = checkout
    monkeypatch.setenv("PATH", sandbox_path())
    with workarea(root, head) as area:
        (area.work / "conftest.py").write_text("raise SystemExit('planted by a command')\n")  # untracked
        (area.work / "app.py").write_text("VALUE = 2\n")
        (area.home / ".config" / "planted").write_text("x")
        tree = area.git.snapshot_tree(head)
        first = area.clean_copy(tree, protected=(), timeout=60)
        (first.root / "left-by-a-run.txt").write_text("x")
        sandbox = area.clean_copy(tree, protected=(), timeout=60)
        assert sandbox.root == first.root  # the same path: an editable install stays valid
        listed = sandbox.run(["python", "show.py"]).output
        assert listed.strip() == "['.git', 'app.py', 'show.py', 'tests']"
        assert (sandbox.root / "app.py").read_text() == "VALUE = 2\n"
        assert sandbox.home is not None and not (sandbox.home / ".config" / "planted").exists()
        status = sandbox.run(["git", "status", "--porcelain"]).output
        assert status.strip() == "M app.py"  # the copy's own .git holds the failing commit
        if area.judge_uid is not None:  # judged runs have a uid of their own
            assert (sandbox.root.stat().st_uid, (sandbox.root / "app.py").stat().st_uid) == (
                area.judge_uid,
                area.judge_uid,
            )


@pytest.mark.skipif(os.geteuid() != 0, reason="the environment is sealed from the sandbox's uid only as root")
def test_no_test_run_can_change_the_environment_later_runs_use(
    checkout: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, head = checkout
    monkeypatch.setenv("PATH", sandbox_path())
    plant = (
        'python -c "import site, pathlib; '
        "pathlib.Path(site.getsitepackages()[0], 'planted.pth').write_text('import sys; sys.exit(0)')\""
    )
    probe = (
        'python -c "import site, os; print(site.getsitepackages()[0], os.listdir(site.getsitepackages()[0]))"'
    )
    head = commit(
        root, {"requirements.txt": "# nothing to install\n"}, "a Python project: it gets an environment"
    )
    with workarea(root, head) as area:
        runs = clean_runs(area, [plant, probe], setup="python -c pass")
        [planted, probed] = runs.reproduce()
        assert planted.exit_code not in (0, None) and "Permission denied" in planted.tail
        assert str(area.env_dir) in probed.tail and "planted.pth" not in probed.tail
        assert os.stat(area.env_dir).st_uid == os.geteuid()


def test_the_original_tests_tree_is_the_fix_with_the_failing_commits_test_files(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    init_repo(
        root,
        {
            "app.py": "A = 1\n",
            "tests/test_a.py": "a\n",
            "tests/test_gone.py": "gone\n",
            "tests/keep.py": "k\n",
        },
    )
    head = git(root, "rev-parse", "HEAD")
    (root / "tests" / "test_gone.py").unlink()
    fix = commit(
        root, {"app.py": "A = 2\n", "tests/test_a.py": "changed\n", "tests/conftest.py": "new\n"}, "fix"
    )
    ours = Git(root)
    original = ours.tree_with(
        f"{fix}^{{tree}}", head, ["tests/test_a.py", "tests/test_gone.py", "tests/conftest.py"]
    )
    files = git(root, "ls-tree", "-r", "--name-only", original).split()
    assert files == ["app.py", "tests/keep.py", "tests/test_a.py", "tests/test_gone.py"]
    assert git(root, "show", f"{original}:app.py") == "A = 2"  # the fixed source
    assert git(root, "show", f"{original}:tests/test_a.py") == "a"  # the failing commit's test


def _guard(passed: bool) -> Verification:
    inner = Verification("failed" if not passed else "verified", "inner")
    return Verification(
        "unverified",
        "It passes only with its own tests.",
        original_tests=OriginalTests(["tests/test_a.py"], inner, passed),
    )


def test_a_test_change_is_explained_only_by_a_root_cause_that_names_the_test() -> None:
    assert [f.code for f in guard_findings(_guard(False), root_cause="flaky")] == ["changes-tests"]
    assert [f.severity for f in guard_findings(_guard(False), root_cause="flaky")] == ["block"]
    explained = guard_findings(_guard(False), root_cause="test_a.py expected the old rounding")
    assert [(f.code, f.severity) for f in explained] == [("changes-tests-explained", "flag")]
    assert guard_findings(_guard(True), root_cause="") == []
    assert guard_findings(None) == []
