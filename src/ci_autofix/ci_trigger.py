"""CI on a branch ci-autofix pushed: pushes made with `GITHUB_TOKEN` start no workflow.

With the `ci-token` input the push itself starts CI; otherwise the failing workflow is dispatched
on the branch when it has a `workflow_dispatch` trigger; otherwise the note says plainly that CI
will not run, and how to change that. Used by delivery (the suggestion branch) and by apply (the
failing branch after the fix landed).
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_autofix.errors import UserError
from ci_autofix.github import GitHub
from ci_autofix.settings import Settings


@dataclass(frozen=True)
class CiOnFix:
    note: str
    run_id: int | None = None
    run_url: str | None = None


def trigger_ci(gh: GitHub, settings: Settings, workflow_file: str, ref: str) -> CiOnFix:
    """Make the repository's CI run on `ref`, or say plainly why it will not."""
    if settings.ci_token is not None:
        return CiOnFix("CI runs on this branch: it was pushed with the `ci-token`.")
    if workflow_file and gh.workflow_dispatchable(workflow_file):
        try:
            run = gh.dispatch_workflow(workflow_file, ref=ref, inputs={})
        except UserError as exc:
            return CiOnFix(f"CI could not be started on this fix: {exc.cause} {exc.remedy}")
        link = f" ([run]({run.html_url}))" if run.html_url else ""
        return CiOnFix(
            f"CI was started on this branch with a `workflow_dispatch` of `{workflow_file}`{link}.",
            run.run_id,
            run.html_url,
        )
    return CiOnFix(
        "**CI will not run on this fix**: pushes made with `GITHUB_TOKEN` start no workflow. To have CI check "
        f"fixes, add a `workflow_dispatch:` trigger to `{workflow_file or 'your CI workflow'}` (ci-autofix then "
        "dispatches it, with `actions: write`), or pass a GitHub App token or PAT as `ci-token`."
    )
