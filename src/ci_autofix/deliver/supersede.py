"""Superseding: a failure on a newer commit of a branch closes the suggestions made for older ones.

A suggestion is made for one commit; once the branch has moved on it can only mislead (apply
refuses it anyway: its lease names the old head). Each is closed with a comment that links the
newer suggestion, or says that the branch moved on when there is none, and its branch is deleted
(GitHub keeps a closed PR's commits): closed means gone.
"""

from __future__ import annotations

from collections.abc import Callable

from ci_autofix.errors import UserError
from ci_autofix.github import PullInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.markdown import code_span
from ci_autofix.redact import Redacted
from ci_autofix.state.ledger import Suggested


def supersede(
    gh: GitHubAPI,
    stale: list[Suggested],
    *,
    branch: str,
    head_sha: str,
    newer: PullInfo | None,
    redact: Callable[[str], Redacted],
) -> list[str]:
    """Close every stale suggestion; returns a warning for each one that could not be closed."""
    problems = []
    for old in stale:
        if newer is not None:
            text = f"Superseded by #{newer.number}: {code_span(branch)} moved on to `{head_sha[:12]}`, which failed too."
        else:
            text = (
                f"Closed: {code_span(branch)} moved on to `{head_sha[:12]}`, so this suggestion no longer applies "
                "(its fix was made for an older commit)."
            )
        try:
            gh.comment(old.pull.number, redact(text))
            gh.close_pull(old.pull.number)
        except UserError as exc:
            problems.append(f"#{old.pull.number} could not be closed: {exc.cause}")
            continue
        problems.extend(sweep(gh, [old.pull.head_ref]))
    return problems


def sweep(gh: GitHubAPI, branches: list[str]) -> list[str]:
    """Delete suggestion branches that no open suggestion stands on; a warning for each one that
    could not be deleted (the next run for the failing branch tries again)."""
    problems = []
    for branch in branches:
        try:
            gh.delete_branch(branch)
        except UserError as exc:
            problems.append(f"the suggestion branch {code_span(branch)} could not be deleted: {exc.cause}")
    return problems
