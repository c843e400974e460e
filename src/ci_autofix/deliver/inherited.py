"""What ci-autofix says about an inherited failure (`workflow.inherited`): the base branch is red
with the very failure the PR's run shows.

It is said once on the failing PR: one comment of ours, marked, edited in place by every later
run (another commit of the PR, a re-run, a newer run of the base), never a second one. The same
text is the halt's message (`inherited-failures: halt`), or, with `inherited-failures: fix-base`,
it points at the suggestion proposed into the base branch instead.
"""

from __future__ import annotations

from typing import Any

from ci_autofix.deliver import notice
from ci_autofix.deliver.report import run_link
from ci_autofix.github.api import GitHubAPI
from ci_autofix.markdown import code_span
from ci_autofix.redact import Redacted
from ci_autofix.workflow.inherited import OnBase

MARKER = "<!-- ci-autofix:failing-on-base -->"


def said(found: OnBase, *, server_url: str, repository: str, proposed: str = "") -> str:
    """The words for `found`: no fix here (the halt), or the fix `proposed` into the base (a PR's URL)."""
    base_url = run_link(server_url, repository, found.run.id)
    named = code_span(found.branch)
    same = (
        f"{named} fails the same way: its [run {found.run.id}]({base_url}) at `{found.run.head_sha[:12]}` "
        "failed the same jobs and steps with the same tests and findings"
        f"{', in files this pull request does not change' if found.pull is not None else ''}. "
        "The failure is inherited, not this branch's"
    )
    if proposed:
        return (
            f"{same}: ci-autofix proposed its fix against {named} ({proposed}), not here "
            "(`inherited-failures: fix-base`). Once it is applied there, bring it into this branch."
        )
    return (
        f"{same}: ci-autofix proposes no fix here. Fix it on {named} (ci-autofix's run for that "
        "branch's own failure does, when `branches` lets it in), then bring the fix into this branch; "
        "or choose `inherited-failures: fix-base` to have ci-autofix propose the fix against "
        f"{named}, or `fix-here` to have it fix the failure in this branch."
    )


def details(found: OnBase, *, server_url: str, repository: str) -> dict[str, Any]:
    """The base branch and its run, for `result-json`."""
    return {
        "base_branch": found.branch,
        "base_run_id": found.run.id,
        "base_run_url": run_link(server_url, repository, found.run.id),
    }


def tell(gh: GitHubAPI, failing: notice.Where, body: Redacted, trusted: str) -> None:
    """Say it on the failing PR, once: the comment of ours there is edited, else posted. Nothing is
    said for a push without a PR (the summary and outputs carry it)."""
    if failing.pull is not None:
        notice.upsert(gh, failing, MARKER, body, trusted)
