"""The PR's account of the fixers: each one's version and where that version was read."""

from __future__ import annotations

from ci_autofix.deliver.report import _changes
from ci_autofix.fixers.run import FixerRun
from ci_autofix.ladder.run import Proposal
from ci_autofix.policy.model import Verdict


def test_each_fixer_says_its_version_and_where_it_was_read() -> None:
    runs = [
        FixerRun(
            name="ruff-format",
            version="0.8.6",
            changed_files=["demo.py"],
            pin_source="the failed job's log: Successfully installed ruff-0.8.6 `x`",
        ),
        FixerRun(name="black", version="26.10.1", changed_files=["b.py"]),
    ]
    proposal = Proposal("f" * 40, "h" * 40, "diff", ["demo.py", "b.py"], runs, None, Verdict())
    lines = _changes(proposal).splitlines()
    assert lines[0] == (
        "- **ruff-format** `0.8.6` (version: "
        "`` the failed job's log: Successfully installed ruff-0.8.6 `x` ``): `demo.py`"
    )
    assert lines[1] == "- **black** `26.10.1`: `b.py`"  # no pin: nothing claimed
