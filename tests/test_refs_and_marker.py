"""Untrusted branch names and the suggestion record read back from a PR body."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.errors import UserError
from ci_autofix.refs import branch_problem, check_branch_name, check_sha
from ci_autofix.state import marker
from tests.testing.git import try_git

SHA = "a" * 40
FIX = "b" * 40

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


def record(**kw: object) -> marker.Suggestion:
    base: dict[str, object] = dict(
        run_id=5,
        failing_branch="feature/x",
        head_sha=SHA,
        fix_sha=FIX,
        fix_branch="ci-autofix/feature/x/5",
        attempt=2,
        verification="verified",
    )
    base.update(kw)
    return marker.Suggestion.model_validate(base)


def test_the_record_round_trips_through_a_body() -> None:
    body = f"Some text\n\n{record().render()}\n"
    assert marker.parse(body) == record()


def test_a_body_without_a_record_or_with_a_broken_one() -> None:
    assert marker.parse(None) is None
    assert marker.parse("nothing here") is None
    assert marker.parse("<!-- ci-autofix:suggestion {not json} -->") is None
    forged = record().render().replace(FIX, "--upload-pack=x")
    assert marker.parse(forged) is None  # a record that names something other than a commit id is no record
    forged = record().render().replace("feature/x", "../../x")
    assert marker.parse(forged) is None


def test_the_records_literals_are_their_owners() -> None:
    """The record spells two Literals to stay light; they must not drift from the ladder's and the policy's."""
    from typing import get_args

    from ci_autofix.ladder.evidence import VerificationState
    from ci_autofix.policy.model import VerdictStatus

    assert get_args(marker.Verification) == (*get_args(VerificationState), "skipped")
    assert get_args(marker.Policy) == get_args(VerdictStatus)
