"""The suggestion record (`state.marker`) read back from a PR body: what is not a record is none."""

from __future__ import annotations

from ci_autofix.state import marker

SHA = "a" * 40
FIX = "b" * 40


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
