"""The ask-first gate: before any attempt, one comment that asks a person whether to attempt a fix.

With `ask-first: true`, a failure is only triaged: no fixer, no model, no branch. The comment
goes on the failing PR (on the failing commit when no PR is open) and is edited in place by the
next failure of the branch or a re-run, so it always describes the failure that counts now; each
failing workflow has its own (its file is in the marker). It
shows the attempt number, the failed run, jobs and steps, a short excerpt, a one-line guess at
the cause, what an attempt may spend, and the command that dispatches the attempt. Doing
nothing declines. Job, step, tool, test and file names come from the log or the workflow, so
they are shown as code, and the excerpt as a fenced block.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from ci_autofix.github import JobInfo
from ci_autofix.markdown import code_span, fence, untrusted_block
from ci_autofix.triage.model import Diagnosis, Failure

MARKER = "<!-- ci-autofix:ask-first -->"  # then the failing workflow's file: one question per workflow
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_./-]{1,200}")
MAX_EXCERPT_CHARS = 500
MAX_JOBS = 10


@dataclass(frozen=True)
class Ask:
    """What the comment is about, and how an attempt is started."""

    run_id: int
    run_url: str  # built from the settings and the run id
    branch: str
    head_sha: str
    attempt: int
    max_attempts: int
    repository: str
    workflow_file: str  # the propose workflow's file name, for the dispatch command
    workflow_url: str  # its page on GitHub
    failing_workflow: str  # the workflow that failed (`.github/workflows/ci.yml`): its own question
    dispatchable: bool  # its file on the default branch has a `workflow_dispatch` trigger
    max_cost_usd: float
    max_turns: int
    max_minutes: float


def marker(ask: Ask) -> str:
    """The first line of this workflow's question (a second failing workflow asks its own)."""
    name = ask.failing_workflow if _PLAIN_PATH.fullmatch(ask.failing_workflow) else "?"
    return f"{MARKER}<!-- {name} -->"


def command(ask: Ask) -> str:
    """The command that starts the attempt."""
    return (
        f"gh workflow run {shlex.quote(ask.workflow_file)} --repo {shlex.quote(ask.repository)} "
        f"-f run-id={ask.run_id}"
    )


def guess(diagnosis: Diagnosis) -> str:
    """A one-line guess at the cause, as code spans: the first failure's tool, test and place."""
    failure = next((f for f in diagnosis.failures if f.tool != "annotation"), None) or next(
        iter(diagnosis.failures), None
    )
    if failure is None:
        return "not sure (no single failing line was found in the log)"
    parts = [code_span(failure.tool)]
    if failure.test_id:
        parts.append(code_span(failure.test_id))
    if where := _place(failure):
        parts.append(f"at {code_span(where)}")
    if failure.message and not failure.test_id:
        first = failure.message.splitlines()[0] if failure.message.strip() else ""
        parts.append(code_span(first[:120]))
    return " ".join(p for p in parts if p)


def excerpt(diagnosis: Diagnosis, limit: int = MAX_EXCERPT_CHARS) -> str:
    """The lines that explain the failure, at most `limit` characters: the located failures' own
    log lines, else the end of the triage excerpt (where a failure usually explains itself)."""
    lines: list[str] = []
    for failure in diagnosis.failures:
        for line in failure.evidence or [failure.message]:
            if line and line not in lines:
                lines.append(line)
    text = "\n".join(lines).strip() or diagnosis.excerpt.strip()
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…" if lines else "…" + text[-(limit - 1) :].lstrip()


def render(ask: Ask, diagnosis: Diagnosis, jobs: list[JobInfo]) -> str:
    """The comment's Markdown, our marker first."""
    rows = ["| Job | Failed step |", "|---|---|"]
    for job in jobs[:MAX_JOBS]:
        steps = ", ".join(code_span(s.name, table=True) for s in job.failed_steps) or "(none named)"
        rows.append(f"| {code_span(job.name, table=True)} | {steps} |")
    if len(jobs) > MAX_JOBS:
        rows.append(f"| … and {len(jobs) - MAX_JOBS} more | |")
    how = (
        f"To attempt one, dispatch the propose workflow for this run "
        f"([{code_span(ask.workflow_file)}]({ask.workflow_url}), **Run workflow**, `run-id` {ask.run_id}):"
    )
    if not ask.dispatchable:
        how = (
            f"> [!WARNING]\n> {code_span(ask.workflow_file)} has no `workflow_dispatch` trigger on the "
            "default branch, so this command fails until it has one (with a `run-id` input; see "
            "ci-autofix's docs/approval.md, *Ask first*).\n\n" + how
        )
    return (
        f"{marker(ask)}\n## ci-autofix: attempt a fix?\n\n"
        f"CI failed on {code_span(ask.branch)} at `{ask.head_sha[:12]}` ([run {ask.run_id}]({ask.run_url})). "
        f"Nothing has been tried: an attempt would be attempt {ask.attempt} of {ask.max_attempts} on "
        "this branch.\n\n"
        + "\n".join(rows)
        + f"\n\n**Likely cause** (a guess from the log): {guess(diagnosis)}\n\n"
        + untrusted_block(excerpt(diagnosis) or "(no excerpt)")
        + "\n\n"
        f"**An attempt spends at most** ${ask.max_cost_usd:.2f} of model time (`max-cost-usd`), "
        f"{ask.max_turns} model turns (`max-turns`) and {ask.max_minutes:g} minutes of agent time "
        "(`max-minutes`), plus this job's runner minutes to verify the fix.\n\n"
        f"{how}\n\n{fence(command(ask), 'sh')}\n\n"
        "Doing nothing declines: nothing is tried until someone with write access dispatches it. "
        "A new failure on this branch updates this comment.\n"
    )


def _place(failure: Failure) -> str:
    if failure.file and failure.line:
        return f"{failure.file}:{failure.line}"
    return failure.file or ""
