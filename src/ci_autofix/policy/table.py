"""Every rule of the patch policy: its stable code, its severity, and what it guards against.

The families in `checks/` produce findings by code; the severity always comes from this table,
so the documented rule list (docs/policy.md) and the behaviour cannot drift apart (`rules_markdown()`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_autofix.policy.model import Finding, Severity


@dataclass(frozen=True)
class Rule:
    code: str
    severity: Severity
    summary: str


RULES: tuple[Rule, ...] = (
    Rule("unparseable-diff", "block", "The diff cannot be parsed, so nothing in it can be checked."),
    Rule("test-file-deleted", "block", "A test file is deleted."),
    Rule(
        "test-file-renamed-away",
        "block",
        "A test file is renamed to a path its runner does not collect (a rename is a deletion plus an addition).",
    ),
    Rule(
        "skip-marker-added",
        "block",
        "A skip, xfail, ignore or disabled marker is added to a test "
        "(`pytest.mark.skip/skipif/xfail`, `unittest.skip`, `it.skip`, `xit`, `describe.skip`, Go `t.Skip`, "
        "Rust `#[ignore]`, JUnit `@Disabled`/`@Ignore`/`@EnabledIf…`, RSpec `xit`/`xdescribe`/`xcontext`/"
        "`skip`/`pending`/`skip: true`/`:skip`, minitest `skip`, PHPUnit `markTestSkipped`/`markTestIncomplete`/"
        "`#[RequiresPhp…]`, xUnit `[Fact(Skip = …)]`/`[Theory(Skip = …)]`, NUnit and MSTest `[Ignore]`/"
        "`[Explicit]`), also through an alias, `getattr`, "
        'bracket notation (`it["skip"]`), destructuring or a helper (`tb.SkipNow()`).',
    ),
    Rule(
        "only-marker-added",
        "block",
        "A focus marker is added (`it.only`, `test.only`, `describe.only`, `fit`; RSpec `fit`/`fdescribe`/"
        "`fcontext`/`focus: true`/`:focus`), "
        "which silently skips every other test.",
    ),
    Rule(
        "assertion-removed",
        "block",
        "A test file loses assertions without getting as many back (pytest and unittest, Jest/Vitest/Mocha, "
        "Go, Rust, JUnit, PHPUnit, xUnit/NUnit/MSTest `Assert.*`, RSpec `expect`, minitest `assert_*`/`refute_*`).",
    ),
    Rule(
        "test-emptied",
        "block",
        "A test body is emptied, replaced by `pass`/`return`, or returns before its code runs "
        "(also behind an `if`, such as an environment check, at its start).",
    ),
    Rule(
        "assertion-vacuous",
        "block",
        "An assertion can no longer fail: `or True`, a value compared with itself, its failure caught "
        "(`except AssertionError`, an empty `catch`), a guard that is never true (`if (false)`), or a "
        "failure turned into a log line (`t.Fatalf` to `t.Logf`).",
    ),
    Rule(
        "assertion-widened",
        "block",
        "An expected exception is widened to any exception (`pytest.raises(Exception)`, `toThrow()`, "
        "`assertThrows(Exception.class, …)`, a bare `#[should_panic]`).",
    ),
    Rule(
        "test-removed",
        "block",
        "The diff has fewer test definitions than before: a test renamed out of the runner's pattern "
        "or its `#[test]`/`@Test` removed (counted over the whole diff, so moved tests are fine).",
    ),
    Rule(
        "test-case-removed",
        "block",
        "A row of a parametrized test table is removed (`parametrize`, `test.each`, a Go table, `@CsvSource`).",
    ),
    Rule(
        "exit-in-test",
        "block",
        "Test code ends the process (`raise SystemExit`, `os._exit`, `process.exit`, `os.Exit(0)`, "
        "`std::process::exit`, `System.exit`).",
    ),
    Rule(
        "collection-hook-added",
        "block",
        "A pytest hook or setting drops tests from collection or rewrites results (`collect_ignore`, "
        "`pytest_collection_modifyitems`, `pytest_runtest_makereport`, `report.outcome = …`).",
    ),
    Rule(
        "test-selection-narrowed",
        "block",
        "The test run is narrowed: `-k`, `-m`, `--deselect`, `--ignore` in `addopts` or a test script, a "
        "new `testpaths`/`python_files`, jest `testPathIgnorePatterns`, a Go build tag or Rust `cfg` on a "
        "test file.",
    ),
    Rule(
        "test-command-neutered",
        "block",
        "A test command no longer fails on failure (a fallback to `true` or `exit 0`, a Makefile `-` recipe, nox "
        "`success_codes`, tox `ignore_outcome`, Maven `testFailureIgnore`, Gradle `ignoreFailures`).",
    ),
    Rule(
        "import-hook-file",
        "block",
        "A file Python runs at start-up is added or changed (`sitecustomize.py`, `usercustomize.py`, `*.pth`).",
    ),
    Rule(
        "git-filter-attribute",
        "block",
        "`.gitattributes` gains a `filter=`, `diff=` or `merge=` driver, which makes git run a command.",
    ),
    Rule(
        "protected-path",
        "block",
        "A protected path is changed: a file that decides what CI runs, who must review or what a merge bot "
        "merges (`.github/**`, `action.yml`/`action.yaml` anywhere, `CODEOWNERS`, merge bots' and other CI "
        "systems' files: the table under Security) or a `protected-paths` glob.",
    ),
    Rule("binary-file", "block", "A binary file is added, changed or deleted."),
    Rule("symlink", "block", "A symbolic link is added, changed or deleted."),
    Rule("mode-change", "block", "A file's mode changes (for example it becomes executable)."),
    Rule("submodule-change", "block", "A submodule is added, moved or removed."),
    Rule(
        "secret-added",
        "block",
        "An added line looks like a secret (a token, key or password), also when it is split across "
        "string literals.",
    ),
    Rule(
        "changes-tests",
        "block",
        "Verification: the failing command passes only with the fix's own changes to tests or test "
        "configuration (with the failing commit's versions of those files it still fails), and the agent's "
        "root cause does not name the test it says was wrong.",
    ),
    Rule(
        "tests-dropped",
        "block",
        "Verification: fewer tests run, or more are skipped or deselected, after the fix than before it "
        "(counted from the runner's own summary or report, naming the tests that disappeared).",
    ),
    Rule("too-many-changed-lines", "block", "The diff changes more lines than `max-changed-lines`."),
    Rule("too-many-files", "block", "The diff changes more files than `max-files`."),
    Rule(
        "changes-tests-explained",
        "flag",
        "As `changes-tests`, but the agent's root cause names the test it says was wrong: proposed only "
        "as a draft labelled `ci-autofix:changes-tests`, with both outputs in the PR.",
    ),
    Rule(
        "test-infra-changed",
        "flag",
        "Test infrastructure changes: conftest files, pytest/tox/nox configuration, jest/vitest "
        "configuration, package.json test scripts, Makefile test targets, build constraints of test files.",
    ),
    Rule(
        "expected-value-changed",
        "flag",
        "An expected value in an assertion or test table changes (a reflow that keeps every token is not a change).",
    ),
    Rule(
        "suppression-added",
        "flag",
        "A new `# noqa`, `type: ignore`, `eslint-disable`, `@ts-ignore`, "
        "`#[allow(...)]`, `//nolint` or similar suppression.",
    ),
    Rule("lockfile-changed", "flag", "A dependency lockfile changes."),
    Rule("dependency-pin-changed", "flag", "A dependency requirement or pin changes in a manifest."),
    Rule("network-call-in-test", "flag", "A test gains a network call."),
    Rule("process-spawn-in-test", "flag", "A test gains a call that starts a process."),
    Rule("pipe-to-shell", "flag", "A download is piped into a shell or interpreter (`curl … | sh`)."),
    Rule(
        "decode-and-exec",
        "flag",
        "Encoded data is decoded and executed (`base64 -d | sh`, `exec(b64decode(…))`).",
    ),
)
BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}


def finding(code: str, message: str, path: str | None = None, line: int | None = None) -> Finding:
    """A finding for the rule `code`, with the severity the table gives it."""
    return Finding(code, BY_CODE[code].severity, message, path, line)


def rules_markdown() -> str:
    """The rule table of docs/policy.md."""
    rows = ["| code | severity | what it catches |", "|---|---|---|"]
    rows += [f"| `{r.code}` | {r.severity} | {r.summary} |" for r in RULES]
    return "\n".join(rows)
