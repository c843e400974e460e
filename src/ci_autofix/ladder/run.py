"""The fix ladder, shared by every flow: fixers, then the agent, then verification and policy.

Flows differ only in where the log comes from and where the proposal goes; this is the one
piece of code that turns a `Diagnosis` and a work area (a copy of the failing commit, see
`workarea`) into a `Proposal` (a commit whose parent is the failing commit, with its evidence)
or a typed halt. Every command runs as the work area's sandbox user: the fixers and the agent
in the copy, reproduction and verification in clean checkouts (`verify.CleanRuns`); the fix's
tree and commit are made with the work area's private git directory, never with a `.git`
that code run for the repository could have written. The fix is a commit object there, that
the caller delivers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ci_autofix.agent import AgentRequest, AgentResult, UntrustedText, agent_available, run_agent
from ci_autofix.agent.joblogs import JobLog, JobLogs
from ci_autofix.agent.llm import Model
from ci_autofix.agent.loop import Budget
from ci_autofix.errors import Halt, HaltReason, Kept
from ci_autofix.fixers import FixerRun, FixerSpec, plan_fixers, run_fixers
from ci_autofix.git import BOT, Git, GitError, Identity
from ci_autofix.ladder.evidence import Evidence, Verification
from ci_autofix.ladder.runtimes import install_dependencies, provision_for, with_runtimes
from ci_autofix.ladder.tools import tool_dir, with_tools
from ci_autofix.ladder.verify import CleanRuns, guard_findings
from ci_autofix.ladder.workarea import Workarea
from ci_autofix.markdown import code_span
from ci_autofix.policy import Verdict, check_diff, test_paths
from ci_autofix.policy.contents import git_blob_reader
from ci_autofix.runner import Runner
from ci_autofix.sandbox import Sandbox
from ci_autofix.settings import Settings
from ci_autofix.toolchains.provision import Provisioned
from ci_autofix.tooling.ci_versions import CIRun
from ci_autofix.triage.model import Category, Diagnosis
from ci_autofix.workflow.definition import WorkflowCommands

# Failures the deterministic fixers can settle on their own: when only these failed and a
# fixer changed something, the agent is not needed.
_FIXER_CATEGORIES = {Category.FORMAT, Category.LINT}

# The fix commit's message: a text, or made from what the ladder did once that is known (the
# fixers' runs, the agent's result when the agent ran).
CommitMessage = str | Callable[[list[FixerRun], AgentResult | None], str]


@dataclass
class Proposal:
    fix_sha: str
    head_sha: str
    diff: str
    changed_files: list[str]
    fixers: list[FixerRun]
    verification: Verification | None
    verdict: Verdict
    agent: AgentResult | None = None
    notes: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)  # the failing commands re-run (trusted)

    @property
    def cost_usd(self) -> float | None:
        return self.agent.cost_usd if self.agent else None


@dataclass
class LadderInput:
    area: Workarea
    head_sha: str
    diagnosis: Diagnosis
    settings: Settings
    commit_message: CommitMessage
    tools_dir: Path
    llm_factory: Callable[[], Model]
    context: list[UntrustedText] = field(default_factory=list)  # extra untrusted text (review comments)
    task: str = ""  # our own words about the task, for flows other than a plain CI failure
    # The failed steps as the workflow definition says they ran (`ci_autofix.workflow.definition`):
    # their commands (the only failing commands run, allowed to the agent or shown to it as ours;
    # never the log's text), failed action steps (fixers only), why a step is not run, the job's
    # installs before the step, and the job's mapping and matrix (its runtimes). One object, so
    # every flow hands the ladder all of it.
    failed: WorkflowCommands = field(default_factory=WorkflowCommands)
    author: Identity = BOT  # the fix commit's author and committer
    threads: list[int] | None = None  # review mode (else None): the thread ids `finish` reports on
    # The failed jobs' logs as downloaded (untrusted): stored for the agent's `logs` tool.
    logs: list[JobLog] = field(default_factory=list)


def run_ladder(job: LadderInput, runner: Runner) -> Proposal:
    settings = job.settings
    sandbox = job.area.sandbox(protected=settings.protected_paths, timeout=settings.command_timeout)
    git = job.area.git
    commands = job.failed.lines
    notes: list[str] = list(job.failed.notes)
    # Read before any of the repository's code runs (it could leave traps in the copy afterwards).
    logs = _store_logs(job)
    provisioned = provision_for(job.area, job.failed.job, matrix=job.failed.matrix)  # Node, Go, Rust: ours
    ci = CIRun.of([log.raw for log in job.logs], git, job.head_sha)  # the versions CI ran
    plan = plan_fixers(job.area.work, job.diagnosis, settings.fixers, [*commands, *job.failed.actions], ci)
    tool_path = tool_dir(
        job.area.work,
        [*commands, settings.test_command],
        plan,
        job.tools_dir,
        timeout=settings.command_timeout,
        ci=ci,
    )
    # the agent runs the failing commands too
    sandbox = with_tools(with_runtimes(sandbox, provisioned), tool_path)
    clean = CleanRuns(
        job.area,
        commands,
        setup_command=settings.setup_command,
        test_command=settings.test_command,
        timeout=settings.command_timeout,
        protected=sandbox.protected,
        tool_path=tool_path,
        tool_versions=ci.described(),
        job_setup=job.failed.setup,
        poetry=job.failed.poetry,
        resolved_at=ci.as_of,
        resolved_when=ci.dated,
        provisioned=provisioned,
        job=job.failed.job,
    )

    for runtime in provisioned.runtimes:  # the versions are the publisher's, never the repository's text
        runner.info(
            f"  provisioned {runtime.declared.runtime} {runtime.installed.version} ({runtime.seconds:.1f}s)"
        )
    for failure in provisioned.failures:
        runner.info(f"  {failure.describe()}")
    runner.stage("reproducing the failure")
    for note in job.failed.notes:
        runner.info(f"  {note}")

    def started(command: str) -> None:  # the setup can take a while: each command as it starts
        runner.info(f"  running {command.splitlines()[-1]}")

    before = clean.reproduce(on_start=started) if commands or settings.test_command else []
    for evidence in before:
        runner.info(f"  {evidence.command.splitlines()[-1]}: {evidence.describe()}")
    job.area.pristine()  # the fixers and the agent start from exactly the failing commit's tree
    if job.threads is None:  # a review's findings need no failure to reproduce
        _check_reproduced(before, commands, settings, runner)
    if failed := install_dependencies(sandbox, provisioned, job.failed.job, timeout=settings.command_timeout):
        notes.append(
            f"The dependencies could not be installed for the fixers and the agent: {code_span(failed.command)} ({failed.describe()})"
        )

    climb = _Climb(job, runner, sandbox, git, clean, logs)
    try:
        return _climb(climb, plan, notes)
    except Halt as ended:
        halt = _naming_failed_runtimes(ended, provisioned)
        try:
            kept = _keeping(halt, climb)
        except (GitError, OSError):  # keeping is a courtesy: the halt and its reason come first
            raise halt from None
        raise kept from None


def _naming_failed_runtimes(halt: Halt, provisioned: Provisioned) -> Halt:
    """`halt`, saying which of the job's runtimes could not be provisioned and why (a refused
    checksum, a version not published): without them nothing the job runs could run here, whatever
    the halt's own reason, and no verification exists to show it."""
    if not provisioned.failures:
        return halt
    why = "\n\n".join(failure.describe() for failure in provisioned.failures)
    return halt.keeping(halt.kept, message=f"{halt.message}\n\n{why}")


def _check_reproduced(
    before: list[Evidence], commands: list[str], settings: Settings, runner: Runner
) -> None:
    """Halt `not-reproduced` when every failing command ran here, with every program it names, and
    passed: nothing here shows the failure, so no fix could be verified. A command that passed
    without a program it names proves nothing (`test -z "$(gofmt -l .)"` passes when gofmt is
    missing): the ladder goes on, and verification says what is missing. With
    `attempt-unreproduced` the ladder goes on too (the agent works from the log; its fix can only be
    an unverified draft)."""
    ran = {e.command: e for e in before if e.command in commands}
    if not commands or len(ran) < len(set(commands)) or not all(e.ok and not e.absent for e in ran.values()):
        return
    evidence = "; ".join(f"`{c.splitlines()[-1]}`: {e.describe()}" for c, e in ran.items())
    if settings.attempt_unreproduced:
        runner.info(
            "  the failure did not reproduce here; `attempt-unreproduced` is on: a fix can only be a draft"
        )
        return
    raise Halt(
        HaltReason.NOT_REPRODUCED,
        f"The failure did not reproduce here: every failing command passed on the failing commit ({evidence}). "
        "It is flaky, or it depends on something only CI has (an environment variable, a service, the time). "
        "Nothing was attempted and the model was not called. Re-run the failed jobs (or set `rerun-flaky: true`), "
        "or set `attempt-unreproduced: true` to let the agent try from the log (the fix is then an unverified draft).",
        details={"reproduction": [{"command": c, "result": e.describe()} for c, e in ran.items()]},
    )


@dataclass
class _Climb:
    """One climb of the ladder after reproduction: what every rung works with (the job, the work
    copy's sandbox, our git directory, the clean runs that verify) and what the rungs have made so
    far (the last verification, the agent's result), kept for a human when the climb halts."""

    job: LadderInput
    runner: Runner
    sandbox: Sandbox
    git: Git
    clean: CleanRuns
    logs: JobLogs | None
    verification: Verification | None = None
    agent: AgentResult | None = None

    def tree(self) -> str:
        """The work copy's tree as it is now, in our git directory."""
        return self.git.snapshot_tree(self.job.head_sha, self.sandbox.written)

    def changed(self) -> bool:
        return self.tree() != self.git.tree_of(self.job.head_sha)

    def verify(self) -> Verification | None:
        """Verify the work copy's current fix on a clean checkout of exactly its tree."""
        job, git = self.job, self.git
        if not job.failed.commands and not job.settings.test_command:
            return None
        tree = self.tree()
        tests = test_paths(git.diff(job.head_sha, tree), read_blob=git_blob_reader(git))
        return self.clean.verify(tree, test_paths=tests)


def _keeping(halt: Halt, climb: _Climb) -> Halt:
    """`halt` with the work of the attempt (`Kept`): the change so far, as a diff and as a commit
    (never proposed, never pushed), its evidence and the agent's conversation."""
    job, git = climb.job, climb.git
    transcript = (
        *(climb.agent.transcript if climb.agent else ()),
        *(halt.kept.transcript if halt.kept else ()),
    )
    tree = climb.tree()
    changed = tree != git.tree_of(job.head_sha)
    if not changed and not transcript:
        return halt
    commit = ""
    if changed:
        commit = git.commit_tree(
            tree,
            job.head_sha,
            f"ci-autofix: the change of a halted attempt ({halt.reason.value}), not proposed\n",
        )
    evidence = climb.verification.to_markdown() if changed and climb.verification else ""
    diff = git.diff(job.head_sha, tree) if changed else ""
    return halt.keeping(Kept(diff=diff, commit=commit, evidence=evidence, transcript=transcript))


def _climb(climb: _Climb, plan: list[FixerSpec], notes: list[str]) -> Proposal:
    """The rungs after reproduction: fixers, the agent, the patch checks."""
    fixer_runs = _fixer_rung(climb, plan)
    partial = ""
    # a review's findings are the agent's to answer, whatever the fixers settled
    if climb.job.threads is not None or not _settled(climb.job.diagnosis, fixer_runs, climb.verification):
        partial = _agent_rung(climb)
        if partial:
            notes.append(partial)
    return _checked_patch(climb, fixer_runs, notes, partial=bool(partial))


def _fixer_rung(climb: _Climb, plan: list[FixerSpec]) -> list[FixerRun]:
    """The deterministic fixers, and a verification of what they changed."""
    climb.runner.stage("deterministic fixers")
    fixer_runs = run_fixers(
        climb.sandbox, plan, tools_dir=climb.job.tools_dir, timeout=climb.job.settings.command_timeout
    )
    for run in fixer_runs:
        climb.runner.info(
            f"  {run.name}: " + (run.skipped_reason or f"changed {len(run.changed_files)} file(s)")
        )
    climb.verification = climb.verify() if climb.changed() else None
    return fixer_runs


def _agent_rung(climb: _Climb) -> str:
    """The agent, when it is available. Without it: the note that the fixers fixed only part of the
    failure (when they changed something), or a halt."""
    unavailable = agent_available(climb.job.settings)
    if unavailable is None:
        climb.agent, climb.verification = _agent_with_retry(climb)
        return ""
    if climb.changed():
        return f"The fixers fixed part of the failure; the rest needs the agent: {unavailable}"
    raise Halt(
        HaltReason.AGENT_DISABLED,
        f"No deterministic fixer applies to this failure, and the agent is off: {unavailable}",
    )


def _checked_patch(climb: _Climb, fixer_runs: list[FixerRun], notes: list[str], *, partial: bool) -> Proposal:
    """The last rung: the fix as a commit, through the patch policy and the verification's verdict.
    `partial`: the fixers fixed only part of the failure and the agent was off (a failed
    verification is then expected, and said in the notes)."""
    job, git, settings = climb.job, climb.git, climb.job.settings
    agent_result = climb.agent
    climb.runner.stage("checking the patch")
    spent = agent_result.spent() if agent_result is not None else None  # every halt below reports it
    tree = climb.tree()
    if tree == git.tree_of(job.head_sha):
        if agent_result is not None:
            raise Halt(
                HaltReason.AGENT_GAVE_UP,
                f"The agent ended without a change it could stand behind: {agent_result.summary or 'no summary'}",
                details={"agent": agent_result.to_json()},
                spent=spent,
            )
        raise Halt(HaltReason.NO_CHANGES, "The fixers produced no change to propose.")
    verification = climb.verification
    if verification is not None and verification.tree != tree:
        verification = climb.verification = climb.verify()  # what is proposed is what was verified
    message = job.commit_message
    if not isinstance(message, str):
        message = message(fixer_runs, agent_result)
    fix_sha = git.commit_tree(tree, job.head_sha, message, by=job.author)
    diff = git.diff(job.head_sha, fix_sha)
    verdict = check_diff(
        diff,
        protected=climb.sandbox.protected,
        max_changed_lines=settings.max_changed_lines,
        max_files=settings.max_files,
        read_blob=git_blob_reader(git),  # whole files, from our own git directory
    ).with_findings(guard_findings(verification, root_cause=agent_result.root_cause if agent_result else ""))
    if verdict.blocked:
        codes = ", ".join(sorted({f.code for f in verdict.findings if f.severity == "block"}))
        raise Halt(
            HaltReason.POLICY,
            f"The patch breaks the patch policy ({codes}); nothing was pushed.\n"
            + "\n".join(f"- {f.code} ({f.where}): {f.message}" for f in verdict.blocking[:10]),
            details={"policy": verdict.to_json()},
            spent=spent,
        )
    if verification is not None and verification.outcome == "failed" and not partial:
        raise Halt(
            HaltReason.UNVERIFIED_FIX,
            f"The fix does not make the failing command pass: {verification.reason}",
            details={"verification": verification.reason},
            spent=spent,
        )
    if settings.require_verified and (verification is None or verification.outcome != "verified"):
        reason = verification.reason if verification else "no command of the failed step can be re-run here"
        raise Halt(
            HaltReason.UNVERIFIED_FIX,
            f"The fix could not be verified here ({reason}) and `require-verified` is on.",
            spent=spent,
        )
    return Proposal(
        fix_sha=fix_sha,
        head_sha=job.head_sha,
        diff=diff,
        changed_files=git.changed_paths(job.head_sha, fix_sha),
        fixers=fixer_runs,
        verification=verification,
        verdict=verdict,
        agent=agent_result,
        notes=notes,
        commands=job.failed.lines,
    )


def _agent_with_retry(climb: _Climb) -> tuple[AgentResult, Verification | None]:
    """The agent, and one more turn with the new output when its fix still fails. Both runs draw
    on one budget, the attempt's: the retry gets what the first run left of `max-turns`,
    `max-cost-usd` and `max-minutes`, and halts `budget` when nothing is left."""
    job, runner = climb.job, climb.runner
    runner.stage("fix agent")
    llm = job.llm_factory()
    context = list(job.context)

    def progress(turns: int, cost: float, tools: list[str]) -> None:
        runner.info(f"  turn {turns}: {', '.join(tools) or 'answer'} (${cost:.4f} so far)")

    request = _request(job, context)
    budget = Budget.start(request)
    result = run_agent(
        request,
        llm=llm,
        sandbox=climb.sandbox,
        on_turn=progress,
        budget=budget,
        logs=climb.logs,
    )
    verification = climb.verify()
    if verification is not None and verification.outcome == "failed":
        runner.stage("fix agent: one more turn with the new output")
        context.append(
            UntrustedText(
                "verification of your previous change (it did not make the failing command pass)",
                verification.to_markdown(),
            )
        )
        try:
            retry = run_agent(
                _request(job, context),
                llm=llm,
                sandbox=climb.sandbox,
                on_turn=progress,
                budget=budget,
                logs=climb.logs,
            )
            result = replace(retry, transcript=(*result.transcript, *retry.transcript))
        except Halt as halt:
            raise Halt(
                halt.reason,
                f"The agent's first fix did not make the failing command pass; on its retry, {halt.message}",
                details=halt.details,
                spent=halt.spent,
                kept=Kept(transcript=(*result.transcript, *(halt.kept.transcript if halt.kept else ()))),
            ) from None
        verification = climb.verify()
    return result, verification


def _store_logs(job: LadderInput) -> JobLogs | None:
    """The failed jobs' logs, normalised and masked, in the work area's `logs/` (ours, outside the
    copy) for the agent's `logs` tool; None when there is no log or the agent will not run."""
    if not job.logs or agent_available(job.settings) is not None:
        return None
    return JobLogs.write(job.area.logs_dir, job.logs, job.settings.secrets())


def _request(job: LadderInput, context: list[UntrustedText]) -> AgentRequest:
    return AgentRequest.from_settings(
        job.settings,
        job.diagnosis,
        context=context,
        task=job.task,
        failing_commands=job.failed.lines,
        threads=job.threads,
    )


def _settled(diagnosis: Diagnosis, fixer_runs: list[FixerRun], verification: Verification | None) -> bool:
    """Whether the fixers alone have dealt with the failure."""
    if verification is not None and verification.outcome != "unverified":
        return verification.outcome == "verified"
    changed = any(run.changed_files for run in fixer_runs)
    return bool(changed and diagnosis.category in _FIXER_CATEGORIES)
