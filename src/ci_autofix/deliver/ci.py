"""CI on a branch ci-autofix pushed: pushes made with `GITHUB_TOKEN` start no workflow.

With the `ci-token` input the push itself starts CI; otherwise the failing workflow is dispatched
on the branch when it has a `workflow_dispatch` trigger; otherwise the note says plainly that CI
will not run, and how to change that. Used by delivery (the suggestion branch) and by apply (the
failing branch after the fix landed).

CI runs the fix's code with the secrets the workflow gives it, so on a suggestion branch (a fix no
human has reviewed yet) it is started only when the patch policy found nothing at all: a flagged
fix (a network call or a process in a test, a dependency or lockfile change, a suppression, ...)
is pushed with `GITHUB_TOKEN` (which starts no workflow) and not dispatched; the note then says
why, and how a human starts CI after reading the diff. Apply needs no such check: it runs only
after a reviewer approved the fix.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from ci_autofix.errors import UserError
from ci_autofix.github.api import GitHubAPI
from ci_autofix.policy import Verdict
from ci_autofix.settings import Settings
from ci_autofix.workflow.definition import has_dispatch_trigger


@dataclass(frozen=True)
class CiOnFix:
    note: str
    run_id: int | None = None
    run_url: str | None = None


def trigger_ci(gh: GitHubAPI, settings: Settings, workflow_file: str, ref: str) -> CiOnFix:
    """Make the repository's CI run on `ref`, or say plainly why it will not."""
    if settings.ci_token is not None:
        return CiOnFix("CI runs on this branch: it was pushed with the `ci-token`.")
    if workflow_file and dispatchable(gh, workflow_file):
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


def may_start_unreviewed(verdict: Verdict) -> bool:
    """Whether CI may run on a fix that no human has reviewed: only when the patch policy found nothing."""
    return verdict.status == "clean"


def held_back(gh: GitHubAPI, settings: Settings, workflow_file: str, ref: str, verdict: Verdict) -> CiOnFix:
    """The note for a fix whose CI waits for a human: why it was not started, and how to start it."""
    codes = ", ".join(f"`{code}`" for code in verdict.codes)
    why = (
        f"**CI was not started on this fix**: the patch policy flagged it ({codes}), and CI runs on a fix "
        "that no one has reviewed only when the policy found nothing, since CI would run this code with the "
        "workflow's secrets."
    )
    if workflow_file and dispatchable(gh, workflow_file):
        name = workflow_file.rsplit("/", 1)[-1]
        how = (
            "After reading the diff, start CI on this branch yourself (or use **Run workflow** on the "
            "workflow's Actions page with this branch):\n\n"
            f"```sh\ngh workflow run {shlex.quote(name)} --repo {shlex.quote(settings.repository)} "
            f"--ref {shlex.quote(ref)}\n```"
        )
    else:
        how = (
            "After reading the diff, start CI by pushing a commit to this branch yourself (ci-autofix pushed "
            f"it with `GITHUB_TOKEN`, which starts no workflow), or add a `workflow_dispatch:` trigger to "
            f"`{workflow_file or 'your CI workflow'}` to start it from the Actions page."
        )
    return CiOnFix(f"{why} {how}")


def dispatchable(gh: GitHubAPI, workflow_file: str) -> bool:
    """Whether the workflow can be dispatched: GitHubAPI dispatches only workflows whose file on the
    default branch has a `workflow_dispatch` trigger."""
    path = workflow_file if "/" in workflow_file else f".github/workflows/{workflow_file}"
    text = gh.default_branch_file(path)
    return text is not None and has_dispatch_trigger(text)
