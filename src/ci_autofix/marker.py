"""The suggestion record: a hidden, machine-readable marker in the suggestion PR's body.

Nothing is kept between runs except in GitHub itself. The propose flow writes this record;
the apply flow and re-runs read it back. The PR body is editable by anyone with write access,
so a reader treats the record as a claim to check against git (the branch head, the parent).
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ci_autofix.refs import branch_problem, is_sha

_MARKER = re.compile(r"<!--\s*ci-autofix:suggestion\s+(\{.*?\})\s*-->", re.S)


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
    verification: Literal["verified", "unverified", "failed", "skipped"] = "skipped"
    policy: Literal["clean", "flagged", "blocked"] = "clean"
    ci_run_id: int | None = None
    ci_run_url: str | None = None

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
    """The record in a PR body, or None when there is none or it does not validate."""
    if not body:
        return None
    match = _MARKER.search(body)
    if match is None:
        return None
    try:
        return Suggestion.model_validate_json(match.group(1))
    except ValidationError:
        return None


def replace(body: str, suggestion: Suggestion) -> str:
    """`body` with its record replaced by (or, without one, extended with) `suggestion`."""
    if _MARKER.search(body):
        return _MARKER.sub(lambda _: suggestion.render(), body, count=1)
    return f"{body.rstrip()}\n\n{suggestion.render()}\n"
