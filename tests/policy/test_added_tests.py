"""Trace & Verify writes a failing test first: the patch policy treats an added test as good,
never as a weakening, and still blocks the deletion of one (issue 17, part 5)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ci_autofix.policy import Verdict

Mode = str

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
REPRO = (
    "from calc import add\n\n\n"
    "def test_add_negative_numbers():\n    # reproduces the failure before the fix\n    assert add(-2, -3) == -5\n"
)
MORE = TESTS + "\n\ndef test_add_zero():\n    assert add(0, 7) == 7\n"


@pytest.mark.parametrize("mode", ["hunks", "contents"])
def test_a_fix_with_an_added_test_file_passes_the_policy(
    check_in: Callable[..., Verdict], mode: Mode
) -> None:
    before = {"calc.py": CALC, "tests/test_calc.py": TESTS}
    verdict = check_in(mode, before, {"calc.py": FIXED, "tests/test_repro.py": REPRO})
    assert verdict.status == "clean", verdict.findings


@pytest.mark.parametrize("mode", ["hunks", "contents"])
def test_a_fix_with_an_added_test_function_passes_the_policy(
    check_in: Callable[..., Verdict], mode: Mode
) -> None:
    before = {"calc.py": CALC, "tests/test_calc.py": TESTS}
    verdict = check_in(mode, before, {"calc.py": FIXED, "tests/test_calc.py": MORE})
    assert verdict.status == "clean", verdict.findings


@pytest.mark.parametrize("mode", ["hunks", "contents"])
def test_deleting_a_test_file_still_blocks(check_in: Callable[..., Verdict], mode: Mode) -> None:
    before = {"calc.py": CALC, "tests/test_calc.py": TESTS, "tests/test_repro.py": REPRO}
    verdict = check_in(mode, before, {"calc.py": FIXED, "tests/test_repro.py": None})
    assert verdict.blocked and "test-file-deleted" in {f.code for f in verdict.blocking}, verdict.findings


@pytest.mark.parametrize("mode", ["hunks", "contents"])
def test_deleting_a_test_function_still_blocks(check_in: Callable[..., Verdict], mode: Mode) -> None:
    before = {"calc.py": CALC, "tests/test_calc.py": MORE}
    verdict = check_in(mode, before, {"calc.py": FIXED, "tests/test_calc.py": TESTS})
    assert verdict.blocked and "test-removed" in {f.code for f in verdict.blocking}, verdict.findings
