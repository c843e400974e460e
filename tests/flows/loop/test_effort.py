"""The model's effort as an input, through the entrypoint against the Messages fake: `effort: low`
goes out as the Messages API's `output_config.effort` on every request, the attempt's cost shown
as before; without the input nothing is sent and the model's own default holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.emulator import GitHubEmulator
from tests.testing.loop import Loop, editing

FAILING = "import sys\n\n\nATTEMPTS = 0\n\nsys.exit(0 if ATTEMPTS else 1)\n"


@pytest.mark.slow
def test_effort_is_sent_when_set(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    loop = Loop(github_emulator, tmp_path, {"check.py": FAILING})
    low, calls = loop.propose(loop.ci(), editing(1), effort="low")
    assert (low.outputs["status"], calls) == ("proposed", 2), low.log
    assert [r.get("output_config") for r in loop.requests] == [{"effort": "low"}] * 2
    assert float(low.outputs["cost-usd"]) > 0

    loop.human_commit({"notes.txt": "more\n"})
    default, calls = loop.propose(loop.ci(), editing(1))
    assert (default.outputs["status"], calls) == ("proposed", 2), default.log
    assert all("output_config" not in r for r in loop.requests)


def test_an_unknown_effort_is_refused_with_its_remedy(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    loop = Loop(github_emulator, tmp_path, {"check.py": FAILING})
    bad, calls = loop.propose(loop.ci(), [], effort="extreme")
    assert calls == 0
    assert bad.exit_code != 0 and "effort" in bad.log and "Traceback" not in bad.log
