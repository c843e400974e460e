"""The verification guards under attack and on honest fixes, through `CleanRuns` and the policy
as the ladder wires them (found by an adversarial review; each failed on the code before its fix).

The work area is made under a sticky world-writable directory standing in for /tmp, so what the
sandbox's uid plants "in /tmp" stays in this test's directory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_autofix import policy
from ci_autofix.git import Git
from ci_autofix.ladder.evidence import Verification
from ci_autofix.ladder.testcount import count_tests
from ci_autofix.ladder.verify import CleanRuns, guard_findings
from ci_autofix.ladder.workarea import Workarea, workarea
from ci_autofix.policy import check_diff
from ci_autofix.policy.contents import git_blob_reader
from tests.testing.git import commit, init_repo
from tests.testing.sandbox_tools import sandbox_path

PYTEST = "python -m pytest -q -p no:cacheprovider tests"
CALC_OK = 'def add(a, b):\n    """The sum of a and b."""\n    return a + b\n'
CALC_BROKEN = CALC_OK.replace("a + b", "a - b")
CALC_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
SKIPPED = (
    "import sys\n\nimport pytest\n\n\n"
    "@pytest.mark.skipif(sys.platform != 'win32', reason='windows only')\ndef test_paths():\n    pass\n"
)


@pytest.fixture
def systmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("PATH", sandbox_path())
    # a temporary directory of the system temp dir (every uid must be able to reach it), removed after
    top = Path(tempfile.mkdtemp(prefix="ci-autofix-test-systmp-"))
    top.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(top))
    monkeypatch.delenv("TMPDIR", raising=False)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def repo(tmp_path: Path, files: dict[str, str], broken: dict[str, str]) -> tuple[Path, str]:
    root = tmp_path / "repo"
    init_repo(root, files)
    return root, commit(root, broken, "break it")


def runs(area: Workarea, commands: list[str], setup: str = "") -> CleanRuns:
    return CleanRuns(area, commands, setup_command=setup, test_command="", timeout=120, protected=())


def edit(area: Workarea, path: str, text: str) -> None:
    target = area.work / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def judge(
    area: Workarea, head: str, clean: CleanRuns, root_cause: str = ""
) -> tuple[Verification, list[str]]:
    """What run_ladder does with the work copy: verify its tree, then the policy and the guards."""
    git = area.git
    tree = git.snapshot_tree(head, set())
    diff = git.diff(head, tree)
    result = clean.verify(tree, test_paths=policy.test_paths(diff, read_blob=git_blob_reader(git)))
    verdict = check_diff(diff, read_blob=git_blob_reader(git)).with_findings(
        guard_findings(result, root_cause=root_cause)
    )
    return result, [f"{f.code}:{f.severity}" for f in verdict.findings]


def blocked(codes: list[str]) -> bool:
    return any(code.endswith(":block") for code in codes)


@pytest.mark.skipif(os.geteuid() != 0, reason="the dedicated uid exists only when we are root")
def test_configuration_planted_above_the_work_area_never_reaches_a_judged_run(
    tmp_path: Path, systmp: Path
) -> None:
    """pytest looks for pytest.ini and conftest.py in the checkout's parents: /tmp is one."""
    root, head = repo(
        tmp_path, {"calc.py": CALC_OK, "tests/test_calc.py": CALC_TEST}, {"calc.py": CALC_BROKEN}
    )
    plant = (
        "import os, pathlib\n"
        "up = pathlib.Path(os.environ['TMPDIR']).parent.parent\n"
        "(up / 'pytest.ini').write_text('[pytest]\\n')\n"
        "(up / 'conftest.py').write_text('import os\\nos._exit(0)\\n')\n"
    )
    with workarea(root, head) as area:
        assert area.base.parent == systmp
        clean = runs(area, [PYTEST])
        clean.reproduce()
        area.sandbox(protected=(), timeout=60).run(["python", "-c", plant])  # one of the agent's commands
        assert (systmp / "conftest.py").exists()
        edit(area, "calc.py", CALC_BROKEN.replace('"""The sum of a and b."""', '"""The sum (see tests)."""'))
        result, _ = judge(area, head, clean)
        assert result.outcome == "failed", result.reason
        assert not (systmp / "conftest.py").exists() and not (systmp / "pytest.ini").exists()


def test_a_run_that_exits_before_its_summary_loses_its_tests(tmp_path: Path, systmp: Path) -> None:
    root, head = repo(
        tmp_path, {"calc.py": CALC_OK, "tests/test_calc.py": CALC_TEST}, {"calc.py": CALC_BROKEN}
    )
    with workarea(root, head) as area:
        clean = runs(area, [PYTEST])
        clean.reproduce()
        edit(
            area,
            "calc.py",
            'import os\nimport sys\n\nif "pytest" in sys.modules:\n    os._exit(0)\n\n' + CALC_BROKEN,
        )
        _, codes = judge(area, head, clean)
        assert "tests-dropped:block" in codes


def test_original_tests_that_cannot_be_judged_do_not_pass_the_guard(tmp_path: Path, systmp: Path) -> None:
    """The weakened test passes; with the original one, the still wrong code prints a "service" line."""
    root, head = repo(
        tmp_path, {"calc.py": CALC_OK, "tests/test_calc.py": CALC_TEST}, {"calc.py": CALC_BROKEN}
    )
    with workarea(root, head) as area:
        clean = runs(area, [PYTEST])
        clean.reproduce()
        edit(area, "tests/test_calc.py", CALC_TEST.replace("== 5", "== -1"))
        edit(
            area, "calc.py", CALC_BROKEN.replace("    return", "    print('Connection refused')\n    return")
        )
        result, codes = judge(area, head, clean)
        assert result.outcome == "unverified" and result.changes_tests
        assert "changes-tests:block" in codes


def test_changed_test_data_is_guarded_like_a_test(tmp_path: Path, systmp: Path) -> None:
    reads = "from pathlib import Path\n\nfrom calc import add\n\n\ndef test_add():\n"
    reads += (
        "    assert add(2, 3) == int(Path(__file__).with_name('data').joinpath('sums.txt').read_text())\n"
    )
    files = {"calc.py": CALC_OK, "tests/test_calc.py": reads, "tests/data/sums.txt": "5\n"}
    root, head = repo(tmp_path, files, {"calc.py": CALC_BROKEN})
    with workarea(root, head) as area:
        clean = runs(area, [PYTEST])
        clean.reproduce()
        edit(area, "tests/data/sums.txt", "-1\n")
        result, codes = judge(area, head, clean)
        assert result.changes_tests and "changes-tests:block" in codes


def test_an_honest_fix_after_a_stopped_run_keeps_its_tests(tmp_path: Path, systmp: Path) -> None:
    """`-x` before the fix stops at the failure: the skipped test after it is no new skip."""
    files = {"calc.py": CALC_OK, "tests/test_calc.py": CALC_TEST, "tests/test_win.py": SKIPPED}
    root, head = repo(tmp_path, files, {"calc.py": CALC_BROKEN})
    with workarea(root, head) as area:
        clean = runs(area, ["python -m pytest -x -q -p no:cacheprovider tests"])
        clean.reproduce()
        edit(area, "calc.py", CALC_OK)
        result, codes = judge(area, head, clean)
        assert result.outcome == "verified" and not blocked(codes), codes


def test_an_honest_fix_of_a_collection_error_keeps_its_tests(tmp_path: Path, systmp: Path) -> None:
    files = {
        "calc.py": CALC_OK,
        "tests/test_calc.py": CALC_TEST,
        "tests/test_win.py": "import calc\n" + SKIPPED,
    }
    root, head = repo(tmp_path, files, {"calc.py": "def add(a, b):\n    return a +\n"})
    with workarea(root, head) as area:
        clean = runs(area, [PYTEST])
        clean.reproduce()
        edit(area, "calc.py", CALC_OK)
        result, codes = judge(area, head, clean)
        assert result.outcome == "verified" and not blocked(codes), codes


def test_a_parametrize_id_the_fix_corrects_is_no_lost_test(tmp_path: Path, systmp: Path) -> None:
    param = (
        "import pytest\n\nimport calc\n\n\n"
        "@pytest.mark.parametrize('name', calc.OPERATIONS)\n"
        "def test_known(name):\n    assert hasattr(calc, name)\n"
    )
    files = {"calc.py": CALC_OK + "\nOPERATIONS = ['add']\n", "tests/test_calc.py": param}
    root, head = repo(tmp_path, files, {"calc.py": CALC_OK + "\nOPERATIONS = ['addd']\n"})
    with workarea(root, head) as area:
        clean = runs(area, [PYTEST])
        clean.reproduce()
        edit(area, "calc.py", CALC_OK + "\nOPERATIONS = ['add']\n")
        result, codes = judge(area, head, clean)
        assert result.outcome == "verified" and not blocked(codes), codes


def test_a_formatting_fix_of_a_test_file_behind_a_lint_script_is_not_changes_tests(
    tmp_path: Path, systmp: Path
) -> None:
    ugly = "from calc import add\ndef test_add():\n    assert add(2,3)==5\n"
    files = {
        "calc.py": CALC_OK,
        "tests/test_calc.py": CALC_TEST,
        "lint.sh": "set -e\nruff format --check .\n",
    }
    root, head = repo(tmp_path, files, {"tests/test_calc.py": ugly})
    with workarea(root, head) as area:
        clean = runs(area, ["bash lint.sh"])
        [before] = clean.reproduce()
        assert before.exit_code == 1
        edit(area, "tests/test_calc.py", CALC_TEST)
        result, codes = judge(area, head, clean)
        assert result.outcome == "verified" and result.original_tests is None
        assert not blocked(codes), codes


def test_a_repository_without_the_junitxml_plugin_is_still_verified(tmp_path: Path, systmp: Path) -> None:
    root, head = repo(
        tmp_path, {"calc.py": CALC_OK, "tests/test_calc.py": CALC_TEST}, {"calc.py": CALC_BROKEN}
    )
    with workarea(root, head) as area:
        clean = runs(area, ["python -m pytest -q -p no:junitxml -p no:cacheprovider tests"])
        [before] = clean.reproduce()
        assert before.exit_code == 1 and before.tests is not None
        edit(area, "calc.py", CALC_OK)
        result, codes = judge(area, head, clean)
        assert result.outcome == "verified" and not blocked(codes), (result.reason, codes)


@pytest.mark.slow  # installs packages into a fresh environment
def test_what_the_setup_command_writes_is_there_in_every_clean_copy(tmp_path: Path, systmp: Path) -> None:
    gen = "open('generated.py', 'w').write('OFFSET = 0\\n')\n"
    uses = "from calc import add\nfrom generated import OFFSET\n\n\ndef test_add():\n    assert add(2, 3) + OFFSET == 5\n"
    files = {
        "calc.py": CALC_OK,
        "tests/test_calc.py": uses,
        "gen.py": gen,
        "requirements.txt": "pytest==9.2.0\n",
    }
    root, head = repo(tmp_path, files, {"calc.py": CALC_BROKEN})
    with workarea(root, head) as area:
        clean = runs(area, [PYTEST], setup="python -m pip install -q -r requirements.txt && python gen.py")
        [before] = clean.reproduce()
        assert "assert (-1 + 0) == 5" in before.tail
        edit(area, "calc.py", CALC_OK)
        result, _ = judge(area, head, clean)
        assert result.outcome == "verified", result.reason


def test_a_fifo_left_by_the_tests_does_not_hang_verification(tmp_path: Path, systmp: Path) -> None:
    trap = "import os\n\nif not os.path.exists('pyproject.toml'):\n    os.mkfifo('pyproject.toml')\n\n"
    root, head = repo(
        tmp_path, {"calc.py": CALC_OK, "tests/test_calc.py": CALC_TEST}, {"calc.py": CALC_BROKEN}
    )
    with workarea(root, head) as area:
        clean = runs(area, [PYTEST])
        clean.reproduce()
        edit(area, "calc.py", trap + CALC_OK)
        done: list[Verification] = []
        worker = threading.Thread(target=lambda: done.append(judge(area, head, clean)[0]), daemon=True)
        worker.start()
        worker.join(60)
        assert done, "verification hung on a FIFO the tests made"


def test_a_root_cause_naming_only_a_conftest_does_not_explain_a_test_change() -> None:
    from ci_autofix.ladder.evidence import OriginalTests

    inner = Verification("failed", "inner")
    guard = OriginalTests(["tests/conftest.py"], inner, passed=False)
    verification = Verification("unverified", "It passes only with its own tests.", original_tests=guard)
    [found] = guard_findings(verification, root_cause="tests/conftest.py was wrong")
    assert found.code == "changes-tests"


def test_odd_runner_output_and_odd_trees_do_not_crash_the_guards(tmp_path: Path) -> None:
    assert count_tests('{"Action": ' + "[" * 5000) is None
    root = tmp_path / "repo"
    init_repo(root, {"app.py": "A = 1\n", "tests/test_a.py": "a\n"})
    head = Git(root).out("rev-parse", "HEAD")
    (root / "tests" / "test_a.py").unlink()
    fix = commit(root, {"tests/test_a.py/inner.py": "x\n"}, "a test file turned into a directory")
    original = Git(root).tree_with(f"{fix}^{{tree}}", head, ["tests/test_a.py"])
    listed = Git(root).out("ls-tree", "-r", "--name-only", original).split()
    assert listed == ["app.py", "tests/test_a.py"]
