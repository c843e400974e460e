"""The evidence verification collects: each command before and after the fix, and the verdict,
rendered for the PR body and the job summary."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ci_autofix import shell
from ci_autofix.ladder.testcount import TestCount
from ci_autofix.markdown import code_span, fence, html_code
from ci_autofix.redact import redact

VerificationState = Literal["verified", "unverified", "failed"]
Role = Literal["failing", "test", "lint"]
TAIL_LINES = 40
TAIL_CHARS = 4000


_NOT_FOUND_EXIT = 127


@dataclass(frozen=True)
class Evidence:
    """One run of one command: what it was, how it ended, and the last lines it printed."""

    command: str
    exit_code: int | None
    timed_out: bool
    tail: str
    not_found: bool = False
    duration_s: float = 0.0
    tests: TestCount | None = None  # what the test runner's summary (or report) says it ran
    absent: tuple[str, ...] = ()  # programs the command names that are not installed where it ran

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def missing_tool(self) -> bool:
        return self.not_found or self.exit_code == _NOT_FOUND_EXIT

    def describe(self) -> str:
        if self.missing_tool:
            return "not found"
        if self.timed_out:
            return f"timed out ({self.duration_s:.0f}s)"
        return f"exit {self.exit_code}" + (f"; tests: {self.tests.describe()}" if self.tests else "")

    @classmethod
    def of(cls, command: str, result: shell.Completed, *, tests: TestCount | None = None) -> Evidence:
        return cls(
            command,
            result.exit_code,
            result.timed_out,
            _tail(result.output),
            result.not_found,
            round(result.duration_s, 2),
            tests,
        )


@dataclass(frozen=True)
class EvidencePair:
    command: str
    role: Role
    before: Evidence | None
    after: Evidence


@dataclass(frozen=True)
class OriginalTests:
    """The failing commands run against the fixed code with the failing commit's versions of the
    test files and test configuration the fix changed."""

    paths: list[str]
    verification: Verification
    passed: bool


@dataclass(frozen=True)
class Verification:
    outcome: VerificationState
    reason: str
    evidence: list[EvidencePair] = field(default_factory=list)
    setup: Evidence | None = None
    tree: str | None = None  # the git tree every command ran on (a clean checkout of it)
    original_tests: OriginalTests | None = None
    tests_dropped: list[str] = field(default_factory=list)  # Markdown: a command, and the tests it lost
    # the tools' versions, the fixers' and verification's alike: (package, version, where it was read)
    tools: list[tuple[str, str, str]] = field(default_factory=list)
    toolchains: str = ""  # Markdown: the runtimes provisioned for the commands (`Provisioned.to_markdown`)
    resolved: str = ""  # the date the job's installs were resolved at, when they were (`CleanRuns`)

    @property
    def changes_tests(self) -> bool:
        """The fix makes the failing command pass only together with its own changes to the tests."""
        return self.original_tests is not None and not self.original_tests.passed

    def to_markdown(self, heading: str = "### Verification") -> str:
        title = {"verified": "verified ✅", "unverified": "unverified ⚠️", "failed": "failed ❌"}[self.outcome]
        parts = [f"{heading}: {title}", _escape(self.reason)]
        telling = self.telling()
        if telling is not None:  # what decided it, shown open: a wrong fix, or a command that could not run
            what, evidence = telling
            parts.append(
                f"The output of {code_span(evidence.command)} {what} ({evidence.describe()}), its last lines:\n\n"
                + fence(evidence.tail or "(it printed nothing)", "text")
            )
        if self.tree:
            parts.append(
                f"Every command ran on a clean checkout of git tree {code_span(self.tree)} and nothing else "
                "(no file an earlier command left behind; `git rev-parse <commit>^{tree}` prints a commit's tree)."
            )
        rows = ["| command | before the fix | after the fix |", "|---|---|---|"]
        if self.setup is not None:
            rows.append(
                f"| {code_span(self.setup.command, table=True)} (setup) | | {self.setup.describe()} |"
            )
        for pair in self.evidence:
            before = pair.before.describe() if pair.before else "not run"
            label = {"failing": "", "test": " (test-command)", "lint": " (lint)"}[pair.role]
            rows.append(
                f"| {code_span(pair.command, table=True)}{label} | {before} | {pair.after.describe()} |"
            )
        if len(rows) > 2:
            parts.append("\n".join(rows))
        if self.tools:
            parts.append(
                "Tool versions, as CI ran them (the fixers and every command above used these):\n"
                + "\n".join(
                    f"- {package} {code_span(version)}: {code_span(source)}"
                    for package, version, source in self.tools
                )
            )
        if self.resolved:
            parts.append(_escape(self.resolved))
        if self.toolchains:
            parts.append(self.toolchains.rstrip())
        shown = [(p.command, p.after) for p in self.evidence if not p.after.ok]
        if self.setup is not None and not self.setup.ok:
            shown.insert(0, (self.setup.command, self.setup))
        if self.outcome == "verified":
            shown = [(p.command, p.after) for p in self.evidence if p.role == "failing"][:1]
        for command, evidence in shown[:4]:
            if evidence.tail and (telling is None or evidence is not telling[1]):
                parts.append(
                    f"<details><summary>Output after the fix: {html_code(command)}</summary>\n\n"
                    f"{fence(evidence.tail, 'text')}\n\n</details>"
                )
        if self.tests_dropped:
            parts.append("**Tests lost.** " + " ".join(self.tests_dropped))
        if self.original_tests is not None:
            parts.append(self._original_tests(self.original_tests))
        return "\n\n".join(parts)

    def telling(self) -> tuple[str, Evidence] | None:
        """For an outcome that is not `verified`, the run that tells why, and when it ran: a setup
        that failed, else the first failing command that did not pass after the fix, else the run
        before the fix of a failure that did not reproduce here, else the first run that did not pass."""
        if self.outcome == "verified" or self.changes_tests:  # the original tests' run tells it
            return None
        if self.setup is not None and not self.setup.ok:
            return "when preparing the environment", self.setup
        pairs = sorted(self.evidence, key=lambda p: p.role != "failing")
        if after := next((p.after for p in pairs if not p.after.ok), None):
            return "after the fix", after
        before = next((p.before for p in pairs if p.role == "failing" and p.before is not None), None)
        return ("before the fix", before) if before is not None else None

    @staticmethod
    def _original_tests(guard: OriginalTests) -> str:
        files = ", ".join(code_span(path) for path in guard.paths[:10])
        more = f" and {len(guard.paths) - 10} more" if len(guard.paths) > 10 else ""
        verdict = (
            "they pass too: the fix does not depend on its own changes to the tests."
            if guard.passed
            else "they still fail: the fix makes CI pass by changing the tests."
        )
        inner = guard.verification.to_markdown("#### With the failing commit's tests")
        return f"The fix changes tests or their configuration ({files}{more}); with the failing commit's versions of those files, {verdict}\n\n{inner}"


def _tail(output: str) -> str:
    lines = redact(output).rstrip("\n").splitlines()[-TAIL_LINES:]
    text = "\n".join(lines)
    return text if len(text) <= TAIL_CHARS else "…" + text[-TAIL_CHARS:]


def _escape(text: str) -> str:
    """One paragraph; HTML tags outside code spans shown, not rendered."""
    text = " ".join(text.split())
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)
