"""How many tests a run ran, passed, failed, skipped and deselected, and whether a fix lost tests.

`count_tests` reads what the runners print at the end of a run (pytest, unittest, Jest, Vitest,
Mocha, cargo test, go test `-v`/`-json`, Maven Surefire, Gradle, RSpec, minitest, PHPUnit) and the
JUnit XML reports: the one `pytest_report_env` asks pytest to write, and those Gradle's test tasks
write (`gradle_reports`; Gradle prints no count when every test passed). A plain `go test` (without
`-v`) lists no passing test and is not counted: `-json` or `-v` is not added to the repository's
command, since either makes `testing.Verbose()` true in its tests and, through `GOFLAGS`, `-json`
also makes `go vet` exit 0 on a finding. Several runs in one output (a command line that runs pytest
twice, a cargo workspace, a Maven reactor) are summed. Test ids are given only when the run lists
every test it counted (pytest `-v`, the JUnit report, Jest's verbose tree, cargo, go `-v`).

`dropped` compares a run before the fix with the same run after it: fewer tests run, more
skipped or deselected, or a test that ran before and no longer runs (renamed, removed, now
skipped) is a loss. More tests after the fix is not: the failing run may have stopped early.

The output and the report come from the repository's code, so they are read as hostile: the report
is capped, read without following links or blocking on a FIFO, parsed with a DTD refused (so no
entity is ever declared or expanded, none fetched), and a report that is not a well-formed JUnit
document is ignored. A test can still print a fake summary line: the count is what the runner
appears to say, a guard against a fix that drops tests, not proof against code that forges output.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import reduce
from operator import add
from pathlib import Path
from xml.parsers import expat

from ci_autofix.markdown import code_span
from ci_autofix.triage.normalize import clean_line, to_text, without_marker
from ci_autofix.triage.parsers.golang import GO_RUN_RE

PYTEST_REPORT = "ci-autofix-pytest-junit.xml"
MAX_REPORT_BYTES = 5 * 1024 * 1024
MAX_NAMED = 10  # disappeared tests named in a `dropped` message
MAX_NAME_CHARS = 200

# The line `shell.run` puts where it dropped the middle of a long output.
OMITTED_RE = re.compile(r"^\[\.\.\. \d+ bytes of output omitted \.\.\.\]$")


@dataclass(frozen=True)
class TestCount:
    """What one or more runs of a test runner report. `ran` = passed + failed; `failed` counts
    failures and errors; `skipped` counts skipped, ignored, xfailed, todo and pending tests."""

    __test__ = False  # not a pytest test class

    runner: str  # "pytest", "jest", "go", "cargo", "maven", ... joined by "+" when summed
    ran: int
    passed: int
    failed: int
    skipped: int
    deselected: int
    ran_names: frozenset[str] | None = None  # ids of the tests that ran, when the run lists them all
    skipped_names: frozenset[str] | None = None
    # of `failed`, the errors (pytest counts a test that passed and errored in teardown twice)
    errors: int = 0
    complete: bool = True  # False: the run stopped early (`-x`, a collection error, a failed test binary)

    def describe(self) -> str:
        """`3 ran (2 passed, 1 failed), 1 skipped, 2 deselected`: the parts that are not zero."""
        parts = [
            f"{self.ran} ran" + (f" ({self.passed} passed, {self.failed} failed)" if self.failed else "")
        ]
        parts += [
            f"{n} {what}" for n, what in ((self.skipped, "skipped"), (self.deselected, "deselected")) if n
        ]
        return ", ".join(parts)

    def __add__(self, other: TestCount) -> TestCount:
        if not isinstance(other, TestCount):
            return NotImplemented
        runners = dict.fromkeys([*self.runner.split("+"), *other.runner.split("+")])
        return TestCount(
            "+".join(runners),
            self.ran + other.ran,
            self.passed + other.passed,
            self.failed + other.failed,
            self.skipped + other.skipped,
            self.deselected + other.deselected,
            _union(self.ran_names, other.ran_names),
            _union(self.skipped_names, other.skipped_names),
            self.errors + other.errors,
            self.complete and other.complete,
        )


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else a | b


def _total(counts: Iterable[TestCount | None]) -> TestCount | None:
    found = [c for c in counts if c is not None]
    return reduce(add, found) if found else None


def _listed(names: set[str], count: int, slack: int = 0) -> frozenset[str] | None:
    """`names` when they account for every one of `count` tests (`slack` of them may share a
    name, as a pytest test that passed and then errored in teardown does), else None."""
    return frozenset(names) if count - slack <= len(names) <= count else None


def count_tests(output: str, reports: Sequence[bytes] = ()) -> TestCount | None:
    """What the output (and JUnit XML reports) say about tests; None when no runner summary is recognised.

    When the report agrees with the output's counts, the output's counts are kept (the report
    has no deselected tests) with the report's test ids. When they disagree (the report is stale,
    or a second pytest run overwrote it), the output wins. When the middle of the output was
    cut, its counts are trusted only as far as a report confirms them, and it names no tests.
    """
    lines = [without_marker(clean_line(raw)) for raw in to_text(output).split("\n")]
    truncated = any(OMITTED_RE.match(line) for line in lines)
    text = _total(reader(lines) for reader in _READERS)
    if text is not None and truncated:
        text = replace(text, ran_names=None, skipped_names=None)
    report = _total(read_junit(r) for r in reports)
    if report is None:
        return None if truncated else text
    if text is not None and _agree(text, report):
        return replace(text, ran_names=report.ran_names, skipped_names=report.skipped_names)
    return report if truncated or text is None else text


def _agree(text: TestCount, report: TestCount) -> bool:
    # pytest's summary counts a test that passed and then errored in teardown twice; the report once
    return text.skipped == report.skipped and text.ran - text.errors <= report.ran <= text.ran


def dropped(before: TestCount | None, after: TestCount | None) -> str | None:
    """Why the fix lost tests, naming the tests that disappeared when both sides list them; None
    when nothing was lost or it cannot be told (the run before the fix reported no count).

    A run that reported its tests before the fix and reports none after it lost them (it ended
    before its summary, or its output was cut). When the run before the fix went to its end,
    fewer run, or more skipped or deselected, is a loss. When it stopped early (`-x`, a
    collection error, a failed test binary), only its tests can be compared: each one that ran
    must still run. The message is Markdown: each test id in it is a code span, cut to `MAX_NAME_CHARS`.
    """
    if before is None:
        return None
    if after is None:
        return (
            f"The fix loses tests: the run reported {before.ran} test(s) before the fix and no count after it "
            "(it ended before the test runner's summary, or its output was cut)."
        )
    reasons: list[str] = []
    if before.complete and after.ran < before.ran:
        reasons.append(f"{before.ran - after.ran} fewer ran ({before.ran} before the fix, {after.ran} after)")
    off_before = before.skipped + before.deselected
    off_after = after.skipped + after.deselected
    if before.complete and off_after > off_before:
        reasons.append(
            f"{off_after - off_before} more were skipped or deselected ({off_before} before the fix, {off_after} after)"
        )
    gone: list[str] = []
    if before.ran_names is not None and after.ran_names is not None:
        gone = sorted(before.ran_names - after.ran_names)
    if gone and not before.complete:
        reasons.append(f"{len(gone)} of the tests that ran before the fix no longer run")
    if not reasons:
        return None
    message = f"The fix loses tests: {'; '.join(reasons)}."
    if gone:
        now_skipped = after.skipped_names or frozenset()
        shown = [_name(n) + (" (now skipped)" if n in now_skipped else "") for n in gone[:MAX_NAMED]]
        more = f", and {len(gone) - MAX_NAMED} more" if len(gone) > MAX_NAMED else ""
        message += f" Tests that no longer run: {', '.join(shown)}{more}."
    return message


def _name(test_id: str) -> str:
    if len(test_id) > MAX_NAME_CHARS:
        test_id = f"{test_id[: MAX_NAME_CHARS - 1]}…"
    return code_span(test_id)


def pytest_report_env(addopts: str | None, report_dir: Path) -> dict[str, str]:
    """Environment entries that make pytest also write a JUnit XML report into report_dir
    (PYTEST_ADDOPTS, keeping any value already set); an explicit --junit-xml on the command line wins.

    Ours comes first, so a `--junit-xml` already in `addopts` or on the command line (both read
    after it) overrides it; then pytest writes no report here and the output alone is counted.
    Raises ValueError for a directory whose path pytest would rewrite (it expands `$VAR` in it).
    """
    path = report_dir.absolute() / PYTEST_REPORT
    if "$" in str(path):
        raise ValueError(
            f"the pytest report directory {str(path)!r} contains '$', which pytest expands as a "
            "variable; use a directory without '$' in its path"
        )
    ours = shlex.quote(f"--junit-xml={path}")
    return {"PYTEST_ADDOPTS": f"{ours} {addopts}" if addopts and addopts.strip() else ours}


def read_report(report_dir: Path, max_bytes: int = MAX_REPORT_BYTES) -> bytes | None:
    """The report pytest wrote into `report_dir`, or None when there is none or it is not a plain
    file of at most `max_bytes` (a link, a FIFO, a device, a hard link, or too large)."""
    return _read_plain(report_dir / PYTEST_REPORT, max_bytes)


def _read_plain(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of `path` when it is a plain file of at most `max_bytes` (not a link, a FIFO, a
    device or a hard link), else None."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None  # missing, a link, a FIFO without a writer, or anything else the run made of it
    with contextlib.closing(os.fdopen(fd, "rb")) as file:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > max_bytes:
            return None
        try:
            data = file.read(max_bytes + 1)
        except OSError:
            return None
    return data if len(data) <= max_bytes else None


# --- JUnit XML ---------------------------------------------------------------------------


class _Refused(Exception):
    pass


@dataclass
class _Case:
    name: str
    failed: bool = False
    errored: bool = False
    skipped: bool = False


def read_junit(report: bytes) -> TestCount | None:
    """The tests in one JUnit XML report; None for a report that is too large, has a DTD, is not
    well-formed, or has no `testsuite`. Ids are `classname::name` (pytest's `classname` is the
    test's module and class, dotted); a pytest collection error (no `classname`) is counted as an
    error but is not a test id."""
    if len(report) > MAX_REPORT_BYTES:
        return None
    cases: list[_Case] = []
    stack: list[str] = []
    state = {"suites": 0, "pytest": 0}

    def refuse(*_: object) -> None:
        raise _Refused

    def start(tag: str, attrs: dict[str, str]) -> None:
        parent = stack[-1] if stack else ""
        stack.append(tag)
        if tag == "testsuite":
            state["suites"] += 1
            state["pytest"] += attrs.get("name") == "pytest"
        elif tag == "testcase" and "testsuite" in stack:
            classname = attrs.get("classname", "")
            name = attrs.get("name", "")
            cases.append(_Case(f"{classname}::{name}" if classname else ""))
        elif parent == "testcase" and cases:
            case = cases[-1]
            case.failed |= tag == "failure"
            case.errored |= tag == "error"
            case.skipped |= tag == "skipped"

    def refuse_entity(*_: object) -> int:
        raise _Refused

    def end(_: str) -> None:
        stack.pop()

    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse_entity
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(report, True)
    except (_Refused, expat.ExpatError, ValueError):
        return None
    if not state["suites"]:
        return None
    failed = [c for c in cases if not c.skipped and (c.failed or c.errored)]
    skipped = [c for c in cases if c.skipped and not (c.failed or c.errored)]
    ran = [c for c in cases if c not in skipped]
    return TestCount(
        "pytest" if state["pytest"] else "junit",
        ran=len(ran),
        passed=len(ran) - len(failed),
        failed=len(failed),
        skipped=len(skipped),
        deselected=0,
        ran_names=frozenset(c.name for c in ran if c.name),
        skipped_names=frozenset(c.name for c in skipped if c.name),
        errors=sum(c.errored and not c.failed for c in failed),
    )


# --- pytest and unittest -----------------------------------------------------------------

PYTEST_SUMMARY_RE = re.compile(
    r"^(?:=+ )?(?P<parts>no tests ran|\d+ [a-z]+(?: [a-z]+)?(?:, \d+ [a-z]+(?: [a-z]+)?)*)"
    r" in [\d.]+s(?: \([\d:]+\))?(?: =+)?$"
)
PYTEST_KINDS = {"passed", "failed", "error", "errors", "skipped", "deselected", "xfailed", "xpassed"}
PYTEST_PART_RE = re.compile(r"(\d+) ([a-z]+(?: [a-z]+)?)")
_VERDICT = r"PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS"
PYTEST_VERBOSE_RE = re.compile(
    rf"^(?:\[gw\d+\] )?(?P<id>[^\s:\[][^\s\[]*?::\S.*?) (?P<v>{_VERDICT})(?: \(.*\))?(?: +\[ *\d+%\])?$"
)
PYTEST_REPORT_CHARS_RE = re.compile(
    rf"^(?:\[gw\d+\] \[ *\d+%\] )?(?P<v>{_VERDICT}) (?P<id>[^\s:\[][^\s\[]*?::\S.*?)(?: - .*)?$"
)


def pytest_id(nodeid: str) -> str:
    """A pytest node id as the JUnit report names it: `tests/test_a.py::TestK::test_m[x]` is
    `tests.test_a.TestK::test_m[x]` (pytest's own `mangle_test_address`)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return f"{'.'.join(names[:-1])}::{names[-1]}" if len(names) > 1 else names[0]


PYTEST_STOPPED_RE = re.compile(r"^!+ (?:stopping after \d+ failures?|Interrupted: .*|KeyboardInterrupt) !+$")


def _pytest(lines: Sequence[str]) -> TestCount | None:
    counts: list[TestCount] = []
    ran_names: set[str] = set()
    skipped_names: set[str] = set()
    stopped = False
    for line in lines:
        stopped = stopped or bool(PYTEST_STOPPED_RE.match(line))
        summary = PYTEST_SUMMARY_RE.match(line)
        parts = (
            {word: int(n) for n, word in PYTEST_PART_RE.findall(summary.group("parts"))} if summary else {}
        )
        # `--collect-only` ends with `5 tests collected in 0.01s`: not a run
        if summary and (summary.group("parts") == "no tests ran" or parts.keys() & PYTEST_KINDS):
            passed = parts.get("passed", 0) + parts.get("xpassed", 0)
            errors = parts.get("error", 0) + parts.get("errors", 0)
            failed = parts.get("failed", 0) + errors
            skipped = parts.get("skipped", 0) + parts.get("xfailed", 0)
            counts.append(
                TestCount(
                    "pytest",
                    passed + failed,
                    passed,
                    failed,
                    skipped,
                    parts.get("deselected", 0),
                    errors=errors,
                )
            )
            continue
        verdict = PYTEST_VERBOSE_RE.match(line) or PYTEST_REPORT_CHARS_RE.match(line)
        if verdict:
            names = skipped_names if verdict.group("v") in ("SKIPPED", "XFAIL") else ran_names
            names.add(pytest_id(verdict.group("id")))
    total = _total(counts)
    if total is None:
        return None
    return replace(
        total,
        ran_names=_listed(ran_names, total.ran, total.errors),
        skipped_names=_listed(skipped_names, total.skipped),
        complete=not stopped,
    )


UNITTEST_RAN_RE = re.compile(r"^Ran (?P<n>\d+) tests? in [\d.]+s$")
UNITTEST_END_RE = re.compile(r"^(?P<v>OK|FAILED)(?: \((?P<parts>[a-z =\d,]+)\))?$")


def _unittest(lines: Sequence[str]) -> TestCount | None:
    counts: list[TestCount] = []
    for i, line in enumerate(lines):
        ran = UNITTEST_RAN_RE.match(line)
        if not ran:
            continue
        end = next((m for m in map(UNITTEST_END_RE.match, lines[i + 1 : i + 4]) if m), None)
        if end is None:
            continue
        parts = {k.strip(): int(v) for k, v in re.findall(r"([a-z ]+)=(\d+)", end.group("parts") or "")}
        skipped = parts.get("skipped", 0) + parts.get("expected failures", 0)
        errors = parts.get("errors", 0)
        failed = parts.get("failures", 0) + errors + parts.get("unexpected successes", 0)
        executed = int(ran.group("n")) - skipped
        counts.append(TestCount("unittest", executed, executed - failed, failed, skipped, 0, errors=errors))
    return _total(counts)


# --- Jest and Vitest ---------------------------------------------------------------------

JEST_TESTS_RE = re.compile(r"^Tests:\s+(?P<parts>(?:\d+ [a-z]+, )*)(?P<total>\d+) total$")
JEST_FILE_RE = re.compile(r"^(?:PASS|FAIL)\s+(?P<file>.+?)(?:\s+\(\d+(?:\.\d+)? m?s(?:, [^)]*)?\))?$")
JEST_ITEM_RE = re.compile(
    r"^(?P<indent> +)(?P<mark>[✓✕○✎√×])(?: (?P<kind>skipped|todo))? (?P<title>.+?)(?: \(\d+(?:\.\d+)? m?s\))?$"
)
JEST_SUITES_RE = re.compile(r"^(?:Test Suites|Tests|Snapshots|Time|Ran all test suites)\b")
VITEST_TESTS_RE = re.compile(r"^\s*Tests\s{2,}(?P<parts>.+?)\s+\((?P<total>\d+)\)$")


def _jest(lines: Sequence[str]) -> TestCount | None:
    counts: list[TestCount] = []
    ran_names: set[str] = set()
    skipped_names: set[str] = set()
    file = ""
    describe: list[tuple[int, str]] = []
    for line in lines:
        summary = JEST_TESTS_RE.match(line)
        if summary:
            parts = {word: int(n) for n, word in re.findall(r"(\d+) ([a-z]+)", summary.group("parts"))}
            passed, failed = parts.get("passed", 0), parts.get("failed", 0)
            skipped = parts.get("skipped", 0) + parts.get("todo", 0) + parts.get("pending", 0)
            counts.append(TestCount("jest", passed + failed, passed, failed, skipped, 0))
            continue
        heading = JEST_FILE_RE.match(line)
        if heading:
            file, describe = heading.group("file"), []
            continue
        if not file or not line.strip() or JEST_SUITES_RE.match(line):
            continue
        depth = len(line) - len(line.lstrip())
        describe = [(d, title) for d, title in describe if d < depth]
        item = JEST_ITEM_RE.match(line)
        if item is None:
            describe.append((depth, line.strip()))
            continue
        test_id = " › ".join([file, *(title for _, title in describe), item.group("title")])
        (skipped_names if item.group("mark") in "○✎" else ran_names).add(test_id)
    total = _total(counts)
    if total is None:
        return None
    return replace(
        total, ran_names=_listed(ran_names, total.ran), skipped_names=_listed(skipped_names, total.skipped)
    )


def _vitest(lines: Sequence[str]) -> TestCount | None:
    """Vitest's `Tests  1 failed | 2 passed | 1 skipped (4)`; its default reporter lists no test ids."""
    counts: list[TestCount] = []
    for line in lines:
        summary = VITEST_TESTS_RE.match(line)
        if summary:
            parts = {word: int(n) for n, word in re.findall(r"(\d+) ([a-z]+)", summary.group("parts"))}
            passed, failed = parts.get("passed", 0), parts.get("failed", 0)
            skipped = parts.get("skipped", 0) + parts.get("todo", 0)
            counts.append(TestCount("vitest", passed + failed, passed, failed, skipped, 0))
    return _total(counts)


# --- cargo test --------------------------------------------------------------------------

CARGO_RESULT_RE = re.compile(
    r"^test result: (?:ok|FAILED)\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; (?P<ignored>\d+) ignored;"
    r" \d+ measured; (?P<filtered>\d+) filtered out"
)
CARGO_TEST_RE = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<v>ok|FAILED|ignored)(?:, .*)?$")
CARGO_RUNNING_RE = re.compile(r"^\s*Running (?:unittests )?\S+ \((?P<binary>[^)]+)\)$")
CARGO_DOCTESTS_RE = re.compile(r"^\s*Doc-tests (?P<crate>\S+)$")


def _cargo(lines: Sequence[str]) -> TestCount | None:
    counts: list[TestCount] = []
    ran_names: set[str] = set()
    skipped_names: set[str] = set()
    binary = ""
    for line in lines:
        result = CARGO_RESULT_RE.match(line)
        if result:
            passed, failed = int(result.group("passed")), int(result.group("failed"))
            counts.append(
                TestCount(
                    "cargo",
                    passed + failed,
                    passed,
                    failed,
                    int(result.group("ignored")),
                    int(result.group("filtered")),
                )
            )
            continue
        running = CARGO_RUNNING_RE.match(line)
        doctests = CARGO_DOCTESTS_RE.match(line)
        if running:
            # target/debug/deps/calc-c6626fb655a8d231: the test binary, less its hash
            binary = re.sub(r"-[0-9a-f]{16}(?:\.exe)?$", "", Path(running.group("binary")).name)
        elif doctests:
            binary = f"{doctests.group('crate')} doc-tests"
        test = CARGO_TEST_RE.match(line)
        if test:
            test_id = f"{binary}::{test.group('name')}" if binary else test.group("name")
            (skipped_names if test.group("v") == "ignored" else ran_names).add(test_id)
    total = _total(counts)
    if total is None:
        return None
    # cargo stops at the first test binary that fails (without --no-fail-fast)
    stopped = any(line.startswith("error: test failed, to rerun pass") for line in lines)
    return replace(
        total,
        ran_names=_listed(ran_names, total.ran),
        skipped_names=_listed(skipped_names, total.skipped),
        complete=not stopped,
    )


# --- go test -----------------------------------------------------------------------------

GO_RESULT_RE = re.compile(r"^\s*--- (?P<v>PASS|FAIL|SKIP): (?P<name>\S+) \([\d.]+s\)$")
GO_PACKAGE_RE = re.compile(r"^(?:ok|FAIL|\?)\s+(?P<pkg>\S+)\s+(?:[\d.]+s|\(cached\)|\[[^\]]+\])")
GO_JSON_ACTIONS = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}


def _go(lines: Sequence[str]) -> TestCount | None:
    """go test counts only with `-v` (or `-json`): without it, the tests that pass are not listed."""
    results: list[tuple[str, str]] = []  # (verdict, package::name)
    pending: list[tuple[str, str]] = []
    verbose = False
    for line in lines:
        if line.startswith('{"') and '"Action"' in line:
            event = _json(line)
            test, verdict = event.get("Test"), GO_JSON_ACTIONS.get(str(event.get("Action")))
            if isinstance(test, str) and verdict:
                verbose = True
                results.append((verdict, f"{event.get('Package', '')}::{test}"))
            continue
        if GO_RUN_RE.match(line):
            verbose = True
            continue
        result = GO_RESULT_RE.match(line)
        if result:
            pending.append((result.group("v"), result.group("name")))
            continue
        package = GO_PACKAGE_RE.match(line)
        if package:
            results += [(v, f"{package.group('pkg')}::{name}") for v, name in pending]
            pending = []
    results += pending
    if not verbose:
        return None
    ran = {name for v, name in results if v != "SKIP"}
    skipped = {name for v, name in results if v == "SKIP"}
    failed = sum(v == "FAIL" for v, _ in results)
    executed = sum(v != "SKIP" for v, _ in results)
    return TestCount(
        "go",
        executed,
        executed - failed,
        failed,
        len(results) - executed,
        0,
        _listed(ran, executed),
        _listed(skipped, len(results) - executed),
    )


def _json(line: str) -> dict[str, object]:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


# --- Maven Surefire ----------------------------------------------------------------------

SUREFIRE_TOTAL_RE = re.compile(
    r"^(?:\[(?:INFO|WARNING|WARN|ERROR)\] )?Tests run: (?P<run>\d+), Failures: (?P<failures>\d+),"
    r" Errors: (?P<errors>\d+), Skipped: (?P<skipped>\d+)(?:, Flakes: \d+)?$"
)


def _maven(lines: Sequence[str]) -> TestCount | None:
    """The totals Surefire (and Failsafe) print per module; the per-class lines end with
    `Time elapsed ... in <class>` and are not counted again."""
    counts: list[TestCount] = []
    for line in lines:
        total = SUREFIRE_TOTAL_RE.match(line)
        if total:
            run, skipped = int(total.group("run")), int(total.group("skipped"))
            errors = int(total.group("errors"))
            failed = int(total.group("failures")) + errors
            counts.append(
                TestCount("maven", run - skipped, run - skipped - failed, failed, skipped, 0, errors=errors)
            )
    found = _total(counts)
    # a failed module stops the reactor: the reactor summary lists the modules after it as SKIPPED
    stopped = any(re.search(r"\s\.{2,} SKIPPED$", line) for line in lines)
    return replace(found, complete=False) if found is not None and stopped else found


# --- Gradle ------------------------------------------------------------------------------

GRADLE_TOTAL_RE = re.compile(
    r"^(?P<total>\d+) tests? completed, (?P<failed>\d+) failed(?:, (?P<skipped>\d+) skipped)?$"
)
GRADLE_BUILD_RE = re.compile(r"^BUILD (?:SUCCESSFUL|FAILED)(?: in \S+)?$")
GRADLE_COMMAND_RE = re.compile(r"(?<![\w-])(?:gradle|gradlew)(?:\.bat)?(?![\w-])")
GRADLE_RESULTS = ("build", "test-results")  # <project>/build/test-results/<task>/TEST-*.xml
MAX_GRADLE_REPORTS = 2000
MAX_GRADLE_REPORT_BYTES = 50 * 1024 * 1024  # all of a run's reports together
MAX_GRADLE_DEPTH = 8  # directories below the checkout a Gradle (sub)project may be in
MAX_GRADLE_DIRS = 20000  # directories looked at in the search for them


def _gradle(lines: Sequence[str]) -> TestCount | None:
    """Gradle's `3 tests completed, 1 failed, 1 skipped`, which it prints only when a test failed:
    a passing run is counted from its JUnit XML reports (`gradle_reports`)."""
    counts: list[TestCount] = []
    for line in lines:
        total = GRADLE_TOTAL_RE.match(line.strip())
        if total:
            skipped = int(total.group("skipped") or 0)
            failed = int(total.group("failed"))
            ran = int(total.group("total")) - skipped
            counts.append(TestCount("gradle", ran, ran - failed, failed, skipped, 0))
    return _total(counts)


def ran_gradle(command: str, output: str) -> bool:
    """Whether the command line names Gradle, or its output has Gradle's `BUILD ...` line."""
    if GRADLE_COMMAND_RE.search(command):
        return True
    return any(GRADLE_BUILD_RE.match(without_marker(clean_line(line))) for line in output.splitlines())


def gradle_reports(root: Path) -> list[bytes]:
    """The JUnit XML reports Gradle's test tasks wrote under `root` (the checkout):
    `<project>/build/test-results/<task>/*.xml`, for the root project and subprojects at most
    `MAX_GRADLE_DEPTH` directories down. Gradle replaces a task's reports each time the task runs.

    The tree is the repository's: no link is followed (a linked directory is not entered, a linked
    file not read), hidden directories and `node_modules` are not searched, and each report is read
    as `read_report` reads one. Past `MAX_GRADLE_REPORTS` files or `MAX_GRADLE_REPORT_BYTES` in all,
    nothing is returned: a partial count would read as lost tests."""
    found: list[bytes] = []
    size = 0
    seen = 0
    for top, dirs, files in os.walk(root, followlinks=False):
        here = Path(top).relative_to(root).parts
        seen += len(dirs)
        if seen > MAX_GRADLE_DIRS:
            return []
        if here[-2:] == GRADLE_RESULTS:
            continue  # into each task's directory
        if here[-3:-1] == GRADLE_RESULTS:
            dirs[:] = []  # `binary/`: Gradle's own format
            for name in sorted(files):
                data = _read_plain(Path(top, name), MAX_REPORT_BYTES) if name.endswith(".xml") else None
                if data is None:
                    continue
                size += len(data)
                found.append(data)
                if len(found) > MAX_GRADLE_REPORTS or size > MAX_GRADLE_REPORT_BYTES:
                    return []
            continue
        if here[-1:] == GRADLE_RESULTS[:1]:
            dirs[:] = [d for d in dirs if d == GRADLE_RESULTS[1]]
            continue
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        if len(here) >= MAX_GRADLE_DEPTH:
            dirs[:] = [d for d in dirs if d == GRADLE_RESULTS[0]]
    return found


# --- mocha, RSpec, minitest, PHPUnit ------------------------------------------------------

MOCHA_PASSING_RE = re.compile(r"^\s*(?P<n>\d+) passing(?: \(\d+(?:\.\d+)?m?s\))?$")
MOCHA_PART_RE = re.compile(r"^\s*(?P<n>\d+) (?P<kind>failing|pending)$")


def _mocha(lines: Sequence[str]) -> TestCount | None:
    """Mocha's `2 passing (14ms)`, then `1 pending` and `1 failing` when there are any."""
    counts: list[TestCount] = []
    for i, line in enumerate(lines):
        passing = MOCHA_PASSING_RE.match(line)
        if not passing:
            continue
        parts = {"failing": 0, "pending": 0}
        for after in lines[i + 1 : i + 3]:
            part = MOCHA_PART_RE.match(after)
            if part:
                parts[part.group("kind")] = int(part.group("n"))
        passed, failed = int(passing.group("n")), parts["failing"]
        counts.append(TestCount("mocha", passed + failed, passed, failed, parts["pending"], 0))
    return _total(counts)


RSPEC_SUMMARY_RE = re.compile(
    r"^(?P<examples>\d+) examples?, (?P<failures>\d+) failures?(?:, (?P<pending>\d+) pending)?"
    r"(?:, (?P<outside>\d+) errors? occurred outside of examples)?$"
)


def _rspec(lines: Sequence[str]) -> TestCount | None:
    """RSpec's `4 examples, 1 failure, 1 pending` (pending counts `skip`, `xit` and `pending`); an
    error outside of examples (a spec file that does not load) means the run did not go to its end."""
    counts: list[TestCount] = []
    for line in lines:
        summary = RSPEC_SUMMARY_RE.match(line)
        if summary:
            pending, failed = int(summary.group("pending") or 0), int(summary.group("failures"))
            ran = int(summary.group("examples")) - pending
            outside = int(summary.group("outside") or 0)
            counts.append(TestCount("rspec", ran, ran - failed, failed, pending, 0, complete=not outside))
    return _total(counts)


MINITEST_SUMMARY_RE = re.compile(
    r"^(?P<runs>\d+) runs, \d+ assertions, (?P<failures>\d+) failures, (?P<errors>\d+) errors, (?P<skips>\d+) skips$"
)


def _minitest(lines: Sequence[str]) -> TestCount | None:
    """minitest's `4 runs, 3 assertions, 1 failures, 0 errors, 1 skips` (runs count the skips)."""
    counts: list[TestCount] = []
    for line in lines:
        summary = MINITEST_SUMMARY_RE.match(line)
        if summary:
            skips, errors = int(summary.group("skips")), int(summary.group("errors"))
            failed = int(summary.group("failures")) + errors
            ran = int(summary.group("runs")) - skips
            counts.append(TestCount("minitest", ran, ran - failed, failed, skips, 0, errors=errors))
    return _total(counts)


PHPUNIT_OK_RE = re.compile(r"^OK \((?P<tests>\d+) tests?, \d+ assertions?\)$")
PHPUNIT_TESTS_RE = re.compile(r"^Tests: (?P<tests>\d+), Assertions: \d+(?P<parts>(?:, [A-Za-z ]+: \d+)*)\.$")


def _phpunit(lines: Sequence[str]) -> TestCount | None:
    """PHPUnit's (and Pest's, ParaTest's) `OK (2 tests, 2 assertions)` or
    `Tests: 4, Assertions: 3, Failures: 1, Skipped: 1.`; `Tests` counts the skipped and incomplete."""
    counts: list[TestCount] = []
    for line in lines:
        ok = PHPUNIT_OK_RE.match(line)
        if ok:
            tests = int(ok.group("tests"))
            counts.append(TestCount("phpunit", tests, tests, 0, 0, 0))
            continue
        summary = PHPUNIT_TESTS_RE.match(line)
        if summary:
            parts = {k: int(v) for k, v in re.findall(r", ([A-Za-z ]+): (\d+)", summary.group("parts"))}
            skipped = parts.get("Skipped", 0) + parts.get("Incomplete", 0)
            errors = parts.get("Errors", 0)
            failed = parts.get("Failures", 0) + errors
            ran = int(summary.group("tests")) - skipped
            counts.append(TestCount("phpunit", ran, ran - failed, failed, skipped, 0, errors=errors))
    return _total(counts)


_READERS = (
    _pytest,
    _unittest,
    _jest,
    _vitest,
    _cargo,
    _go,
    _maven,
    _gradle,
    _mocha,
    _rspec,
    _minitest,
    _phpunit,
)
