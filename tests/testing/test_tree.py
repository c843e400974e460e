"""The test tree: one package, so every test module is imported by its path, and the lanes of
`tests/conftest.py` put every test that runs a flow end to end in the `e2e` lane."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# What an end-to-end test does: our entrypoint in a subprocess, laid out like the runner or as a user
# runs it, or a flow against the GitHub emulator or the Messages fake.
RUNS_A_FLOW = re.compile(
    r'"-m", "ci_autofix|RunnerSim\(|BIN / "ci-autofix"|propose_in_process\(|messages_process\('
    r"|github_emulator|messages_api"
)
E2E_BY_PLACE = ("cli", "container", "security")


def _e2e_by_conftest(path: Path, text: str) -> bool:
    """Whether `tests/conftest.py` (or the module itself) puts the module's tests in the e2e lane."""
    parts = path.relative_to(TESTS).parts
    in_a_flow = parts[0] == "flows" and len(parts) > 2
    uses_a_double = "github_emulator" in text or "messages_api" in text  # the fixtures mark each test
    return in_a_flow or parts[0] in E2E_BY_PLACE or uses_a_double or "pytest.mark.e2e" in text


def test_every_folder_of_tests_is_a_package() -> None:
    """pytest imports a test file by its package's dotted name (`tests.fixers.test_run`) when every
    folder above it is a package (has an `__init__.py`); a folder without one makes its files
    top-level modules, and two files of one name in two such folders clash."""
    folders = {path.parent for path in TESTS.rglob("*.py")} - {
        path.parent for path in TESTS.rglob("__init__.py")
    }
    assert sorted(str(folder.relative_to(TESTS)) for folder in folders) == ["ladder/outputs"]


def test_every_module_that_runs_a_flow_end_to_end_is_in_the_e2e_lane() -> None:
    unmarked = [
        str(path.relative_to(TESTS))
        for path in sorted(TESTS.rglob("test_*.py"))
        if path.parent != Path(__file__).parent  # this folder's own tests name the signals
        and RUNS_A_FLOW.search(text := path.read_text(encoding="utf-8"))
        and not _e2e_by_conftest(path, text)
    ]
    assert unmarked == []


def test_the_lane_check_finds_an_unmarked_module() -> None:
    planted = TESTS / "ladder" / "test_planted.py"
    text = 'subprocess.run([sys.executable, "-m", "ci_autofix", "fix"])\n'
    assert RUNS_A_FLOW.search(text) and not _e2e_by_conftest(planted, text)
    assert _e2e_by_conftest(TESTS / "flows" / "propose" / "test_planted.py", text)
    assert _e2e_by_conftest(planted, "pytestmark = pytest.mark.e2e\n" + text)


def test_the_unit_loop_leaves_out_every_test_that_installs_real_tools() -> None:
    """`pytest -m "not e2e"` is the unit loop: a `slow` test (it installs packages or runtimes) is in
    the e2e lane too, wherever it is."""
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", "not e2e",
         "tests/ladder/test_verify.py", "tests/toolchains/test_sources.py"],
        cwd=TESTS.parent, capture_output=True, text=True, check=False,
    )  # fmt: skip
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    assert ids and all(line.startswith("tests/ladder/test_verify.py::") for line in ids), collected.stdout
    slow = "tests/ladder/test_verify.py::test_default_setup_creates_a_venv_outside_the_workspace_once"
    assert slow not in ids
