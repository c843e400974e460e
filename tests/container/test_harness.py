"""The harness's reading of the runner's files, checked against what our runner channel writes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ci_autofix.runner import Runner
from tests.container.container_harness import input_variable, parse_outputs


def test_outputs_written_by_the_runner_channel_read_back_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "set_output"
    written = {
        "status": "proposed",
        "reason": "",
        "result-json": '{"a": 1,\n "b": "x=y"}',
        "url": "http://h/p?q=1",
    }
    Runner(in_actions=True, output_path=path, stream=io.StringIO()).set_outputs(written)

    assert parse_outputs(path.read_text()) == written


def test_a_block_without_its_delimiter_is_an_error_as_on_the_runner() -> None:
    with pytest.raises(ValueError, match="delimiter"):
        parse_outputs("status=halted\nresult-json<<EOF\n{}\n")


def test_a_line_that_is_neither_form_is_an_error() -> None:
    with pytest.raises(ValueError, match="invalid line"):
        parse_outputs("status\n")


@pytest.mark.parametrize(
    ("name", "variable"),
    [("github-token", "INPUT_GITHUB-TOKEN"), ("max attempts", "INPUT_MAX_ATTEMPTS"), ("mode", "INPUT_MODE")],
)
def test_input_names_become_variables_as_the_runner_makes_them(name: str, variable: str) -> None:
    assert input_variable(name) == variable
