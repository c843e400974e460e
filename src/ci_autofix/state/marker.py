"""The suggestion record: a hidden, machine-readable marker in the suggestion PR's body.

Nothing is kept between runs except in GitHub itself. The propose flow writes this record;
the apply flow and re-runs read it back. The PR body is editable by anyone with write access and
quotes untrusted text (log excerpts, the agent's words), so the record is a cache, never the
authority: a reader checks every field that matters against what GitHub authenticates.

Only a record on a line of its own outside any code fence counts (text quoted in a fence or a code
span can carry a fake one), and of several the last one counts: propose writes the record as the
body's last line, after everything quoted.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ci_autofix.refs import branch_problem, is_sha

# The ladder's `VerificationState` (and "skipped") and the policy's `VerdictStatus`, spelled here so
# that reading a record (apply, every re-run) loads neither the ladder nor the policy (80 ms at start);
# tests/state/test_marker.py holds them equal to their owners'.
Verification = Literal["verified", "unverified", "failed", "skipped"]
Policy = Literal["clean", "flagged", "blocked"]
MAX_FAILED_CHARS = 200
MAX_FILES = 20
_MARKER = re.compile(r" {0,3}<!--\s*ci-autofix:suggestion\s+(\{.*\})\s*-->\s*")
_FENCE = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)")
_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|\Z)")


class Suggestion(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    version: int = 1
    run_id: int
    run_attempt: int = 1
    workflow: str = ""
    failing_branch: str
    head_sha: str
    fix_sha: str
    fix_branch: str
    attempt: int = Field(1, ge=1)
    verification: Verification = "skipped"
    policy: Policy = "clean"
    ci_run_id: int | None = None
    ci_run_url: str | None = None
    failed: str = Field("", max_length=MAX_FAILED_CHARS)  # what failed, for the stuck report: shown as code
    files: list[str] = Field(default_factory=list, max_length=MAX_FILES)  # what the fix changed, likewise
    labels: list[str] = Field(
        default_factory=list, max_length=MAX_FILES
    )  # the labels delivery puts on the PR
    # Review mode: the review the fix answers, on PR #reviewed_pull (whose head branch is
    # `failing_branch`); `run_id` is then the newest CI run of that PR's head commit.
    review_id: int | None = None
    reviewed_pull: int | None = None

    @field_validator("head_sha", "fix_sha")
    @classmethod
    def _sha(cls, value: str) -> str:
        if not is_sha(value):
            raise ValueError("not a full commit id")
        return value

    @field_validator("failing_branch", "fix_branch")
    @classmethod
    def _branch(cls, value: str) -> str:
        if problem := branch_problem(value):
            raise ValueError(f"not a plain branch name: {problem}")
        return value

    def render(self) -> str:
        payload = json.dumps(self.model_dump(), separators=(",", ":"), sort_keys=True)
        return f"<!-- ci-autofix:suggestion {payload} -->"


def parse(body: str | None) -> Suggestion | None:
    """The record in a PR body (the last one outside code fences), or None when there is none or
    it does not validate."""
    spans = _records(body or "")
    if not spans:
        return None
    start, end = spans[-1]
    match = _MARKER.fullmatch(body or "", start, end)
    if match is None:
        return None
    try:
        return Suggestion.model_validate_json(match.group(1))
    except ValidationError:
        return None


def _records(body: str) -> list[tuple[int, int]]:
    """(start, end) of every line that is a record marker outside fenced code blocks, following
    CommonMark: a fence of 3+ backticks or tildes opens a block that only a fence of the same
    character, at least as long, with nothing after it closes; an unclosed block runs to the end."""
    spans: list[tuple[int, int]] = []
    fence = ""
    pos = 0
    while True:
        line = _LINE.match(body, pos)
        if line is None:  # pragma: no cover - the pattern matches at every position
            break
        text, start, end = line.group(1), line.start(1), line.end(1)
        opening = _FENCE.fullmatch(text)
        if fence:
            if _closes(opening, fence):
                fence = ""
        elif opening and not (opening["fence"][0] == "`" and "`" in opening["info"]):
            fence = opening["fence"]
        elif _MARKER.fullmatch(text):
            spans.append((start, end))
        if not line.group(2):
            break
        pos = line.end()
    return spans


def _closes(line: re.Match[str] | None, fence: str) -> bool:
    """Whether a fence line closes the block `fence` opened: same character, at least as long,
    nothing after it."""
    return (
        line is not None
        and line["fence"][0] == fence[0]
        and len(line["fence"]) >= len(fence)
        and not line["info"].strip()
    )
