"""What people read: the suggestion PR's title and body, and the job summary.

Every text here ends up on GitHub, and nothing here redacts it: `deliver.suggestion.deliver` passes
the PR title and the whole body through a `Redactor` (the run's secrets and the secret patterns)
before the client posts them, and `runner.Runner.summary` redacts the job summary.
Untrusted text (failure messages, file and test names, commands, the log excerpt, the agent's
words, halt messages, which may quote the model or a log) enters only through the helpers of
`ci_autofix.markdown`, inside code spans and fences; the rest is our own Markdown.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ci_autofix.markdown import code_span, fence, untrusted_block
from ci_autofix.outcome import Outcome
from ci_autofix.state.marker import Suggestion
from ci_autofix.triage.model import Diagnosis
from ci_autofix.workflow.definition import script_of

if TYPE_CHECKING:  # the ladder (fixers, agent, policy) is imported only when a fix is made
    from ci_autofix.ladder.run import Proposal

MAX_BODY_CHARS = 60_000  # GitHub refuses bodies over 65,536 characters
MAX_EXCERPT_CHARS = 20_000
MAX_DIFF_CHARS = 30_000


@dataclass(frozen=True)
class RunContext:
    repository: str
    server_url: str
    workflow_name: str
    run_url: str
    failing_branch: str
    head_sha: str


@dataclass(frozen=True)
class Answering:
    """Review mode: the suggestion answers a review. `title` and `section` (the intro and the
    thread table, our Markdown with untrusted text in code spans) replace what a CI failure shows."""

    title: str
    section: str


@dataclass(frozen=True)
class Brief:
    """What a suggestion PR presents: the run it is anchored to, the fix and its record, and what
    it answers: a CI failure (its diagnosis) or a review (`Answering`)."""

    ctx: RunContext
    proposal: Proposal
    record: Suggestion
    answers: Diagnosis | Answering


def run_link(server_url: str, repository: str, run_id: int) -> str:
    """A workflow run's page, built from the settings and its id (never a URL from a payload)."""
    return f"{server_url.rstrip('/')}/{repository}/actions/runs/{run_id}"


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def what_failed(diagnosis: Diagnosis, commands: Sequence[str] = ()) -> str:
    """The failing command (`commands`: from the workflow, never the log's claim), else the tools."""
    if commands and script_of(commands[0]).splitlines():
        return code_span(failed_plain(diagnosis, commands))
    return failed_plain(diagnosis, commands)


def failed_plain(diagnosis: Diagnosis, commands: Sequence[str] = ()) -> str:
    """What failed, as plain text: the failing command's first line (at most 80 characters), else the tools."""
    lines = script_of(commands[0]).splitlines() if commands else []
    if lines:
        first = lines[0]
        return first if len(first) <= 80 else first[:80] + "…"
    tools = sorted(diagnosis.tools - {"generic"})
    return ", ".join(tools) if tools else f"{diagnosis.category.value} failure"


def pr_title(brief: Brief) -> str:
    if isinstance(brief.answers, Answering):
        return brief.answers.title
    failed = what_failed(brief.answers, brief.proposal.commands)
    return clip(f"ci-autofix: fix {failed} failing on {code_span(brief.ctx.failing_branch)}", 240)


APPLY_PLACEHOLDER = "-f pull-request=<this PR's number>"  # until the PR's number is known


def approve_command(ctx: RunContext, apply_workflow: str, number: int | None) -> str:
    pr = str(number) if number else APPLY_PLACEHOLDER.removeprefix("-f pull-request=")
    return (
        f"gh workflow run {shlex.quote(apply_workflow)} --repo {shlex.quote(ctx.repository)} "
        f"-f pull-request={pr}"
    )


def pr_body(
    brief: Brief, *, apply_workflow: str, number: int | None, ci_note: str, auto_apply: str = ""
) -> str:
    ctx, proposal, record = brief.ctx, brief.proposal, brief.record
    parts: list[str] = []
    flags = [f for f in proposal.verdict.findings if f.severity == "flag"]
    if flags:
        parts.append(
            "> [!WARNING]\n> **For the reviewer**, the patch policy flagged:\n"
            + "\n".join(f"> - `{f.code}` {code_span(f.path or '')}: {code_span(f.message)}" for f in flags)
        )
    if proposal.verification and proposal.verification.outcome != "verified":
        reason = " ".join(proposal.verification.reason.split())  # our words; commands are code spans
        parts.append(f"> [!CAUTION]\n> **Unverified**: {reason}")
    branch = code_span(ctx.failing_branch)
    if isinstance(brief.answers, Answering):
        parts.append(brief.answers.section)
    else:
        diagnosis = brief.answers
        parts.append(
            f"CI failed on {branch} at `{ctx.head_sha[:12]}` ([run of {code_span(ctx.workflow_name)}]({ctx.run_url})). "
            f"This pull request proposes a fix as one commit on top of the failing commit. "
            f"**Nothing reaches {branch} until someone approves it** (see the end)."
        )
        parts.append(
            "### What failed\n"
            + _failures(diagnosis)
            + "\n\n<details><summary>Log excerpt</summary>\n\n"
            + fence(clip(diagnosis.excerpt, MAX_EXCERPT_CHARS), "text")
            + "\n\n</details>"
        )
    parts.append("### What changed and why\n" + _changes(proposal))
    parts.append("### How it was checked\n" + _checks(proposal, ci_note))
    cmd = approve_command(ctx, apply_workflow, number)
    actions = f"{ctx.server_url.rstrip('/')}/{ctx.repository}/actions/workflows/{apply_workflow}"
    parts.append(
        "### How to approve\n"
        + (f"{auto_apply}\n\n" if auto_apply else "")
        + f"Review the diff, then start the apply workflow ([Actions page]({actions})):\n\n"
        + fence(cmd, "sh")
        + "\n\n"
        f"The apply job waits for the approval of the environment's reviewers, then pushes exactly commit "
        f"`{record.fix_sha[:12]}` onto {branch}, only if the branch is still at "
        f"`{ctx.head_sha[:12]}`. To reject the suggestion, close this pull request."
    )
    body = "\n\n".join(parts)
    footer = f"\n\n<sub>attempt {record.attempt} · ci-autofix</sub>\n\n{record.render()}\n"
    return clip(body, MAX_BODY_CHARS - len(footer)) + footer


def _failures(diagnosis: Diagnosis) -> str:
    if not diagnosis.failures:
        return f"A {diagnosis.category.value} failure (no single failing line was located)."
    lines = []
    for failure in diagnosis.failures[:15]:
        where = f"{failure.file}:{failure.line}" if failure.file and failure.line else (failure.file or "")
        message = failure.message.splitlines()[0] if failure.message else ""
        parts = [code_span(where), code_span(failure.test_id or ""), code_span(clip(message, 200))]
        lines.append(f"- **{failure.tool}** " + " ".join(p for p in parts if p))
    if len(diagnosis.failures) > 15:
        lines.append(f"- … and {len(diagnosis.failures) - 15} more")
    return "\n".join(lines)


def _changes(proposal: Proposal) -> str:
    lines = []
    for run in proposal.fixers:
        if run.changed_files:
            files = ", ".join(code_span(f) for f in run.changed_files[:10])
            read = f" (version: {code_span(run.pin_source)})" if run.pin_source else ""
            lines.append(f"- **{run.name}** {code_span(run.version or '')}{read}: {files}")
    lines.extend(f"- {note}" for note in proposal.notes)
    if proposal.agent is not None:
        agent = proposal.agent
        lines.append(
            f"- **Agent** ({agent.turns} turns, ${agent.cost_usd:.4f}), in its own words "
            "(shown as written, not checked):"
        )
        words = [agent.summary]
        if agent.root_cause:
            words.append(f"Root cause: {agent.root_cause}")
        if agent.confidence:
            words.append(f"Confidence: {agent.confidence}")
        words.extend(f"Left as-is (annotated in the code): {note}" for note in agent.notes_left_as_is)
        lines.append("\n" + untrusted_block("\n".join(words)) + "\n")
    lines.append(
        f"\n<details><summary>Diff ({len(proposal.changed_files)} file(s))</summary>\n\n"
        + fence(clip(proposal.diff, MAX_DIFF_CHARS), "diff")
        + "\n\n</details>"
    )
    return "\n".join(lines)


def _checks(proposal: Proposal, ci_note: str) -> str:
    parts = []
    if proposal.verification is not None:
        parts.append(proposal.verification.to_markdown())
    else:
        parts.append("No failing command could be re-run here: the log did not show one.")
    parts.append(proposal.verdict.to_markdown())
    if ci_note:
        parts.append(ci_note)
    return "\n\n".join(parts)


def summary(outcome: Outcome, *, diagnosis: Diagnosis | None = None, proposal: Proposal | None = None) -> str:
    """The job summary: what happened and what to do next."""
    if outcome.status == "proposed":
        head = f"## ci-autofix: fix proposed in #{outcome.pull_request}\n\n{outcome.message}"
    elif outcome.status == "applied":
        head = f"## ci-autofix: fix applied\n\n{outcome.message}"
    elif outcome.status == "success":
        head = f"## ci-autofix: CI passes after {outcome.attempt} attempt(s)\n\n{outcome.message}"
    else:  # a halt's message may quote the model, a log or an API: shown as code
        head = halted(outcome.reason, outcome.message)
    parts = [head]
    if outcome.cost_usd is not None:  # the agent ran: what it cost, whatever the ending
        n = outcome.agent_turns
        turns = "" if n is None else f"{n} turn{'' if n == 1 else 's'}, "
        parts.append(f"**Agent**: {turns}${outcome.cost_usd:.4f}")
    if diagnosis is not None:
        parts.append("### What failed\n" + _failures(diagnosis))
    if proposal is not None:
        parts.append("### The fix\n" + fence(clip(proposal.diff, MAX_DIFF_CHARS), "diff"))
        if proposal.verification is not None:
            parts.append(proposal.verification.to_markdown())
    if outcome.pull_request_url:
        parts.append(
            f"**Next step**: review {outcome.pull_request_url} and approve it with the apply workflow."
        )
    return "\n\n".join(parts) + "\n"


def halted(reason: str, message: str) -> str:
    """The heading of a halt's summary; the message (which may quote the model, a log or an
    API) is shown as untrusted text."""
    return f"## ci-autofix: halted ({code_span(reason)})\n\n{untrusted_block(message)}"


def error(cause: str, remedy: str) -> str:
    """The summary of a run that failed: the cause may quote an API or a log; the remedy is ours."""
    return f"## ci-autofix: error\n\n{untrusted_block(cause)}\n\n**What to do:** {remedy}\n"
