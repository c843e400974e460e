"""The test-count reader and guard, on real runner output.

pytest, unittest and cargo run here, in tmp_path, on small projects; Go, Jest, Vitest, Maven,
mocha, RSpec, minitest, PHPUnit and Gradle outputs are real runs captured under `outputs/` (`outputs/make_outputs.py` made them) plus two
excerpts of real CI logs from the shared corpus (`outputs/NOTES.md`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from ci_autofix import shell
from ci_autofix.ladder.testcount import (
    MAX_REPORT_BYTES,
    PYTEST_REPORT,
    TestCount,
    count_tests,
    dropped,
    gradle_reports,
    pytest_report_env,
    ran_gradle,
    read_junit,
    read_report,
)

OUTPUTS = Path(__file__).parent / "outputs"
TIMEOUT = 120


def captured(name: str) -> str:
    return (OUTPUTS / name).read_text(encoding="utf-8")


def totals(count: TestCount | None) -> tuple[str, int, int, int, int, int]:
    assert count is not None
    return (count.runner, count.ran, count.passed, count.failed, count.skipped, count.deselected)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# --- pytest, run for real ------------------------------------------------------------------


def base_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


def pytest_run(
    project: Path, *args: str, tmp_path: Path, addopts: str | None = "-p no:cacheprovider"
) -> tuple[str, list[bytes]]:
    """Run real pytest on `project` with our report env; its output and the report it wrote."""
    reports = tmp_path / "reports"
    reports.mkdir(exist_ok=True)
    (reports / PYTEST_REPORT).unlink(missing_ok=True)
    env = {**base_env(tmp_path), **pytest_report_env(addopts, reports)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    report = read_report(reports)
    return done.stdout, [report] if report is not None else []


MIXED = """
import pytest

@pytest.fixture
def breaks_in_teardown():
    yield
    raise RuntimeError("teardown")

def test_pass(): pass
def test_fail(): assert 1 == 2
@pytest.mark.skip(reason="no")
def test_skip(): pass
@pytest.mark.xfail
def test_xfail(): assert 0
@pytest.mark.xfail
def test_xpass(): pass
def test_teardown(breaks_in_teardown): pass
@pytest.mark.parametrize("x", ["a b", "c::d"])
def test_param(x): pass
class TestK:
    def test_m(self): pass
def test_deselected(): pass
"""

MIXED_RAN = {
    "test_mixed::test_pass",
    "test_mixed::test_fail",
    "test_mixed::test_xpass",
    "test_mixed::test_teardown",
    "test_mixed::test_param[a b]",
    "test_mixed::test_param[c::d]",
    "test_mixed.TestK::test_m",
}


def test_pytest_summary_counts_every_kind(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"test_mixed.py": MIXED})
    output, _ = pytest_run(project, "--deselect", "test_mixed.py::test_deselected", tmp_path=tmp_path)
    assert "1 failed, 5 passed, 1 skipped, 1 deselected, 1 xfailed, 1 xpassed, 1 error in" in output
    count = count_tests(output)
    # a test that passed and then errored in teardown is counted twice by pytest's summary
    assert totals(count) == ("pytest", 8, 6, 2, 2, 1)
    assert count is not None and count.errors == 1
    # the default output lists only the failures: no ids
    assert count.ran_names is None


def test_pytest_quiet_summary_has_no_rule(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"test_mixed.py": MIXED})
    output, _ = pytest_run(project, "-q", "--deselect", "test_mixed.py::test_deselected", tmp_path=tmp_path)
    last = output.strip().splitlines()[-1]
    assert not last.startswith("=") and "1 deselected" in last
    assert totals(count_tests(output)) == ("pytest", 8, 6, 2, 2, 1)


def test_pytest_no_tests_ran(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"README": "nothing here\n"})
    output, reports = pytest_run(project, tmp_path=tmp_path)
    assert "no tests ran in" in output
    count = count_tests(output, reports)
    assert totals(count) == ("pytest", 0, 0, 0, 0, 0)
    assert count is not None and count.ran_names == frozenset()


def test_pytest_collect_only_is_not_a_run(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"test_a.py": "def test_a(): pass\n"})
    output, _ = pytest_run(project, "--collect-only", "-q", tmp_path=tmp_path)
    assert "1 test collected in" in output
    assert count_tests(output) is None


def test_pytest_report_and_verbose_output_give_the_same_ids(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"test_mixed.py": MIXED})
    deselect = ("--deselect", "test_mixed.py::test_deselected")
    output, reports = pytest_run(project, "-v", *deselect, tmp_path=tmp_path)
    from_output = count_tests(output)
    assert reports, "pytest wrote no report"
    from_report = read_junit(reports[0])
    assert from_output is not None and from_report is not None
    assert from_output.ran_names == from_report.ran_names == MIXED_RAN
    assert (
        from_output.skipped_names
        == from_report.skipped_names
        == {
            "test_mixed::test_skip",
            "test_mixed::test_xfail",
        }
    )
    # the report agrees with the summary: the summary's counts (with deselected), the report's ids
    quiet, reports = pytest_run(project, *deselect, tmp_path=tmp_path)
    both = count_tests(quiet, reports)
    assert totals(both) == ("pytest", 8, 6, 2, 2, 1)
    assert both is not None and both.ran_names == MIXED_RAN


def test_two_pytest_runs_in_one_command_are_summed(tmp_path: Path) -> None:
    project = write(
        tmp_path / "p",
        {
            "a/test_a.py": "def test_one(): pass\ndef test_two(): assert 0\n",
            "b/test_b.py": "import pytest\ndef test_three(): pass\n@pytest.mark.skip\ndef test_four(): pass\n",
        },
    )
    reports = tmp_path / "reports"
    reports.mkdir()
    env = {**base_env(tmp_path), **pytest_report_env("-p no:cacheprovider", reports)}
    python = sys.executable
    done = subprocess.run(
        ["sh", "-c", f"'{python}' -m pytest a; '{python}' -m pytest b"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    report = read_report(reports)
    assert report is not None
    # both runs wrote the same report: it holds the second run only
    assert totals(read_junit(report)) == ("pytest", 1, 1, 0, 1, 0)
    count = count_tests(done.stdout, [report])
    assert totals(count) == ("pytest", 3, 2, 1, 1, 0)
    assert count is not None and count.ran_names is None  # the report is not taken for both runs' ids


def test_sum_of_counts() -> None:
    a = TestCount("pytest", 2, 1, 1, 0, 1, frozenset({"a", "b"}), frozenset())
    b = TestCount("pytest", 1, 1, 0, 2, 0, frozenset({"c"}), frozenset({"d", "e"}))
    c = TestCount("go", 1, 1, 0, 0, 0)
    assert a + b == TestCount("pytest", 3, 2, 1, 2, 1, frozenset({"a", "b", "c"}), frozenset({"d", "e"}))
    total = a + b + c
    assert totals(total) == ("pytest+go", 4, 3, 1, 2, 1)
    assert total.ran_names is None  # go listed none: the union would not be every test


# --- dropped, on real pytest runs -----------------------------------------------------------

CALC = "def add(a, b):\n    return a {op} b\n"
CALC_TESTS = """
import pytest
from calc import add

def test_add():
    assert add(2, 3) == 5

def test_add_zero():
    assert add(2, 0) == 2

@pytest.mark.parametrize("a", [1, 2])
def test_add_one(a):
    assert add(a, 1) == a + 1
"""


def calc_project(
    root: Path, *, op: str, tests: str = CALC_TESTS, extra: dict[str, str] | None = None
) -> Path:
    return write(root, {"calc.py": CALC.format(op=op), "test_calc.py": tests, **(extra or {})})


def before_and_after(tmp_path: Path, after_tests: str, *, extra: dict[str, str] | None = None) -> str | None:
    before = count_tests(*pytest_run(calc_project(tmp_path / "before", op="*"), tmp_path=tmp_path))
    assert before is not None and before.failed > 0 and before.ran_names is not None
    after = count_tests(
        *pytest_run(
            calc_project(tmp_path / "after", op="+", tests=after_tests, extra=extra), tmp_path=tmp_path
        )
    )
    assert after is not None and after.failed == 0 and after.ran_names is not None
    return dropped(before, after)


def test_honest_fix_drops_nothing(tmp_path: Path) -> None:
    assert before_and_after(tmp_path, CALC_TESTS) is None


def test_fix_that_only_adds_tests_drops_nothing(tmp_path: Path) -> None:
    more = CALC_TESTS + "\ndef test_add_negative():\n    assert add(-1, 1) == 0\n"
    assert before_and_after(tmp_path, more) is None


def test_removed_test_is_named(tmp_path: Path) -> None:
    without = CALC_TESTS.replace("def test_add_zero():\n    assert add(2, 0) == 2\n", "")
    message = before_and_after(tmp_path, without)
    assert message is not None
    assert "1 fewer ran (4 before the fix, 3 after)" in message
    assert "`test_calc::test_add_zero`" in message


def test_new_skip_is_named_as_skipped(tmp_path: Path) -> None:
    skipped = CALC_TESTS.replace("def test_add_zero", "@pytest.mark.skip\ndef test_add_zero")
    message = before_and_after(tmp_path, skipped)
    assert message is not None
    assert "1 more were skipped or deselected (0 before the fix, 1 after)" in message
    assert "`test_calc::test_add_zero` (now skipped)" in message


def test_deselect_in_configuration_is_a_loss(tmp_path: Path) -> None:
    ini = {"pytest.ini": "[pytest]\naddopts = --deselect test_calc.py::test_add_zero\n"}
    message = before_and_after(tmp_path, CALC_TESTS, extra=ini)
    assert message is not None
    assert "1 fewer ran" in message and "1 more were skipped or deselected" in message
    assert "no longer run: `test_calc::test_add_zero`." in message


def test_a_test_id_that_changes_while_the_totals_hold_is_not_a_loss(tmp_path: Path) -> None:
    """A parametrize id computed from the fixed code changes with it; a renamed test function is
    the patch policy's (`test-removed`), not the count's."""
    renamed = CALC_TESTS.replace(
        "def test_add():\n    assert add(2, 3) == 5", "def test_adds():\n    assert add(2, 3)"
    )
    assert before_and_after(tmp_path, renamed) is None


def test_a_test_that_ran_before_a_stopped_run_must_still_run() -> None:
    before = TestCount("pytest", 2, 1, 1, 0, 0, frozenset({"t::a", "t::b"}), frozenset(), complete=False)
    after = TestCount(
        "pytest", 5, 5, 0, 0, 0, frozenset({"t::a", "t::c", "t::d", "t::e", "t::f"}), frozenset()
    )
    message = dropped(before, after)
    assert message is not None and "1 of the tests that ran before the fix no longer run" in message
    assert "`t::b`" in message
    # totals are not compared with a stopped run: after it, more may run and be skipped
    more_skipped = TestCount("pytest", 2, 2, 0, 3, 0, frozenset({"t::a", "t::b"}), frozenset(), complete=True)
    assert dropped(before, more_skipped) is None
    assert dropped(replace(before, complete=True), more_skipped) is not None


def test_a_run_stopped_early_before_the_fix_is_not_a_loss(tmp_path: Path) -> None:
    broken = calc_project(tmp_path / "before", op="*", extra={"test_broken.py": "import calc_missing\n"})
    before = count_tests(*pytest_run(broken, tmp_path=tmp_path))
    assert totals(before) == ("pytest", 1, 0, 1, 0, 0)  # the collection error, nothing else ran
    assert before is not None and before.ran_names == frozenset()  # a collection error is not a test id
    fixed = calc_project(tmp_path / "after", op="+", extra={"test_broken.py": "import calc\n"})
    after = count_tests(*pytest_run(fixed, tmp_path=tmp_path))
    assert totals(after) == ("pytest", 4, 4, 0, 0, 0)
    assert dropped(before, after) is None


def test_message_names_ten_tests_then_how_many_more(tmp_path: Path) -> None:
    many = "import pytest\n@pytest.mark.parametrize('n', range(15))\ndef test_n(n): assert n >= 0\n"
    project = write(tmp_path / "before", {"test_many.py": many, "test_keep.py": "def test_keep(): pass\n"})
    before = count_tests(*pytest_run(project, tmp_path=tmp_path))
    (project / "test_many.py").unlink()
    after = count_tests(*pytest_run(project, tmp_path=tmp_path))
    message = dropped(before, after)
    assert message is not None and "15 fewer ran" in message
    assert message.count("`test_many::test_n[") == 10 and message.endswith(", and 5 more.")


def test_dropped_cannot_tell_without_a_count_before_and_a_lost_count_after_is_a_loss() -> None:
    count = TestCount("pytest", 1, 1, 0, 0, 0)
    assert dropped(None, count) is None
    lost = dropped(count, None)  # it ran to no summary after the fix: an exit before it, or a cut output
    assert lost is not None and "no count after it" in lost
    # without ids on one side, only the totals are compared
    named = TestCount("pytest", 1, 1, 0, 0, 0, frozenset({"a"}), frozenset())
    assert dropped(named, TestCount("pytest", 1, 1, 0, 0, 0)) is None


def test_hostile_test_ids_stay_inert_in_the_message() -> None:
    evil = "x::test_`](https://evil.example)` @someone <img src=x>"
    before = TestCount("pytest", 1, 1, 0, 0, 0, frozenset({evil}), frozenset())
    after = TestCount("pytest", 0, 0, 0, 0, 0, frozenset(), frozenset())
    message = dropped(before, after)
    assert message is not None and f"`` {evil} ``" in message


# --- unittest and cargo, run for real ------------------------------------------------------


def test_unittest_counts(tmp_path: Path) -> None:
    project = write(
        tmp_path / "u",
        {
            "test_u.py": (
                "import unittest\n"
                "class T(unittest.TestCase):\n"
                "    def test_ok(self): pass\n"
                "    def test_fail(self): self.assertEqual(1, 2)\n"
                "    def test_error(self): raise RuntimeError\n"
                "    @unittest.skip('no')\n"
                "    def test_skip(self): pass\n"
                "    @unittest.expectedFailure\n"
                "    def test_xfail(self): self.assertEqual(1, 2)\n"
            )
        },
    )
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v"],
        cwd=project,
        env=base_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert "FAILED (failures=1, errors=1, skipped=1, expected failures=1)" in done.stdout
    assert totals(count_tests(done.stdout)) == ("unittest", 3, 1, 2, 2, 0)


CARGO_LIB = """
/// ```
/// assert_eq!(calc::add(1, 1), 2);
/// ```
pub fn add(a: i32, b: i32) -> i32 { a OP b }

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    IGNORE
    fn adds() { assert_eq!(add(2, 3), 5); }
    #[test]
    fn other() {}
    #[test]
    #[ignore]
    fn slow() {}
    #[test]
    #[ignore = "flaky"]
    fn flaky() {}
}
"""


def cargo_test(tmp_path: Path, *, op: str, ignore: str = "", args: tuple[str, ...] = ()) -> str:
    project = write(
        tmp_path / "calc",
        {
            "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": CARGO_LIB.replace("OP", op).replace("IGNORE", ignore),
            "tests/it.rs": "#[test]\nfn works() {}\n#[test]\nfn other() {}\n",
        },
    )
    home = Path(os.environ.get("HOME", "/root"))
    env = {
        **base_env(tmp_path),
        "CARGO_HOME": str(tmp_path / "cargo-home"),
        "RUSTUP_HOME": os.environ.get("RUSTUP_HOME", str(home / ".rustup")),
        "CARGO_TARGET_DIR": str(tmp_path / "target"),
        "CARGO_TERM_COLOR": "never",
    }
    cargo = shutil.which("cargo")
    assert cargo is not None
    done = subprocess.run(
        [cargo, "test", "--offline", "--no-fail-fast", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
        check=False,
    )
    assert "test result:" in done.stdout, done.stdout[-3000:]
    return done.stdout


needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed here")


@needs_cargo
@pytest.mark.slow
def test_cargo_counts_every_binary_and_names_tests(tmp_path: Path) -> None:
    before = count_tests(cargo_test(tmp_path, op="*"))
    # unit tests: 1 passed, 1 failed, 2 ignored; integration: 2 passed; doc-tests: 1 failed
    assert totals(before) == ("cargo", 5, 3, 2, 2, 0)
    assert before is not None and before.ran_names == {
        "calc::tests::adds",
        "calc::tests::other",
        "it::works",
        "it::other",
        "calc doc-tests::src/lib.rs - add (line 2)",
    }
    assert before.skipped_names == {"calc::tests::slow", "calc::tests::flaky"}
    filtered = count_tests(cargo_test(tmp_path, op="*", args=("--", "other")))
    assert totals(filtered) == ("cargo", 2, 2, 0, 0, 5)  # 3 + 1 + 1 filtered out
    after = count_tests(cargo_test(tmp_path, op="+", ignore="#[ignore]"))
    message = dropped(before, after)
    assert message is not None and "`calc::tests::adds` (now skipped)" in message


# --- Go, Jest, Vitest, Maven: captured real outputs ----------------------------------------


def test_go_verbose_counts_tests_and_subtests_with_their_package() -> None:
    before = count_tests(captured("go_v_before.txt"))
    assert totals(before) == ("go", 6, 5, 1, 1, 0)
    assert before is not None and before.ran_names == {
        "example.com/proj/calc::TestAdd",
        "example.com/proj/calc::TestSub",
        "example.com/proj/calc::TestTable",
        "example.com/proj/calc::TestTable/one",
        "example.com/proj/calc::TestTable/two",
        "example.com/proj/str::TestUpper",
    }
    assert before.skipped_names == {"example.com/proj/calc::TestSlow"}
    assert count_tests(captured("go_json_before.txt")) == before


def test_go_without_verbose_cannot_be_counted() -> None:
    # passing tests are not listed without -v: counting the FAIL lines would say the fix lost them.
    # `-json` or `-v` is not added to the repository's command: either makes `testing.Verbose()`
    # true in the tests, and through GOFLAGS `-json` also turns `go vet`'s exit status to 0.
    assert count_tests(captured("go_plain_before.txt")) is None
    assert count_tests(captured("go_plain_after.txt")) is None


def test_go_removed_test_is_named() -> None:
    before = count_tests(captured("go_v_before.txt"))
    assert dropped(before, count_tests(captured("go_v_after.txt"))) is None
    for after in ("go_v_after_removed.txt", "go_json_after_removed.txt"):
        message = dropped(before, count_tests(captured(after)))
        assert message is not None and "`example.com/proj/calc::TestSub`" in message


def test_jest_counts_and_names_from_the_verbose_tree() -> None:
    before = count_tests(captured("jest_verbose_before.txt"))
    assert totals(before) == ("jest", 4, 3, 1, 2, 0)
    assert before is not None and before.ran_names == {
        "./sum.test.js › math › adds",
        "./sum.test.js › math › subtracts",
        "./sum.test.js › math › nested › multiplies later",
        "./other.test.js › other works",
    }
    assert before.skipped_names == {"./sum.test.js › math › divides", "./sum.test.js › math › rounds"}
    plain = count_tests(captured("jest_plain_before.txt"))
    assert totals(plain) == totals(before) and plain is not None and plain.ran_names is None
    assert dropped(before, count_tests(captured("jest_verbose_after.txt"))) is None
    message = dropped(before, count_tests(captured("jest_verbose_after_skip.txt")))
    assert message is not None and "`./sum.test.js › math › subtracts` (now skipped)" in message


def test_jest_summary_in_a_real_ci_log() -> None:
    # timestamps and all: logdx prettier-jest-snapshot-babel-v2-001
    assert totals(count_tests(captured("corpus_jest_prettier.txt"))) == ("jest", 29648, 29634, 14, 5, 0)


def test_vitest_summary() -> None:
    count = count_tests(captured("vitest_before.txt"))
    assert totals(count) == ("vitest", 4, 3, 1, 2, 0)
    assert count is not None and count.ran_names is None


def test_maven_sums_modules_without_counting_class_lines_twice() -> None:
    before = count_tests(captured("maven_before.txt"))
    # core: 3 run, 2 failures, 1 skipped; util: 2 run
    assert totals(before) == ("maven", 4, 2, 2, 1, 0)
    assert totals(count_tests(captured("maven_after.txt"))) == ("maven", 4, 4, 0, 1, 0)
    message = dropped(before, count_tests(captured("maven_after_skip.txt")))
    assert message is not None and "1 fewer ran (4 before the fix, 3 after)" in message


def test_maven_reactor_in_a_real_ci_log() -> None:
    # cidiff google_auto_693: six modules' totals, old and new Surefire formats, 40 class lines
    count = count_tests(captured("corpus_maven_google_auto_693.txt"))
    assert totals(count) == ("maven", 588, 588, 0, 5, 0)


# --- mocha, RSpec, minitest, PHPUnit, Gradle: captured real outputs -------------------------


def test_mocha_counts_passing_failing_and_pending() -> None:
    before = count_tests(captured("mocha_before.txt"))
    # adds fails; it.skip and an `it` without a body are pending
    assert totals(before) == ("mocha", 2, 1, 1, 2, 0)
    assert totals(count_tests(captured("mocha_after.txt"))) == ("mocha", 2, 2, 0, 2, 0)
    assert dropped(before, count_tests(captured("mocha_after.txt"))) is None
    message = dropped(before, count_tests(captured("mocha_after_skip.txt")))
    assert message is not None and "1 fewer ran (2 before the fix, 1 after)" in message
    assert "1 more were skipped or deselected" in message


def test_rspec_counts_examples_failures_and_pending() -> None:
    before = count_tests(captured("rspec_before.txt"))
    assert totals(before) == ("rspec", 3, 2, 1, 1, 0)
    assert dropped(before, count_tests(captured("rspec_after.txt"))) is None
    message = dropped(before, count_tests(captured("rspec_after_skip.txt")))  # `it` became `xit`
    assert message is not None and "1 fewer ran (3 before the fix, 2 after)" in message


def test_rspec_error_outside_examples_is_a_run_stopped_early() -> None:
    count = count_tests(captured("rspec_load_error.txt"))  # the spec requires a missing file
    assert totals(count) == ("rspec", 0, 0, 0, 0, 0)
    assert count is not None and not count.complete


def test_minitest_counts_runs_without_the_skips() -> None:
    before = count_tests(captured("minitest_before.txt"))
    assert totals(before) == ("minitest", 3, 2, 1, 1, 0)
    assert dropped(before, count_tests(captured("minitest_after.txt"))) is None
    message = dropped(before, count_tests(captured("minitest_after_removed.txt")))
    assert message is not None and "1 fewer ran (3 before the fix, 2 after)" in message


def test_phpunit_counts_both_summary_forms() -> None:
    before = count_tests(captured("phpunit_before.txt"))  # Tests: 4, Assertions: 3, Failures: 1, Skipped: 1.
    assert totals(before) == ("phpunit", 3, 2, 1, 1, 0)
    after = count_tests(captured("phpunit_after.txt"))  # OK, but ... Tests: 4, Assertions: 3, Skipped: 1.
    assert totals(after) == ("phpunit", 3, 3, 0, 1, 0)
    assert dropped(before, after) is None
    removed = count_tests(captured("phpunit_after_removed.txt"))  # OK (2 tests, 2 assertions)
    assert totals(removed) == ("phpunit", 2, 2, 0, 0, 0)
    message = dropped(before, removed)
    assert message is not None and "1 fewer ran (3 before the fix, 2 after)" in message


def gradle_project(root: Path, state: str) -> Path:
    """A checkout after a Gradle run: the JUnit report Gradle 4.4 wrote in that run."""
    results = root / "build" / "test-results" / "test"
    results.mkdir(parents=True)
    (results / "binary").mkdir()
    (results / "TEST-example.CalcTest.xml").write_bytes(
        (OUTPUTS / f"gradle_{state}_TEST-example.CalcTest.xml").read_bytes()
    )
    return root


def gradle_count(tmp_path: Path, state: str) -> TestCount | None:
    output = captured(f"gradle_{state}.txt")
    assert ran_gradle("gradle test", output) and ran_gradle("make test", output)
    return count_tests(output, gradle_reports(gradle_project(tmp_path / state, state)))


def test_gradle_prints_a_count_only_when_a_test_fails() -> None:
    assert totals(count_tests(captured("gradle_before.txt"))) == (
        "gradle",
        2,
        0,
        2,
        1,
        0,
    )  # 3 tests completed, 2 failed, 1 skipped
    assert count_tests(captured("gradle_after.txt")) is None  # BUILD SUCCESSFUL, no count


def test_gradle_is_counted_from_its_reports(tmp_path: Path) -> None:
    before = gradle_count(tmp_path, "before")
    assert totals(before) == ("gradle", 2, 0, 2, 1, 0)  # 3 tests completed, 2 failed, 1 skipped
    assert before is not None and before.ran_names == {"example.CalcTest::adds", "example.CalcTest::addsZero"}
    after = gradle_count(tmp_path, "after")
    assert totals(after) == ("junit", 2, 2, 0, 1, 0)
    assert dropped(before, after) is None
    message = dropped(before, gradle_count(tmp_path, "after_removed"))
    assert message is not None and "1 fewer ran (2 before the fix, 1 after)" in message
    assert "`example.CalcTest::addsZero`" in message


def test_gradle_reports_of_subprojects_are_summed_and_links_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    gradle_project(root / "app", "after")
    gradle_project(root / "lib" / "core", "after")
    outside = gradle_project(tmp_path / "outside", "after")
    (root / "linked").symlink_to(outside, target_is_directory=True)  # a linked subproject
    report = root / "app" / "build" / "test-results" / "test" / "TEST-example.CalcTest.xml"
    (root / "app" / "build" / "test-results" / "other").mkdir()
    (root / "app" / "build" / "test-results" / "other" / "TEST-linked.xml").symlink_to(report)
    hidden = gradle_project(root / ".cache" / "x", "after")  # hidden directories are not searched
    assert hidden.exists()
    reports = gradle_reports(root)
    assert len(reports) == 2
    assert totals(count_tests(captured("gradle_after.txt"), reports)) == ("junit", 4, 4, 0, 2, 0)


def test_gradle_reports_are_not_read_for_other_runners() -> None:
    assert not ran_gradle("bundle exec rspec", captured("rspec_before.txt"))
    assert not ran_gradle("mvn test", captured("maven_before.txt"))
    assert not ran_gradle("npm run gradle-like", "")


# --- hostile, malformed, huge and truncated -------------------------------------------------

SUMMARY = "=== 2 passed in 0.01s ===\n"
VALID = b'<testsuites><testsuite name="pytest"><testcase classname="t" name="a"/><testcase classname="t" name="b"/></testsuite></testsuites>'


def test_a_valid_report_gives_the_ids() -> None:
    count = count_tests(SUMMARY, [VALID])
    assert totals(count) == ("pytest", 2, 2, 0, 0, 0)
    assert count is not None and count.ran_names == {"t::a", "t::b"}


@pytest.mark.parametrize(
    "report",
    [
        pytest.param(
            b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
            b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>'
            b'<testsuite name="&d;"><testcase classname="t" name="&d;"/></testsuite>',
            id="entity-expansion",
        ),
        pytest.param(
            b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            b'<testsuite><testcase classname="t" name="&x;"/></testsuite>',
            id="external-entity",
        ),
        pytest.param(
            b'<!DOCTYPE testsuite SYSTEM "http://127.0.0.1:9/x.dtd"><testsuite/>', id="external-dtd"
        ),
        pytest.param(b'<testsuite><testcase classname="t" name="a">', id="unclosed"),
        pytest.param(b"\x00\xff garbage", id="not-xml"),
        pytest.param(b'<html><testcase classname="t" name="a"/></html>', id="no-testsuite"),
        pytest.param(
            b"<testsuite>"
            + b'<testcase classname="t" name="x"/>' * (MAX_REPORT_BYTES // 30)
            + b"</testsuite>",
            id="over-the-cap",
        ),
    ],
)
def test_a_bad_report_is_ignored_and_the_output_counted(report: bytes) -> None:
    assert read_junit(report) is None
    count = count_tests(SUMMARY, [report])
    assert totals(count) == ("pytest", 2, 2, 0, 0, 0) and count is not None and count.ran_names is None


def test_report_forged_by_the_tests_is_refused(tmp_path: Path) -> None:
    """The repository's own conftest overwrites the report after pytest wrote it."""
    laughs = (
        '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        '<testsuite name="pytest"><testcase classname="t" name="&b;"/></testsuite>'
    )
    conftest = f"def pytest_unconfigure(config):\n    open(config.option.xmlpath, 'w').write({laughs!r})\n"
    project = write(tmp_path / "p", {"conftest.py": conftest, "test_a.py": "def test_a(): pass\n"})
    output, reports = pytest_run(project, tmp_path=tmp_path)
    assert reports and b"<!DOCTYPE" in reports[0]
    count = count_tests(output, reports)
    assert totals(count) == ("pytest", 1, 1, 0, 0, 0) and count is not None and count.ran_names is None


def test_read_report_refuses_what_is_not_a_plain_file(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    target = reports / PYTEST_REPORT
    assert read_report(reports) is None  # none written
    secret = tmp_path / "secret.xml"
    secret.write_bytes(VALID)
    target.symlink_to(secret)
    assert read_report(reports) is None
    target.unlink()
    os.link(secret, target)
    assert read_report(reports) is None  # a hard link to a file elsewhere
    target.unlink()
    os.mkfifo(target)
    result: list[bytes | None] = []
    reader = threading.Thread(target=lambda: result.append(read_report(reports)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert result == [None], "reading a FIFO blocked or returned data"
    target.unlink()
    target.write_bytes(b" " * (MAX_REPORT_BYTES + 1))
    assert read_report(reports) is None
    target.write_bytes(VALID)
    assert read_report(reports) == VALID


def test_a_cut_output_names_nothing_and_counts_only_with_a_report(tmp_path: Path) -> None:
    tests = "import pytest\n@pytest.mark.parametrize('n', range(400))\ndef test_n(n): pass\n"
    project = write(tmp_path / "p", {"test_many.py": tests})
    reports = tmp_path / "reports"
    reports.mkdir()
    env = {**base_env(tmp_path), **pytest_report_env("-p no:cacheprovider", reports)}
    done = shell.run(
        [sys.executable, "-m", "pytest", "-v"], cwd=project, env=env, timeout=TIMEOUT, max_output=8 * 1024
    )
    assert done.truncated and "400 passed" in done.output
    assert count_tests(done.output) is None
    report = read_report(reports)
    assert report is not None
    count = count_tests(done.output, [report])
    assert totals(count) == ("pytest", 400, 400, 0, 0, 0)
    assert count is not None and count.ran_names is not None and len(count.ran_names) == 400


# --- pytest_report_env ---------------------------------------------------------------------


def test_report_env_keeps_the_options_already_set(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"test_m.py": "def test_one(): pass\ndef test_two(): pass\n"})
    reports = tmp_path / "report dir with space"
    reports.mkdir()
    env = pytest_report_env("-p no:cacheprovider -k test_one", reports)
    done = subprocess.run(
        [sys.executable, "-m", "pytest"],
        cwd=project,
        env={**base_env(tmp_path), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert "1 passed, 1 deselected" in done.stdout
    report = read_report(reports)
    assert report is not None
    count = read_junit(report)
    assert count is not None and count.ran_names == {"test_m::test_one"}
    assert not (project / ".pytest_cache").exists()


def test_report_env_without_options(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"test_a.py": "def test_a(): pass\n"})
    for addopts in (None, "", "  "):
        output, reports = pytest_run(project, tmp_path=tmp_path, addopts=addopts)
        assert reports and "1 passed" in output


def test_explicit_junit_xml_on_the_command_line_wins(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"test_a.py": "def test_a(): pass\n"})
    output, reports = pytest_run(project, "--junit-xml=mine.xml", tmp_path=tmp_path)
    assert reports == [] and (project / "mine.xml").is_file()
    assert totals(count_tests(output, reports)) == ("pytest", 1, 1, 0, 0, 0)


def test_a_junit_xml_already_in_the_options_wins(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"test_a.py": "def test_a(): pass\n"})
    output, reports = pytest_run(
        project, tmp_path=tmp_path, addopts="-p no:cacheprovider --junit-xml=theirs.xml"
    )
    assert reports == [] and (project / "theirs.xml").is_file() and "1 passed" in output


def test_report_env_refuses_a_path_pytest_would_expand(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"contains '\$'"):
        pytest_report_env(None, tmp_path / "$HOME")


def test_gradle_reports_that_are_fifos_hard_links_or_huge_are_not_read(tmp_path: Path) -> None:
    root = gradle_project(tmp_path / "repo", "after")
    results = root / "build" / "test-results" / "test"
    os.mkfifo(results / "TEST-fifo.xml")  # reading it would block without a writer
    secret = tmp_path / "secret.xml"
    secret.write_bytes((OUTPUTS / "gradle_after_TEST-example.CalcTest.xml").read_bytes())
    os.link(secret, results / "TEST-hardlink.xml")  # a second name for a file outside the checkout
    (results / "TEST-huge.xml").write_bytes(b"<testsuite>" + b" " * MAX_REPORT_BYTES + b"</testsuite>")
    reports = gradle_reports(root)
    assert len(reports) == 1
    assert totals(count_tests("", reports)) == ("junit", 2, 2, 0, 1, 0)
