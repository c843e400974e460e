"""Untrusted branch names and commit ids (`refs`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.errors import UserError
from ci_autofix.refs import branch_problem, check_branch_name, check_sha
from tests.testing.git import try_git

SHA = "a" * 40

GOOD = ["main", "feature/x", "release-1.2", "user/topic_1", "ci-autofix/main/123", "a.b"]
BAD = [
    "",
    "-x",
    "--upload-pack=evil",
    "../x",
    "a..b",
    "refs/heads/main",
    "main:refs/heads/x",
    "a b",
    "a\nb",
    "a\tb",
    "a~1",
    "a^",
    "a:b",
    "a?",
    "a*",
    "a[",
    "a\\b",
    "/a",
    "a/",
    "a//b",
    ".a",
    "a/.b",
    "a.lock",
    "a/b.lock",
    "a.",
    "@",
    "a@{1}",
    "x" * 256,
    "a\x7fb",
    "a\x00b",
]


@pytest.mark.parametrize("name", GOOD)
def test_plain_branches_pass(name: str) -> None:
    assert branch_problem(name) is None
    assert check_branch_name(name) == name


@pytest.mark.parametrize("name", BAD)
def test_anything_else_is_refused(name: str) -> None:
    assert branch_problem(name) is not None
    with pytest.raises(UserError, match="not a valid branch name"):
        check_branch_name(name)


@pytest.mark.parametrize("name", [n for n in GOOD + BAD if n and "\x00" not in n])
def test_we_are_at_least_as_strict_as_git(name: str, tmp_path: Path) -> None:
    git_ok = try_git(tmp_path, "check-ref-format", "--branch", name).returncode == 0
    if branch_problem(name) is None:
        assert git_ok, f"we accept {name!r} but git does not"


def test_shas() -> None:
    assert check_sha(SHA) == SHA
    for bad in ["abc", SHA.upper(), SHA + "0", "--all", "g" * 40]:
        with pytest.raises(UserError):
            check_sha(bad)
