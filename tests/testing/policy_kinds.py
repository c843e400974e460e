"""Adversarial diffs by kind, each with look-alikes: the case type the `test_kinds_*` modules share.

A case is two commits of a scratch repository (file path -> content, None = absent) and what
the policy must answer: `blocked` or `flagged` with the rule code that says why, or `clean`.
Each case runs twice, on the bare diff ("hunks") and with the whole files ("contents"), unless
it names the one mode it holds for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import pytest

from ci_autofix.policy import Verdict

Want = Literal["blocked", "flagged", "clean"]
MODES = ("hunks", "contents")


@dataclass(frozen=True)
class Case:
    id: str
    before: Mapping[str, str | None]
    after: Mapping[str, str | None]
    want: Want
    code: str | None = None  # the rule that must be among the findings
    modes: tuple[str, ...] = MODES

    @property
    def adversarial(self) -> bool:
        return self.want != "clean"


def params(cases: Sequence[Case]) -> list[object]:
    return [pytest.param(case, mode, id=f"{case.id}[{mode}]") for case in cases for mode in case.modes]


def check_case(check_in: Callable[..., Verdict], case: Case, mode: str) -> None:
    verdict = check_in(mode, dict(case.before), dict(case.after))
    assert verdict.status == case.want, verdict.to_text()
    if case.code is not None:
        assert case.code in verdict.codes, verdict.to_text()


def edit(base: str, old: str, new: str) -> str:
    """`base` with its first `old` replaced by `new` (which must be there: a case must change something)."""
    assert old in base, old
    return base.replace(old, new, 1)
