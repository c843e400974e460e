"""The fix's hunks as one-click suggestions on the failing PR, beside the suggestion PR.

Where a hunk of the fix lies inside lines the failing PR changed, a reviewer of that PR can take
it with "Commit suggestion", as review mode offers (`inline_review.post_suggestions`, the one
poster of suggestions); each carries the verification verdict and the link to the suggestion PR,
which holds the whole fix and its evidence. Only for a fix that needs nothing read first: verified
here and policy-clean (a blocked fix is never delivered; a flagged or unverified one goes through
the suggestion PR only, since a suggestion committed from the PR skips apply's checks). Only
when the failing run's commit is the head of an open PR of this repository, and only with
`inline-suggestions` on.

The PR's diff is GitHub's own (`pulls/{n}/files`), the diff GitHub places review comments in;
each file's `patch` becomes one section of a git diff, names C-quoted, for `inline.inline_suggestions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ci_autofix.deliver.inline_review import post_suggestions
from ci_autofix.deliver.notice import Where
from ci_autofix.errors import UserError
from ci_autofix.github import PullFile, PullInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner

if TYPE_CHECKING:
    from ci_autofix.ladder.run import Proposal

_C_ESCAPES = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def suggest_on_failing_pr(
    gh: GitHubAPI,
    *,
    enabled: bool,
    failing: Where,
    proposal: Proposal,
    suggestion: PullInfo,
    runner: Runner,
    outcome: Outcome,
) -> None:
    """Post the fix's hunks inside the failing PR's lines on it; `outcome.details["inline"]` says
    what became of them, or why none were posted."""
    why_not = _why_not(enabled, failing, proposal)
    if why_not:
        outcome.details["inline"] = f"no inline suggestions: {why_not}"
        return
    pull = failing.pull
    assert pull is not None  # _why_not said so
    runner.stage(f"suggesting the fix's hunks inside #{pull.number}'s lines on it")
    try:
        files = gh.pull_files(pull.number)
    except UserError as exc:  # the suggestion PR is delivered: this is an extra, never the job's end
        outcome.details["inline"] = f"no inline suggestions: {exc.cause}"
        runner.warning(f"No inline suggestions on #{pull.number}: {exc.cause} {exc.remedy}")
        return
    posted = post_suggestions(
        gh,
        pull.number,
        pull.head_sha,
        pr_diff=pr_diff(files),
        fix_diff=proposal.diff,
        suggestion_url=suggestion.html_url,
        redact=runner.redact,
        verdict="verified ✅ (the failed step passes on a clean tree with the whole fix)",
    )
    runner.info(f"  {posted.describe()}")
    for problem in posted.problems:
        runner.warning(problem)
    outcome.details["inline"] = posted.describe()


def _why_not(enabled: bool, failing: Where, proposal: Proposal) -> str:
    if not enabled:
        return "`inline-suggestions` is off"
    if failing.pull is None or failing.pull.head_sha != failing.head_sha:
        return "the failing commit is not the head of an open pull request"
    if proposal.verdict.status != "clean":
        return f"the patch policy {proposal.verdict.status} the fix"
    if proposal.verification is None or proposal.verification.outcome != "verified":
        return "the fix is not verified"
    return ""


def pr_diff(files: list[PullFile]) -> str:
    """A git diff of the PR from GitHub's file list: the files with a patch that the head still has."""
    sections = []
    for f in files:
        if f.patch is None or f.status == "removed":
            continue
        old, new = _quoted("a/", f.previous_filename or f.filename), _quoted("b/", f.filename)
        patch = f.patch if f.patch.endswith("\n") else f"{f.patch}\n"
        sections.append(f"diff --git {old} {new}\n--- {old}\n+++ {new}\n{patch}")
    return "".join(sections)


def _quoted(prefix: str, name: str) -> str:
    """`prefix + name` C-quoted as git quotes names (`policy.header` reads it back): control
    characters and every byte of a non-ASCII character as octal escapes, as `core.quotePath` does."""
    text = "".join(
        _C_ESCAPES.get(c)
        or (
            c
            if 0x20 <= ord(c) < 0x7F
            else "".join(f"\\{b:03o}" for b in c.encode("utf-8", "surrogateescape"))
        )
        for c in name
    )
    return f'"{prefix}{text}"'
