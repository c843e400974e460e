"""The parser table: every tool family's entries, most specific first.

A line is offered to the entries in order; the first entry whose trigger matches and whose
extractor returns a `Found` wins the line.
"""

from __future__ import annotations

from ci_autofix.triage.parsers import (
    docker,
    formatters,
    generic,
    golang,
    javascript,
    jvm,
    packages,
    pylint_family,
    pytest,
    rust,
    shell,
    tracebacks,
    typecheck,
    unittest,
)
from ci_autofix.triage.parsers.base import Found, Parser

PARSERS: tuple[Parser, ...] = (
    *pytest.PARSERS,
    *unittest.PARSERS,
    *typecheck.PARSERS,
    *pylint_family.PARSERS,
    *formatters.PARSERS,
    *javascript.PARSERS,
    *golang.PARSERS,
    *rust.PARSERS,
    *jvm.PARSERS,
    *packages.PARSERS,
    *docker.PARSERS,
    *generic.PARSERS,
    *tracebacks.PARSERS,
    *shell.PARSERS,
)

__all__ = ["PARSERS", "Found", "Parser"]
