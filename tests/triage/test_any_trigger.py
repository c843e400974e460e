"""The one-pattern prefilter of the parsers' triggers (`Rules.any_trigger`) passes over exactly the
lines that no trigger matches: on every line of the real logs, and on lines built to sit at the
edges of the triggers (flags, groups whose names repeat, unanchored triggers)."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ci_autofix.triage.engine import RULES, Rules
from ci_autofix.triage.logview import LogView
from ci_autofix.triage.normalize import without_marker
from ci_autofix.triage.parsers.base import Parser

FIXTURES = Path(__file__).parent / "fixtures"


def _any(rules: Rules, line: str) -> bool:
    return any(parser.trigger.search(line) for parser in rules.parsers)


def _lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(FIXTURES.glob("*.txt")):
        view = LogView(path)
        lines += [without_marker(view.clean(i)) for i in range(len(view))]
    return lines


LINES = _lines()


def test_the_prefilter_agrees_with_the_triggers_on_every_line_of_the_real_logs() -> None:
    hits = [line for line in LINES if _any(RULES, line)]
    assert len(hits) > 50  # the logs exercise the triggers, not only the misses
    assert [line for line in LINES if bool(RULES.any_trigger.match(line)) != _any(RULES, line)] == []


@given(
    st.sampled_from(LINES),
    st.sampled_from(["", " ", "  ", "\t", "x", "## ", "FAIL "]),
    st.sampled_from(["", " ", "$", ")", " [E1]", " FAILED"]),
)
def test_the_prefilter_agrees_on_lines_moved_off_the_triggers_edges(
    line: str, before: str, after: str
) -> None:
    variant = before + line + after
    assert bool(RULES.any_trigger.match(variant)) == _any(RULES, variant)


def test_flags_stay_with_their_trigger_and_unanchored_triggers_match_anywhere() -> None:
    def nothing(*_: object) -> None:
        return None

    rules = Rules(
        parsers=(
            Parser("tap", re.compile(r"^not ok (?P<n>\d+)", re.I), nothing),
            Parser("exit", re.compile(r"^exit (?P<n>\d+)$"), nothing),
            Parser("panic", re.compile(r"panicked at (?P<where>\S+)"), nothing),
        )
    )
    for line, expected in [
        ("NOT OK 3", True),  # the first trigger's IGNORECASE
        ("EXIT 3", False),  # ... is not the second's
        ("exit 3", True),
        ("exit 3 later", False),
        ("thread 'main' panicked at src/x.rs:1", True),  # not anchored: anywhere in the line
        ("  not ok 1", False),
    ]:
        assert bool(rules.any_trigger.match(line)) is expected == _any(rules, line), line
    assert Rules(parsers=()).any_trigger.match("anything") is None
