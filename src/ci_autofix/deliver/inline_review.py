"""The fix's hunks as one-click suggestions on the reviewed PR: one review per cycle.

`inline.inline_suggestions` maps each fix hunk that lies inside one hunk of the PR's own diff to a
```suggestion comment. They go out as ONE review (a COMMENT, never an approval or a change
request). GitHub takes a review's comments all or none: when it refuses the review because a line
is outside its diff (a 422), each comment is posted again as a review of its own, so one refusal
does not lose the others; the refused ones stay in the side branch only, like the unmapped hunks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ci_autofix.deliver.inline import Inline, Unmapped, inline_suggestions
from ci_autofix.errors import UserError
from ci_autofix.github import ReviewCommentDraft, ReviewOutsideDiff
from ci_autofix.github.api import GitHubAPI
from ci_autofix.redact import Redacted


@dataclass
class Posted:
    """What became of the fix's hunks on the reviewed PR."""

    posted: list[Inline] = field(default_factory=list)
    refused: list[Inline] = field(default_factory=list)  # GitHub said outside its diff
    unmapped: list[Unmapped] = field(default_factory=list)
    reviews: int = 0
    problems: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line for the job log and the outcome."""
        parts = [f"{len(self.posted)} inline suggestion(s) posted in {self.reviews} review(s)"]
        if self.refused:
            parts.append(f"{len(self.refused)} refused by GitHub (outside the PR's diff)")
        if self.unmapped:
            parts.append(f"{len(self.unmapped)} hunk(s) only in the side branch")
        return "; ".join(parts)


def post_suggestions(
    gh: GitHubAPI,
    number: int,
    head_sha: str,
    *,
    pr_diff: str,
    fix_diff: str,
    suggestion_url: str,
    redact: Callable[[str], Redacted],
    verdict: str = "",
) -> Posted:
    """Post the fix's mappable hunks as suggestions on #number (at its head `head_sha`), each with
    the verification `verdict` beside it when given (our words)."""
    note = f"From the ci-autofix suggestion {suggestion_url} (the whole fix, verified, is there)."
    if verdict:
        note = f"From the ci-autofix suggestion {suggestion_url}, which holds the whole fix. Verification: {verdict}."
    inline, unmapped = inline_suggestions(pr_diff, fix_diff, note=note)
    done = Posted(unmapped=unmapped)
    if not inline:
        return done
    body = (
        f"**ci-autofix**: {len(inline)} of the changes in {suggestion_url} as suggestions you can "
        "commit from here."
    )
    try:
        gh.create_review(number, head_sha, redact(body), [_draft(i, redact) for i in inline])
        done.posted, done.reviews = list(inline), 1
        return done
    except ReviewOutsideDiff:
        pass  # one comment's lines are not in the diff GitHub has: post each on its own
    except UserError as exc:
        done.problems.append(f"Could not post the inline suggestions: {exc.cause} {exc.remedy}")
        return done
    for item in inline:
        try:
            gh.create_review(number, head_sha, redact(body), [_draft(item, redact)])
        except ReviewOutsideDiff:
            done.refused.append(item)
            continue
        except UserError as exc:
            done.problems.append(f"Could not post the suggestion on {item.path}:{item.line}: {exc.cause}")
            continue
        done.posted.append(item)
        done.reviews += 1
    return done


def _draft(item: Inline, redact: Callable[[str], Redacted]) -> ReviewCommentDraft:
    return ReviewCommentDraft(
        path=item.path,
        line=item.line,
        body=redact(item.body),
        side="RIGHT",
        start_line=item.start_line,
        start_side="RIGHT" if item.start_line is not None else None,
    )
