"""Every rule of the patch policy: its stable code, its severity, and what it guards against.

The families in `checks/` produce findings by code; the severity always comes from this table,
so the README's rule list and the behaviour cannot drift apart (`rules_markdown()`).
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
        "test-file-renamed-away", "block", "A test file is renamed to a path that is no longer a test file."
    ),
    Rule(
        "skip-marker-added",
        "block",
        "A skip, xfail, ignore or disabled marker is added to a test "
        "(`pytest.mark.skip/skipif/xfail`, `unittest.skip`, `it.skip`, `xit`, `describe.skip`, Go `t.Skip`, "
        "Rust `#[ignore]`, JUnit `@Disabled`/`@Ignore`).",
    ),
    Rule(
        "only-marker-added",
        "block",
        "A focus marker is added (`it.only`, `test.only`, `describe.only`, `fit`), "
        "which silently skips every other test.",
    ),
    Rule("assertion-removed", "block", "A test file loses assertions without getting as many back."),
    Rule(
        "test-emptied",
        "block",
        "A test body is emptied, replaced by `pass`/`return`, or returns before its code runs.",
    ),
    Rule(
        "protected-path",
        "block",
        "A protected path is changed: a file that decides what CI runs (`.github/**`, `action.yml`/`action.yaml` "
        "anywhere, `.pre-commit-config.yaml`, other CI systems' files) or a `protected-paths` glob.",
    ),
    Rule("binary-file", "block", "A binary file is added, changed or deleted."),
    Rule("symlink", "block", "A symbolic link is added, changed or deleted."),
    Rule("mode-change", "block", "A file's mode changes (for example it becomes executable)."),
    Rule("submodule-change", "block", "A submodule is added, moved or removed."),
    Rule("secret-added", "block", "An added line looks like a secret (a token, key or password)."),
    Rule("too-many-changed-lines", "block", "The diff changes more lines than `max-changed-lines`."),
    Rule("too-many-files", "block", "The diff changes more files than `max-files`."),
    Rule("expected-value-changed", "flag", "An expected value in an assertion or test table changes."),
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
    """The rule table for the README."""
    rows = ["| code | severity | what it catches |", "|---|---|---|"]
    rows += [f"| `{r.code}` | {r.severity} | {r.summary} |" for r in RULES]
    return "\n".join(rows)
