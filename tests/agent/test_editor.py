"""The text editor's search for text similar to an `old_str` that did not match is bounded in size,
work and time, whatever the model sends and the file holds; when it gives up, the model is told
to view the file."""

from __future__ import annotations

from pathlib import Path

from ci_autofix.agent.deadline import Deadline
from ci_autofix.agent.editor import NEAREST_MAX_CHARS, NEAREST_MAX_WINDOWS, TextEditor, _nearest
from ci_autofix.agent.failure import ToolFailure
from ci_autofix.sandbox import Sandbox

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


def test_a_near_miss_is_still_found() -> None:
    told = _nearest(CALC, "def add(a, b):\n        return a - b")
    assert "lines 1-2" in told and "whitespace or indentation" in told


def test_an_old_str_over_the_size_cap_is_not_searched_for() -> None:
    told = _nearest(CALC, "x = 1\n" * (NEAREST_MAX_CHARS // 6 + 1))
    assert "too long to search" in told and "view" in told and "lines" not in told.split(":")[-1]


def test_an_old_str_at_the_size_cap_is_searched_for() -> None:
    filler = "# " + "y" * (NEAREST_MAX_CHARS - len(CALC) - 4) + "\n"
    old = CALC.replace("a - b", "a + b", 1) + filler
    assert len(old) <= NEAREST_MAX_CHARS
    assert "The most similar text" in _nearest(CALC + filler, old)


def test_the_search_gives_up_after_its_windows() -> None:
    # every line is an anchor: each of its 5,000 starts has four windows to compare
    text = "x = 1\n" * 5000
    told = _nearest(text, "x = 1\ny = 2\nz = 3")
    assert NEAREST_MAX_WINDOWS < 5000 * 4
    assert "gave up" in told and "view the file" in told


def test_the_search_gives_up_at_its_deadline() -> None:
    told = _nearest(CALC, "def add(a, b):\n    return a * b", Deadline(0.0, lambda: 1.0))
    assert "gave up" in told and "view the file" in told


def test_many_occurrences_list_a_bounded_number_of_lines(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("a\n" * 10_000)
    editor = TextEditor(Sandbox(tmp_path))
    try:
        editor({"command": "str_replace", "path": "data.txt", "old_str": "a", "new_str": "b"})
    except ToolFailure as exc:
        told = str(exc)
    assert "occurs 10000 times" in told and "lines 1, 2, 3," in told and told.count(",") < 30
