"""What the action writes back to the runner: masks first, outputs, summary, annotations."""

from __future__ import annotations

import io
import re
from pathlib import Path

from ci_autofix.runner import MAX_ANNOTATIONS, MAX_SUMMARY_BYTES, Runner
from ci_autofix.triage.model import Failure

TOKEN = "ghs_0123456789abcdefghijklmnopqrstuvwxyzAB"


def parse_outputs(text: str) -> dict[str, str]:
    """Parse GITHUB_OUTPUT the way the runner's FileCommandManager does."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            j = lines.index(delimiter, i + 1)
            out[name] = "\n".join(lines[i + 1 : j])
            i = j + 1
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
            i += 1
        else:
            i += 1
    return out


def make(tmp_path: Path) -> tuple[Runner, io.StringIO]:
    stream = io.StringIO()
    (tmp_path / "out").touch()
    return Runner(
        in_actions=True, output_path=tmp_path / "out", summary_path=tmp_path / "summary", stream=stream
    ), stream


def test_masks_come_first_and_secrets_never_appear(tmp_path: Path) -> None:
    runner, stream = make(tmp_path)
    runner.mask([TOKEN])
    runner.info(f"using {TOKEN}")
    runner.set_outputs({"result-json": f'{{"t": "{TOKEN}"}}'})
    runner.summary(f"token {TOKEN}")
    log = stream.getvalue().splitlines()
    assert log[0] == f"::add-mask::{TOKEN}"
    assert TOKEN not in "\n".join(log[1:])
    assert TOKEN not in (tmp_path / "out").read_text()
    assert TOKEN not in (tmp_path / "summary").read_text()


def test_outputs_single_and_multi_line(tmp_path: Path) -> None:
    runner, _ = make(tmp_path)
    runner.set_outputs({"status": "proposed", "result-json": "line 1\nline 2\n", "empty": ""})
    parsed = parse_outputs((tmp_path / "out").read_text())
    assert parsed == {"status": "proposed", "result-json": "line 1\nline 2\n", "empty": ""}
    assert re.search(r"^result-json<<ghadelimiter_[0-9a-f-]{36}$", (tmp_path / "out").read_text(), re.M)


def test_a_value_cannot_forge_another_output(tmp_path: Path) -> None:
    runner, _ = make(tmp_path)
    runner.set_outputs({"reason": "x\nstatus=applied"})
    assert parse_outputs((tmp_path / "out").read_text()) == {"reason": "x\nstatus=applied"}


def test_annotations_are_escaped_and_capped(tmp_path: Path) -> None:
    runner, stream = make(tmp_path)
    failures = [
        Failure(
            tool="ruff", kind="lint", message=f"line one\n100% bad {i}", file="src/a,b.py", line=i, column=3
        )
        for i in range(1, 15)
    ]
    failures.append(Failure(tool="pytest", kind="test", message="no file"))
    assert runner.annotate(failures) == MAX_ANNOTATIONS
    first = stream.getvalue().splitlines()[0]
    assert first == "::error file=src/a%2Cb.py,line=1,col=3,title=ruff%3A lint::line one%0A100%25 bad 1"


def test_the_summary_stays_under_the_runners_limit(tmp_path: Path) -> None:
    runner, _ = make(tmp_path)
    runner.summary("x" * (2 * MAX_SUMMARY_BYTES))
    data = (tmp_path / "summary").read_bytes()
    assert len(data) < MAX_SUMMARY_BYTES
    assert data.rstrip().endswith(b"*(summary truncated)*")


def test_outside_actions_there_are_no_workflow_commands() -> None:
    stream = io.StringIO()
    runner = Runner(in_actions=False, stream=stream)
    runner.mask([TOKEN])
    runner.warning(f"careful {TOKEN}")
    runner.annotate([Failure(tool="mypy", kind="type", message="bad", file="a.py", line=2)])
    assert stream.getvalue() == "warning: careful [REDACTED]\na.py:2: bad\n"


def test_a_local_runner_words_settings_as_flags() -> None:
    """The ladder words a setting as the Action's input; a local command's runner names its flag."""
    from ci_autofix.flows.ended import local_words

    out = io.StringIO()
    runner = Runner(in_actions=False, stream=out, words=local_words)
    runner.info("set `test-command` to it to have the fix verified")
    runner.warning("the `fixers` input names 'x'")
    assert out.getvalue() == (
        "set `--test-command` to it to have the fix verified\nwarning: the `--fixers` flag names 'x'\n"
    )
