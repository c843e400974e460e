"""The one-pattern prefilter of the parsers' triggers (`Rules.any_trigger`) passes over exactly the
lines that no trigger matches: on every line of the real logs, and on lines built to sit at the
edges of the triggers (flags, groups whose names repeat, unanchored triggers)."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ci_autofix.triage.engine import RULES, Rules, analyse
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
    assert RULES.any_trigger is not None  # the product's triggers can all be joined
    hits = [line for line in LINES if _any(RULES, line)]
    assert len(hits) > 50  # the logs exercise the triggers, not only the misses
    joined = RULES.any_trigger
    assert [line for line in LINES if bool(joined.match(line)) != _any(RULES, line)] == []


@given(
    st.sampled_from(LINES),
    st.sampled_from(["", " ", "  ", "\t", "x", "## ", "FAIL "]),
    st.sampled_from(["", " ", "$", ")", " [E1]", " FAILED"]),
)
def test_the_prefilter_agrees_on_lines_moved_off_the_triggers_edges(
    line: str, before: str, after: str
) -> None:
    variant = before + line + after
    assert RULES.any_trigger is not None
    assert bool(RULES.any_trigger.match(variant)) == _any(RULES, variant)


def test_flags_stay_with_their_trigger_and_unanchored_triggers_match_anywhere() -> None:
    rules = Rules(
        parsers=(
            Parser("tap", re.compile(r"^not ok (?P<n>\d+)", re.I), _nothing),
            Parser("exit", re.compile(r"^exit (?P<n>\d+)$"), _nothing),
            Parser("panic", re.compile(r"panicked at (?P<where>\S+)"), _nothing),
        )
    )
    assert rules.any_trigger is not None
    for line, expected in [
        ("NOT OK 3", True),  # the first trigger's IGNORECASE
        ("EXIT 3", False),  # ... is not the second's
        ("exit 3", True),
        ("exit 3 later", False),
        ("thread 'main' panicked at src/x.rs:1", True),  # not anchored: anywhere in the line
        ("  not ok 1", False),
    ]:
        assert bool(rules.any_trigger.match(line)) is expected == _any(rules, line), line
    empty = Rules(parsers=()).any_trigger
    assert empty is not None and empty.match("anything") is None


def _nothing(*_: object) -> None:
    return None


def test_a_trigger_with_a_branch_outside_its_groups_is_matched_as_a_whole() -> None:
    rules = Rules(parsers=(Parser("either", re.compile(r"^error: (?P<m>.+)|FAILED (?P<t>\S+)$"), _nothing),))
    assert rules.any_trigger is not None
    for line in ["error: boom", "tests FAILED t1", "xx error: boom", "FAILED", "a|b [|] FAILED x"]:
        assert bool(rules.any_trigger.match(line)) == _any(rules, line), line


def test_triggers_that_refer_back_to_a_group_or_set_global_flags_are_not_joined() -> None:
    for pattern in (r"^(a)\1x", r"^(?P<q>a)(?P=q)", r"^(a)?(?(1)b|c)", r"(?i)^fail"):
        rules = Rules(parsers=(*RULES.parsers, Parser("odd", re.compile(pattern), _nothing)))
        assert rules.any_trigger is None, pattern  # every line is then tried parser by parser
        log = FIXTURES / "github-synthetic.txt"
        expected = [f.failure for f in analyse(log).found]
        assert expected and [f.failure for f in analyse(log, rules=rules).found] == expected
    # what looks like a reference but is not one: escaped, or inside a class
    for pattern in (r"^a\\1", r"^[\1]x", r"^\(\?P=x"):
        assert Rules(parsers=(Parser("plain", re.compile(pattern), _nothing),)).any_trigger is not None, (
            pattern
        )
