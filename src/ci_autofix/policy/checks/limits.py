"""The knobs of the policy that come from the action's inputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ci_autofix.paths import DEFAULT_PROTECTED


@dataclass(frozen=True)
class Limits:
    protected: Sequence[str] = DEFAULT_PROTECTED
    max_changed_lines: int = 200
    max_files: int = 10
