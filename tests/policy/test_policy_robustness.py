"""Untrusted input: whatever bytes arrive, the policy answers with a verdict and never crashes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ci_autofix.policy import check_diff
from ci_autofix.policy.source import Language, scan

HEADER = "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n+++ b/tests/test_x.py\n"
LINE = st.text(alphabet=st.sampled_from(list("abc#/*\"'`\\r{}()[]:;= \t\r\x00é")), max_size=30)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_give_a_verdict(data: bytes) -> None:
    verdict = check_diff(data)
    assert verdict.status in ("clean", "flagged", "blocked")
    verdict.to_markdown()
    verdict.to_json()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("+- "), LINE), min_size=1, max_size=12))
def test_any_hunk_body_gives_a_verdict(lines: list[tuple[str, str]]) -> None:
    old = sum(1 for kind, _ in lines if kind != "+")
    new = sum(1 for kind, _ in lines if kind != "-")
    body = "".join(f"{kind}{text.replace(chr(10), '')}\n" for kind, text in lines)
    verdict = check_diff(f"{HEADER}@@ -1,{old} +1,{new} @@\n{body}")
    assert verdict.status in ("clean", "flagged", "blocked")


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, max_size=8), st.sampled_from(list(Language)))
def test_scan_gives_one_view_per_line_and_never_invents_text(lines: list[str], language: Language) -> None:
    views = scan(lines, language)
    assert len(views) == len(lines)
    for line, view in zip(lines, views, strict=True):
        assert len(view.code) <= len(line) + 3  # blanked strings keep their quotes only
        assert set(view.comment) <= set(line) | {" "}
