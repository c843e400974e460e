"""Code or infrastructure: the category of a diagnosis.

Infrastructure signals are matched on the lines the scan found; job-level ones (runner lost,
timeout, cancellation, disk full) decide alone, the others (network, 5xx, rate limit, OOM)
only when no code failure was located. Code categories follow the failures' kinds.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from ci_autofix.triage.model import Category, Failure

JOB_LEVEL: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (
        Category.RUNNER_LOST,
        re.compile(
            r"runner has received a shutdown signal|lost communication with the server|"
            r"hosted runner .{0,80}lost communication|runner .{0,80}(?:did not respond|is offline)",
            re.I,
        ),
    ),
    (
        Category.TIMEOUT,
        re.compile(
            r"has exceeded the maximum execution time|exceeded the maximum time limit|"
            r"No output has been received in the last \d+m|The job exceeded the maximum time limit|"
            r"Build timed out \(after \d+ minutes\)",
            re.I,
        ),
    ),
    (
        Category.DISK_FULL,
        re.compile(
            r"No space left on device|\bENOSPC\b|disk quota exceeded|"
            r"running out of disk space",
            re.I,
        ),
    ),
    (
        Category.CANCELLED,
        re.compile(
            r"^##\[error\]The operation was cancell?ed\.?$|The run was cancell?ed by|"
            r"Canceling since a higher priority waiting request",
            re.I,
        ),
    ),
)
SOFT: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (
        Category.OOM,
        re.compile(
            r"Process completed with exit code 137|Killed signal terminated program|\bOOMKilled\b|oom-kill|"
            r"JavaScript heap out of memory|Cannot allocate memory|fatal error: runtime: out of memory|"
            r"java\.lang\.OutOfMemoryError|The runner .{0,40}ran out of memory",
            re.I,
        ),
    ),
    (
        Category.RATE_LIMIT,
        re.compile(
            r"API rate limit exceeded|secondary rate limit|\btoomanyrequests\b|429 Too Many Requests|"
            r"(?:HTTP|status|code|error)[: ]{1,3}429\b|rate limit(?:ed| exceeded)",
            re.I,
        ),
    ),
    (
        Category.SERVICE,
        re.compile(
            r"\b50[0234] (?:Internal Server Error|Bad Gateway|Service Unavailable|Gateway Time-?out)|"
            r"(?:HTTP|status|status code)[: ]{1,3}50[0234]\b|returned error: 50[0234]|Service Unavailable|"
            r"received unexpected HTTP status: 50[0234]",
            re.I,
        ),
    ),
    (
        Category.NETWORK,
        re.compile(
            r"Could not resolve host|Temporary failure in name resolution|Name or service not known|"
            r"getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|\bEAI_AGAIN\b|\bECONNRESET\b|\bETIMEDOUT\b|"
            r"Connection reset by peer|Connection timed out|Network is unreachable|TLS handshake timeout|"
            r"\bi/o timeout\b|Failed to connect to .{0,80} port|SSL_ERROR_SYSCALL|Read timed out",
            re.I,
        ),
    ),
)
KIND_CATEGORY = {
    "test": Category.TEST,
    "lint": Category.LINT,
    "format": Category.FORMAT,
    "type": Category.TYPE,
    "build": Category.BUILD,
    "dependency": Category.DEPENDENCY,
}
TIE_ORDER = ["dependency", "build", "type", "test", "lint", "format"]
COMMAND_HINTS: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (Category.FORMAT, re.compile(r"\b(?:black|prettier|isort|fmt|format)\b", re.I)),
    (Category.TYPE, re.compile(r"\b(?:mypy|pyright|tsc|typecheck|type-check)\b", re.I)),
    (Category.LINT, re.compile(r"\b(?:ruff|flake8|pylint|eslint|lint|clippy|vet)\b", re.I)),
    (Category.TEST, re.compile(r"\b(?:test|tests|pytest|jest|vitest|mocha|tox|nox|spec|check)\b", re.I)),
    (Category.DEPENDENCY, re.compile(r"\b(?:install|npm ci|sync|restore|bundle|resolve)\b", re.I)),
    (Category.BUILD, re.compile(r"\b(?:build|compile|make|mvn|gradle|cargo|go build|docker)\b", re.I)),
)


def infra_signal(
    lines: Iterable[str], error_like: re.Pattern[str] | None = None
) -> tuple[Category, str] | None:
    """The first job-level infra signal, else the last soft one, with the line that shows it.

    A soft signal (network, 5xx, rate limit, OOM) counts only on a line that reads as an error
    (`error_like`), so a passing test named after ECONNRESET is not an outage.
    """
    soft: tuple[Category, str] | None = None
    for line in lines:
        for category, regex in JOB_LEVEL:
            if regex.search(line):
                return category, line.strip()
        if error_like is not None and not error_like.search(line):
            continue
        for category, regex in SOFT:
            if regex.search(line):
                soft = (category, line.strip())
                break
    return soft


def is_job_level(category: Category) -> bool:
    return any(category == c for c, _ in JOB_LEVEL)


def code_category(failures: list[Failure], commands: list[str]) -> Category:
    """The code category the located failures (or, without any, the failing command) point at."""
    kinds = Counter(f.kind for f in failures if f.kind in KIND_CATEGORY)
    if kinds:
        best = max(kinds.items(), key=lambda kv: (kv[1], -TIE_ORDER.index(kv[0])))
        return KIND_CATEGORY[best[0]]
    text = " ".join(commands)
    for category, regex in COMMAND_HINTS:
        if regex.search(text):
            return category
    return Category.UNKNOWN
