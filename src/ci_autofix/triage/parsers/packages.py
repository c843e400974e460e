"""Package managers: npm, pnpm, yarn, pip/uv/poetry resolution errors."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, line_parser, text

NPM_RE = re.compile(r"^npm (?:ERR!|error) (?P<msg>.*)$")
DEPENDENCY_WORDS = re.compile(
    r"ERESOLVE|E404|ETARGET|ENOVERSIONS|No matching version|peer dep|Could not resolve dependency|"
    r"notarget|404 Not Found|unable to resolve dependency tree|ERR_PNPM_(?:NO_MATCHING_VERSION|FETCH_404|"
    r"PEER_DEP|OUTDATED_LOCKFILE|LOCKFILE)",
    re.I,
)


def _npm(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    if i > 0 and NPM_RE.match(text(view, i - 1)):
        return None  # a block is reported once, from its first line
    last = i
    for j in range(i + 1, min(len(view), i + 60)):
        if not NPM_RE.match(text(view, j)):
            break
        last = j
    body = [NPM_RE.match(text(view, j)) for j in range(i, last + 1)]
    lines = [m.group("msg").strip() for m in body if m and m.group("msg").strip()]
    joined = " ".join(lines)
    kind = "dependency" if DEPENDENCY_WORDS.search(joined) else "build"
    message = next(
        (ln for ln in lines if not ln.startswith(("code ", "A complete log"))), joined[:200] or "npm failed"
    )
    return Found(Failure(tool="npm", kind=kind, message=message), i, last)


PARSERS = (
    Parser("npm", NPM_RE, _npm),
    line_parser("pnpm", "pnpm", "dependency", r"^\s*(?P<rule>ERR_PNPM_[A-Z_]+)\b[:\s]*(?P<msg>.*)$"),
    line_parser("yarn", "yarn", "build", r"^error (?P<msg>(?!Command failed).+)$", resolution=True),
    line_parser(
        "pip-resolve",
        "pip",
        "dependency",
        r"^ERROR: (?P<msg>(?:Could not find a version that satisfies|No matching distribution found|"
        r"ResolutionImpossible|Cannot install|pip's dependency resolver).*)$",
        after=6,
    ),
    line_parser(
        "poetry-uv-resolve",
        "python-deps",
        "dependency",
        r"^\s*(?:×|error:)?\s*(?P<msg>(?:No solution found when resolving|Because .+ depends on|"
        r"SolverProblemError|version solving failed).*)$",
        after=8,
    ),
)
