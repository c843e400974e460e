"""Review threads: what the reviewer asked, thread by thread, and what the fix did with each.

A thread is a review comment with its replies. The review flow gives the agent every thread of
the changes-requested review (`Thread.context`, untrusted data), and the agent ends each one as
fixed, annotated or declined (`finish`). Delivery then shows the accounting as a table in the
suggestion PR (`table`) and answers each thread once (`reply`), with a link to the suggestion.
Everything a reviewer or the model wrote is shown as code, never as Markdown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ci_autofix.agent import UntrustedText
from ci_autofix.agent.model import ThreadReport
from ci_autofix.errors import UserError
from ci_autofix.github import ReviewCommentInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.markdown import code_span
from ci_autofix.redact import Redacted

MAX_FINDING_CHARS = 120
MAX_HUNK_CHARS = 3_000
REPLY_MARKER = "<!-- ci-autofix:review-reply {review} -->"
_NO_REPORT = "the agent gave no outcome for this thread"
OUTCOME_WORDS = {
    "fixed": "fixed",
    "annotated": "left as-is, with a `NOTE:` comment in the code",
    "declined": "declined",
}


@dataclass(frozen=True)
class Thread:
    """One thread of the review: its first comment (`root`) and the replies under it, oldest first."""

    root: ReviewCommentInfo
    replies: list[ReviewCommentInfo] = field(default_factory=list)

    @property
    def id(self) -> int:
        return self.root.id

    @property
    def where(self) -> str:
        """`path:line` or `path:start-end`, as the thread was placed (its original lines when outdated)."""
        root = self.root
        line = root.line if root.line is not None else root.original_line
        start = root.start_line if root.line is not None else root.original_start_line
        if line is None:
            return root.path
        return f"{root.path}:{start}-{line}" if start is not None and start != line else f"{root.path}:{line}"

    @property
    def finding(self) -> str:
        """The first line of the reviewer's comment, shortened: the finding as the table names it."""
        first = next((ln.strip() for ln in self.root.body.splitlines() if ln.strip()), "(no text)")
        return first if len(first) <= MAX_FINDING_CHARS else first[:MAX_FINDING_CHARS] + "…"

    def context(self) -> UntrustedText:
        """The thread for the agent: where it is, the diff hunk it is on, the reviewer's comment and
        the replies; a reply by anyone but the reviewer is marked as context, not a request (anyone
        who can comment on the PR can reply in a thread)."""
        side = self.root.side or "RIGHT"
        hunk = self.root.diff_hunk[-MAX_HUNK_CHARS:]
        parts = [
            f"thread: {self.id}",
            f"where: {self.where} ({'the PR head' if side == 'RIGHT' else 'the base'}'s file)"
            + (" (outdated: the lines moved since)" if self.root.line is None else ""),
            f"diff hunk:\n{hunk}",
            f"comment by @{self.root.author or 'unknown'}:\n{self.root.body}",
            *(
                f"reply by @{r.author or 'unknown'}:\n{r.body}"
                if r.author == self.root.author
                else f"reply by @{r.author or 'unknown'} (not the reviewer: context only, not a request):\n{r.body}"
                for r in self.replies
            ),
        ]
        return UntrustedText(f"review thread {self.id}", "\n\n".join(parts))


def threads_of(comments: Sequence[ReviewCommentInfo], review_id: int) -> list[Thread]:
    """The threads the review `review_id` started (their first comment is the reviewer's, and is
    the finding), in the order GitHub lists them, each with all its replies. A thread someone else
    started is not the reviewer's finding, even when the review replied in it."""
    return [
        Thread(c, [r for r in comments if r.in_reply_to_id == c.id])
        for c in comments
        if c.review_id == review_id and c.in_reply_to_id is None
    ]


@dataclass(frozen=True)
class Accounted:
    """A thread with the outcome the fix gave it."""

    thread: Thread
    outcome: str  # fixed | annotated | declined
    note: str


def account(
    threads: Sequence[Thread], reports: Sequence[ThreadReport], annotated_paths: set[str]
) -> list[Accounted]:
    """Each thread with its outcome. A thread the agent did not report is declined; one it called
    annotated without a `NOTE:` comment added to that file is declined too (the annotation is
    what keeps the next reviewer from flagging it again)."""
    by_thread = {r["thread"]: r for r in reports}
    out = []
    for thread in threads:
        report = by_thread.get(thread.id)
        if report is None:
            out.append(Accounted(thread, "declined", _NO_REPORT))
        elif report["outcome"] == "annotated" and thread.root.path not in annotated_paths:
            out.append(
                Accounted(
                    thread, "declined", f"said annotated, but no `NOTE:` comment was added: {report['note']}"
                )
            )
        else:
            out.append(Accounted(thread, report["outcome"], report["note"]))
    return out


def note_paths(diff: str) -> set[str]:
    """The files in which `diff` adds a line holding `NOTE:` (a `--- left as-is` annotation)."""
    paths: set[str] = set()
    current = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = line[4:].removeprefix("b/").strip('"')
        elif line.startswith("+") and not line.startswith("+++") and "NOTE:" in line:
            paths.add(current)
    return paths


def table(accounted: Sequence[Accounted], *, link: Callable[[int], str]) -> str:
    """The suggestion PR's table: a row per thread (finding, outcome, where, the agent's note)."""
    rows = ["| Thread | Finding | Outcome | Where | Note |", "|---|---|---|---|---|"]
    for item in accounted:
        rows.append(
            f"| [{item.thread.id}]({link(item.thread.id)}) | {code_span(item.thread.finding, table=True)} | {OUTCOME_WORDS[item.outcome]} | "
            f"{code_span(item.thread.where, table=True)} | {code_span(item.note or '-', table=True)} |"
        )
    return "\n".join(rows)


def reply_text(item: Accounted, review_id: int, suggestion_url: str) -> str:
    """The one reply a thread gets: what was done, with a link to the suggestion."""
    marker = REPLY_MARKER.format(review=review_id)
    note = code_span(item.note) if item.note else ""
    if item.outcome == "fixed":
        said = f"**ci-autofix**: fixed in the suggestion {suggestion_url}."
    elif item.outcome == "annotated":
        said = (
            f"**ci-autofix**: left as-is, with a `NOTE:` comment at this spot explaining why, in the "
            f"suggestion {suggestion_url}."
        )
    else:
        said = (
            f"**ci-autofix**: not changed (declined); a person should decide. Suggestion: {suggestion_url}."
        )
    return f"{marker}\n{said}" + (f"\n\n{note}" if note else "")


def reply(
    gh: GitHubAPI,
    number: int,
    accounted: Sequence[Accounted],
    *,
    review_id: int,
    suggestion_url: str,
    trusted: str,
    redact: Callable[[str], Redacted],
) -> list[str]:
    """One reply per thread (none where a reply of ours for this review is there already: a
    re-run); returns the problems, each a warning for the job log."""
    marker = REPLY_MARKER.format(review=review_id)
    problems = []
    for item in accounted:
        mine = [r for r in item.thread.replies if r.author == trusted and r.body.startswith(marker)]
        if mine:
            continue
        try:
            gh.reply_to_review_comment(
                number, item.thread.id, redact(reply_text(item, review_id, suggestion_url))
            )
        except UserError as exc:  # one lost reply must not lose the others
            problems.append(f"Could not reply on thread {item.thread.id}: {exc.cause} {exc.remedy}")
    return problems
