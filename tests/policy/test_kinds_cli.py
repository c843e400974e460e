"""`repo_blob_reader(DIR)`: whole files read from a repository, as the ladder can give them to the policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ci_autofix.errors import UserError
from ci_autofix.policy import check_diff
from ci_autofix.policy.contents import repo_blob_reader

TEST = "tests/test_pager.py"
BEFORE = "from app import Pager\n\n\ndef test_page():\n    assert Pager().page == 0\n"
# `pager.skip(2)` is the application's own method: only the whole file shows pytest is not involved
AFTER = BEFORE + "\n\ndef test_skip():\n    pager = Pager()\n    pager.skip(2)\n    assert pager.page == 2\n"


def test_whole_files_resolve_a_look_alike_that_the_hunks_cannot(repo: Any) -> None:
    base = repo.commit({TEST: BEFORE})
    head = repo.commit({TEST: AFTER})
    diff = repo.git.diff(base, head)
    assert check_diff(diff).codes == ["skip-marker-added"]
    assert check_diff(diff, read_blob=repo_blob_reader(repo.root)).status == "clean"


def test_whole_files_still_block_an_aliased_skip(repo: Any) -> None:
    base = repo.commit({TEST: BEFORE})
    aliased = "import pytest as pt\n" + BEFORE.replace("def test_page", "@pt.mark.skip\ndef test_page")
    head = repo.commit({TEST: aliased})
    verdict = check_diff(repo.git.diff(base, head), read_blob=repo_blob_reader(repo.root))
    assert verdict.codes == ["skip-marker-added"]


def test_an_unknown_blob_falls_back_to_the_hunks(repo: Any) -> None:
    base = repo.commit({TEST: BEFORE})
    head = repo.commit({TEST: AFTER})
    diff = repo.git.diff(base, head)
    other = type(repo)(repo.root.parent / "other")  # the fixture's class, not a conftest import
    other.commit({"README": "x\n"})
    assert check_diff(diff, read_blob=repo_blob_reader(other.root)).codes == ["skip-marker-added"]


def test_a_directory_that_is_not_a_repository_is_an_error_with_a_remedy(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a git repository") as caught:
        repo_blob_reader(tmp_path / "none")
    assert "What to do" in str(caught.value)
