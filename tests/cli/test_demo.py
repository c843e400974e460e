"""`ci-autofix demo`: it never writes into a directory that holds anything, through the real entrypoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_mistakes import assert_told, ci_autofix


@pytest.mark.parametrize("existing", ["ci.log", "statskit/notes.txt", ".hidden"])
def test_demo_refuses_a_directory_that_is_not_empty(tmp_path: Path, existing: str) -> None:
    target = tmp_path / "mine"
    (target / existing).parent.mkdir(parents=True, exist_ok=True)
    (target / existing).write_text("keep me\n")
    before = sorted(p.relative_to(target).as_posix() for p in target.rglob("*"))
    result = ci_autofix("demo", "--dir", str(target), cwd=tmp_path)
    assert_told(result, 2, f"{target} is not empty")
    assert "--dir" in result.stderr
    assert (target / existing).read_text() == "keep me\n"
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == before
