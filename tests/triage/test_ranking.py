"""Which error regions the excerpt keeps when a failed step prints many of them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ci_autofix.triage import diagnose, engine
from tests.testing.logformat import github_log, write

needs_asan = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

USE_AFTER_FREE = """\
#include <stdlib.h>
int dive(int *p, int n) { if (n == 0) return p[0]; return dive(p, n - 1) + 1; }
int main(void) { int *p = malloc(4); free(p); return dive(p, 75); }
"""


def _passing(n: int, start: int = 0) -> str:
    return "\n".join(
        f"[ RUN      ] suite: case {k} behaves: 1.{k % 10} ms OK" for k in range(start, start + n)
    )


def _asan_report(tmp_path: Path) -> str:
    write(tmp_path, {"uaf.c": USE_AFTER_FREE})
    build = ["gcc", "-g", "-O0", "-fno-omit-frame-pointer", "-fsanitize=address", "uaf.c", "-o", "uaf"]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}
    compiled = subprocess.run(build, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    if compiled.returncode != 0:
        pytest.skip(f"gcc cannot build with AddressSanitizer here: {compiled.stderr[-300:]}")
    done = subprocess.run(["./uaf"], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode != 0
    assert "AddressSanitizer: heap-use-after-free" in done.stderr
    return done.stderr


@needs_asan
def test_a_sanitizer_stack_trace_is_kept_whole(tmp_path: Path) -> None:
    report = _asan_report(tmp_path)
    frames = [line for line in report.splitlines() if line.lstrip().startswith("#")]
    deepest = next(i for i, line in enumerate(frames) if " in main " in line)
    assert deepest > 60  # the first trace is longer than a paragraph of ordinary output
    output = "\n".join([_passing(300), report, _passing(400, 300), "Unit tests failed"])
    d = diagnose(github_log("make unittest", output), max_tokens=3000)
    kept = d.excerpt.splitlines()
    for frame in frames[: deepest + 1]:
        assert frame in kept
    assert d.excerpt_tokens <= 3000


GHC_WERROR = """\
[ 15 of 147] Compiling Text.Demo.Generic ( src/Text/Demo/Generic.hs, dist/build/Text/Demo/Generic.o )
[ 16 of 147] Compiling Text.Demo.Notebook ( src/Text/Demo/Notebook.hs, dist/build/Text/Demo/Notebook.o )

src/Text/Demo/Notebook.hs:94:10: Warning:
    No explicit implementation for
      ‘mappend’
    In the instance declaration for ‘Monoid (Notebook a)’

<no location info>:
Failing due to -Werror.
"""


def test_warnings_are_the_errors_when_the_compiler_fails_on_warnings() -> None:
    # GHC's own format: the build stops on a warning and says so in a line of its own
    noise = "\n".join(
        f"test/Spec{k}.hs: error-handling case {k} could not be skipped, retried" for k in range(60)
    )
    output = "\n".join([_passing(200), GHC_WERROR, _passing(300, 200), noise])
    d = diagnose(github_log("cabal build", output), max_tokens=3000)
    kept = d.excerpt.splitlines()
    for line in GHC_WERROR.splitlines()[3:7]:
        assert line in kept


def test_warnings_stay_noise_when_warnings_do_not_fail_the_build() -> None:
    output = "\n".join(
        ["src/Text/Demo/Notebook.hs:94:10: Warning: Defined but not used: ‘x’", _passing(300), "Error: boom"]
    )
    d = diagnose(github_log("cabal build", output), max_tokens=300)
    assert "Error: boom" in d.excerpt
    assert "Defined but not used" not in d.excerpt


RUN_TESTS_FAIL = """\
========DIFF========
005+     Parameter #1 [ <optional> $flags ]
005-     Parameter #1 [ <optional> $ar_flags ]
========DONE========
FAIL ArrayIterator reflection parameter info [ext/spl/tests/bug71412.phpt]"""


def test_an_upper_case_fail_line_is_an_error_line() -> None:
    # test harnesses (PHP run-tests, automake, go test, jest) print `FAIL <test>` after its diff
    tests = "\n".join(
        f"TEST {k}/9000 [ext/std/tests/t{k}.phpt]\nPASS t{k} [ext/std/tests/t{k}.phpt]" for k in range(400)
    )
    output = "\n".join([tests, RUN_TESTS_FAIL, tests])
    d = diagnose(github_log("make test", output), max_tokens=3000)
    kept = d.excerpt.splitlines()
    for line in RUN_TESTS_FAIL.splitlines():
        assert line in kept


DEEP_JAVA = """\
public class Deep {
    static int dive(int n) {
        if (n == 0) throw new IllegalStateException("cache index is corrupt");
        return dive(n - 1) + 1;
    }
    public static void main(String[] args) { dive(45); }
}
"""

needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="java is not installed")


JAVA_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}


def _java(tmp_path: Path, name: str, source: str) -> str:
    """What a real `java Name.java` printed on stderr (it must fail)."""
    write(tmp_path, {f"{name}.java": source})
    done = subprocess.run(
        ["java", f"{name}.java"], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=JAVA_ENV
    )
    assert done.returncode != 0
    return done.stderr


@needs_java
def test_a_bare_stack_trace_is_kept_whole(tmp_path: Path) -> None:
    stderr = _java(tmp_path, "Deep", DEEP_JAVA)
    trace = [line for line in stderr.splitlines() if line.strip()]
    assert trace[0].startswith('Exception in thread "main" java.lang.IllegalStateException')
    assert len(trace) > 40
    output = "\n".join([_passing(200), stderr, _passing(400, 200)])
    d = diagnose(github_log("./run-service", output), max_tokens=3000)
    kept = d.excerpt.splitlines()
    for line in trace:
        assert line in kept


LOGGED_JAVA = """\
public class Logged {
    static int dive(int n) {
        if (n == 0) throw new IllegalStateException("plugin descriptor is corrupt");
        return dive(n - 1) + 1;
    }
    public static void main(String[] args) {
        try { dive(20); } catch (IllegalStateException e) {
            System.err.println("[WARNING] Error injecting: demo.plugins.SpoonMojo");
            e.printStackTrace();
        }
        System.exit(1);
    }
}
"""


@needs_java
def test_the_message_a_logger_put_above_a_bare_stack_trace_is_kept(tmp_path: Path) -> None:
    stderr = _java(tmp_path, "Logged", LOGGED_JAVA)
    header, exception = stderr.splitlines()[:2]
    assert header == "[WARNING] Error injecting: demo.plugins.SpoonMojo"
    assert exception.startswith("java.lang.IllegalStateException: plugin descriptor is corrupt")
    output = "\n".join([_passing(200), stderr, _passing(400, 200)])
    kept = diagnose(github_log("./run-service", output), max_tokens=3000).excerpt.splitlines()
    assert header in kept and exception in kept


def test_the_failed_steps_summary_is_kept_when_error_regions_fill_the_budget() -> None:
    regions = "\n\n\n".join(
        f"checking fixture {k}\nERROR: fixture {k} does not match its snapshot\n"
        + "\n".join(f"  line {j}: expected {k * j} but got {k * j + 1}" for j in range(6))
        for k in range(80)
    )
    summary = [
        "Fixtures: 80 failed, 1500 passed, 1580 total",
        "Ran all fixtures.",
    ]
    output = "\n".join([regions, _passing(300), "", *summary])
    d = diagnose(github_log("./check-fixtures", output), max_tokens=1500)
    kept = d.excerpt.splitlines()
    for line in summary:
        assert line in kept
    assert "ERROR: fixture 0 does not match its snapshot" in kept


def test_a_go_subtests_long_output_is_kept_whole() -> None:
    # `go test -v` output format (Go's testing package): a failed subtest's indented lines, here a
    # 60-name expected list, belong to it up to the next line that is not indented more
    expected = [f"            tool-{k:02d}" for k in range(60)]
    failing = [
        "    --- FAIL: TestSorted/Testing_Frameworks (0.00s)",
        "        sorted_test.go:131: expected 'tool-03' but actual is 'tool-07'",
        "        sorted_test.go:135: expected order is:",
        *expected,
    ]
    passing = [f"    --- PASS: TestSorted/Section_{k} (0.00s)" for k in range(300)]
    output = "\n".join(
        [
            "=== RUN   TestSorted",
            *passing[:150],
            *failing,
            *passing[150:],
            "--- FAIL: TestSorted (0.01s)",
            "FAIL",
        ]
    )
    d = diagnose(github_log("go test ./...", output))
    kept = d.excerpt.splitlines()
    for line in failing:
        assert line in kept


def test_skipped_tests_are_not_error_lines() -> None:
    # a skip reason often reads like an error (`not found`, `cannot`): the skip is not the failure
    skips = "\n".join(
        f"SKIP t{k} [ext/net/tests/t{k}.phpt] reason: server {k} not found, cannot connect"
        for k in range(300)
    )
    output = "\n".join([skips, RUN_TESTS_FAIL, _passing(200)])
    d = diagnose(github_log("make test", output), max_tokens=1500)
    kept = d.excerpt.splitlines()
    for line in RUN_TESTS_FAIL.splitlines():
        assert line in kept
    assert len([line for line in kept if line.startswith("SKIP ")]) <= 15


def _javac(tmp_path: Path, sources: dict[str, str]) -> str:
    """What a real `javac` prints for `sources` (it must fail)."""
    write(tmp_path, sources)
    argv = ["javac", "-Xmaxerrs", "1000", "-d", "out", *sources]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=JAVA_ENV)
    assert done.returncode != 0 and "error:" in done.stderr
    return done.stderr


def _class(name: str, body: str) -> str:
    return f"public class {name} {{\n    void run() {{\n{body}\n    }}\n}}\n"


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if ": error: " in line]


@needs_java
def test_a_finding_repeated_many_times_does_not_crowd_out_a_different_one(tmp_path: Path) -> None:
    many = "\n".join(f"        int v{i} = missingHelper({i});" for i in range(40))
    output = _javac(
        tmp_path,
        {
            "Many.java": _class("Many", many),
            "Other.java": "public class Other {\n    String name() { return 42; }\n}\n",
            "More.java": _class("More", many.replace("missingHelper", "otherHelper")),
        },
    )
    distinct = next(line for line in _error_lines(output) if line.startswith("Other.java"))
    d = diagnose(github_log("javac -d out *.java", output), max_tokens=1500)
    assert distinct in d.excerpt.splitlines()
    assert "Many.java:3: error: cannot find symbol" in d.excerpt.splitlines()  # the first is still kept


@needs_java
def test_errors_of_a_step_that_went_on_do_not_crowd_out_the_failed_steps(tmp_path: Path) -> None:
    early = _javac(
        tmp_path / "early",
        {f"Early{k}.java": _class(f"Early{k}", f"        int v = helper{k}();") for k in range(40)},
    )
    late = _javac(
        tmp_path / "late",
        {f"Late{k}.java": _class(f"Late{k}", f"        String s = {k};") for k in range(20)},
    )
    went_on = github_log("mvn -B dependency:go-offline --fail-never", early, exit_code=0)
    failed = github_log("mvn -B verify", late).removeprefix("\ufeff")
    d = diagnose(went_on + failed, max_tokens=900)
    kept = d.excerpt.splitlines()
    for line in _error_lines(late):
        assert line in kept, line


@needs_java
def test_repeats_are_counted_within_the_failed_steps_only(tmp_path: Path) -> None:
    # a step that went on printed the same error five times; the failed step prints it twice: those
    # two are the failed step's own first and second, not the sixth and seventh
    def many(n: int) -> str:
        return _class("Many", "\n".join(f"        int v{i} = missingHelper({i});" for i in range(n)))

    early = _javac(tmp_path / "early", {"Many.java": many(5)})
    late = _javac(tmp_path / "late", {"Many.java": many(2)})
    log = github_log("make -k || true", early, exit_code=0) + github_log("make", late).removeprefix("\ufeff")
    analysis = engine.analyse(log)
    failed = engine.failed_ranges(analysis.view)
    assert len(failed) == 1
    first, last = failed[0]
    mine = [f for f in analysis.found if first <= f.first <= last and f.failure.tool == "javac"]
    assert len(mine) == 2
    for f in mine:
        assert any(s.first == f.first and s.priority == 0 for s in analysis.spans), f.failure
