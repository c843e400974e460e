"""Deterministic fixers: the first rung of the fix ladder, run before any model.

`plan_fixers` picks, from the diagnosis and the repository's configuration, the fixers to run
(formatters and linters in write mode), the paths they may change and the version the
repository pins. `run_fixers` installs pinned versions when needed, runs each fixer in the
sandbox and reports what it changed.
"""

from ci_autofix.fixers.catalog import FIXERS, Fixer
from ci_autofix.fixers.plan import FixerSpec, parse_requested, plan_fixers
from ci_autofix.fixers.run import FixerRun, run_fixers

FIXER_NAMES: tuple[str, ...] = tuple(f.name for f in FIXERS)

__all__ = [
    "FIXERS",
    "FIXER_NAMES",
    "Fixer",
    "FixerRun",
    "FixerSpec",
    "parse_requested",
    "plan_fixers",
    "run_fixers",
]
