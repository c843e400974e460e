"""The verdict of the patch policy: findings with a code, a severity, and where they are."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

from ci_autofix.markdown import code_span

Severity = Literal["block", "flag"]
VerdictStatus = Literal["clean", "flagged", "blocked"]

_MARKDOWN_ROWS = 50


@dataclass(frozen=True)
class Finding:
    code: str
    severity: Severity
    message: str
    path: str | None = None
    line: int | None = None

    @property
    def where(self) -> str:
        if self.path is None:
            return "(whole diff)"
        return f"{self.path}:{self.line}" if self.line else self.path

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Verdict:
    findings: list[Finding] = field(default_factory=list)

    def with_findings(self, extra: Sequence[Finding]) -> Verdict:
        """This verdict with `extra` findings (from verification) added, blocking ones first."""
        found = [*self.findings, *extra]
        found.sort(key=lambda f: (f.severity != "block", f.path or "", f.line or 0, f.code))
        return Verdict(found)

    @property
    def blocked(self) -> bool:
        return any(f.severity == "block" for f in self.findings)

    @property
    def flagged(self) -> bool:
        return any(f.severity == "flag" for f in self.findings)

    @property
    def status(self) -> VerdictStatus:
        if self.blocked:
            return "blocked"
        return "flagged" if self.flagged else "clean"

    @property
    def codes(self) -> list[str]:
        """The distinct rule codes found, blocking ones first."""
        return list(dict.fromkeys(f.code for f in self.findings))

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "block"]

    @property
    def flags(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "flag"]

    def to_json(self) -> str:
        return json.dumps(
            {"status": self.status, "codes": self.codes, "findings": [f.to_dict() for f in self.findings]},
            indent=2,
            ensure_ascii=False,
        )

    def to_text(self) -> str:
        lines = [f"{f.severity.upper():5} {f.code:24} {f.where}: {f.message}" for f in self.findings]
        counts = f"{len(self.blocking)} blocking, {len(self.flags)} flagged"
        lines.append(f"patch policy: {self.status} ({counts})")
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """A section for the PR body and the job summary. A finding's place and message (which can
        quote the diff: a path, an expected value) are shown as code, so they cannot render."""
        if not self.findings:
            return "**Patch policy: clean.** No rule of the patch policy matched this diff."
        head = {
            "blocked": "**Patch policy: blocked.** This diff breaks a rule that no fix may break; nothing "
            "was pushed.",
            "flagged": "**Patch policy: flagged.** Please look at these points before approving.",
        }[self.status]
        rows = ["| | rule | where | what |", "|---|---|---|---|"]
        for f in self.findings[:_MARKDOWN_ROWS]:
            mark = "⛔ block" if f.severity == "block" else "⚠️ flag"
            rows.append(
                f"| {mark} | `{f.code}` | {code_span(f.where, table=True)} | {code_span(f.message, table=True)} |"
            )
        if len(self.findings) > _MARKDOWN_ROWS:
            rows.append(f"| | | | … and {len(self.findings) - _MARKDOWN_ROWS} more |")
        return head + "\n\n" + "\n".join(rows)
