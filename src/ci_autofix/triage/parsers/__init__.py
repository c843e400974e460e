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
    minitest,
    packages,
    phpunit,
    pylint_family,
    pytest,
    rspec,
    rust,
    shell,
    tap,
    tracebacks,
    typecheck,
    unittest,
)
from ci_autofix.triage.parsers.base import Found, Parser

# (family, entries) in table order: the family names are what the benchmark's ablation switches off
FAMILIES: tuple[tuple[str, tuple[Parser, ...]], ...] = (
    ("pytest", pytest.PARSERS),
    ("unittest", unittest.PARSERS),
    ("typecheck", typecheck.PARSERS),
    ("pylint_family", pylint_family.PARSERS),
    ("formatters", formatters.PARSERS),
    ("rspec", rspec.PARSERS),
    ("minitest", minitest.PARSERS),
    ("javascript", javascript.PARSERS),
    ("golang", golang.PARSERS),
    ("tap", tap.PARSERS),
    ("phpunit", phpunit.PARSERS),
    ("rust", rust.PARSERS),
    ("jvm", jvm.PARSERS),
    ("packages", packages.PARSERS),
    ("docker", docker.PARSERS),
    ("generic", generic.PARSERS),
    ("tracebacks", tracebacks.PARSERS),
    ("shell", shell.PARSERS),
)
PARSERS: tuple[Parser, ...] = tuple(entry for _, entries in FAMILIES for entry in entries)

__all__ = ["FAMILIES", "PARSERS", "Found", "Parser"]
