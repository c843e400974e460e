"""The local flow: the propose stages on a checkout and a log, the fix on a new local branch.

The stages run in a work area outside the repository (`ladder.workarea`), so the working tree,
index and `.git` are left exactly as they were; only the new branch is fetched back. Commands
for the repository run as you (as a dedicated uid when run as root), with a scrubbed
environment and a throw-away HOME.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.git import BOT, Git, GitError, Identity, configured_identity
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings

if TYPE_CHECKING:  # the stages are imported when they run, so `--help` stays fast
    from ci_autofix.agent import AgentResult
    from ci_autofix.fixers import FixerRun
    from ci_autofix.ladder.run import CommitMessage, Proposal
    from ci_autofix.ladder.workarea import Workarea
    from ci_autofix.triage import Diagnosis
    from ci_autofix.workflow.definition import WorkflowCommands


@dataclass(frozen=True)
class LocalAttempt:
    """The local attempt, as each step of the flow takes it: the checkout (`git`) at `head`, the
    new branch `name` the fix goes on, by `author`, and the failed `log` (the agent's `logs` tool's
    one job)."""

    git: Git
    head: str
    name: str
    author: Identity
    log: bytes | Path
    settings: Settings
    runner: Runner


def fix(
    repo: Path, log: bytes | Path, settings: Settings, runner: Runner, *, branch: str | None = None
) -> tuple[Proposal, str]:
    """Triage, fixers, agent, verification and policy; the fix lands on a new local branch, by the
    identity your git commits with in `repo` (`user.name`, `user.email`), else by the Action's bot."""
    git, head = checkout(repo)
    current = git.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False).output.strip() or "detached"
    name = new_branch(
        git,
        branch or f"{settings.branch_prefix}{current}/local-{time.strftime('%Y%m%d-%H%M%S')}",
        current=current,
        prefix=settings.branch_prefix,
    )
    writable(git)
    if git.is_dirty():
        runner.warning(
            "Your working tree has uncommitted changes; the fix is made against HEAD without them."
        )
    at = LocalAttempt(git, head, name, configured_identity(repo) or BOT, log, settings, runner)
    diagnosis, commands = _triage(at)
    try:
        proposal = _ladder(at, diagnosis, commands)
    except Halt as halt:
        raise _with_fixer_hint(halt, diagnosis, settings) from None
    return proposal, name


def _one_line(step: str, limit: int = 120) -> str:
    """A step's `run:` on one line (its lines joined by `; `), cut at `limit` characters: a
    two-line step `black --version` / `black --check .` is named whole, not by its first line."""
    joined = "; ".join(line.strip() for line in step.splitlines() if line.strip())
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"


def _triage(at: LocalAttempt) -> tuple[Diagnosis, WorkflowCommands]:
    """The log's diagnosis, and the commands of the workflow steps it names as failing."""
    from ci_autofix.triage import diagnose
    from ci_autofix.triage.locate import locate_failures
    from ci_autofix.workflow.context import of_checkout
    from ci_autofix.workflow.definition import claimed_commands

    runner = at.runner
    runner.stage("triage")
    diagnosis = diagnose(at.log, max_tokens=at.settings.max_log_tokens)
    locate_failures(diagnosis, at.git.repo)
    runner.info(
        f"  {len(diagnosis.failures)} failure(s), category {diagnosis.category.value}; "
        f"the log names as failing: {', '.join(map(_one_line, diagnosis.log_commands)) or 'no command'}"
    )
    # A command named only by the log is never run: it must be a workflow step's `run:` (or be
    # given with --test-command, which verification runs anyway).
    commands = claimed_commands(at.git, at.head, diagnosis.log_commands, of_checkout(at.git, at.head))
    for note in commands.notes:
        runner.info(f"  {note}")
    if diagnosis.is_infra:
        raise Halt(
            HaltReason.INFRA,
            f"The log shows an infrastructure failure "
            f"({diagnosis.infra_reason or diagnosis.category.value}): no code change would fix it.",
        )
    return diagnosis, commands


def _ladder(at: LocalAttempt, diagnosis: Diagnosis, commands: WorkflowCommands) -> Proposal:
    """The ladder in a work area of `head`; the fix (or a halted attempt's change) is fetched
    back as the new branch."""
    from ci_autofix.agent.joblogs import JobLog
    from ci_autofix.flows.clients import build_clients
    from ci_autofix.ladder.run import LadderInput, run_ladder
    from ci_autofix.ladder.workarea import workarea

    git, repo, name = at.git, at.git.repo, at.name
    with workarea(repo, at.head) as area:
        job = LadderInput(
            area=area,
            head_sha=at.head,
            diagnosis=diagnosis,
            settings=at.settings,
            commit_message=commit_message(diagnosis, at.head),
            tools_dir=area.tools_dir,
            llm_factory=build_clients(at.settings).llm,
            failed=commands,
            author=at.author,
            logs=[JobLog("log", at.log)],
        )
        try:
            proposal = run_ladder(job, at.runner)
        except Halt as halt:
            if halt.kept is None or not halt.kept.commit:
                raise
            try:
                _fetch(git, area, halt.kept.commit, name)  # the work is kept, on the branch named for the fix
            except GitError:
                raise halt from None
            raise halt.keeping(
                halt.kept,
                message=f"{halt.message}\nThe attempt's change is kept on the local branch {name}; it is not a "
                f"fix: look at it with `git -C {repo} show {name}`.",
            ) from None
        try:
            _fetch(git, area, proposal.fix_sha, name)
        except GitError as exc:  # checked writable at the start: something changed since
            raise UserError(
                f"Cannot write the fix branch {name} into {repo}: {str(exc).splitlines()[-1]}",
                "Check that you can write the repository's `.git` directory, and run `ci-autofix fix` again.",
            ) from None
    return proposal


def _fetch(git: Git, area: Workarea, sha: str, name: str) -> None:
    """`sha`, made in the work area's git directory, as the new local branch `name`."""
    ref = area.fix_ref(sha)
    git.run(
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--",
        str(area.git_dir),
        f"{ref}:refs/heads/{name}",
    )


def commit_message(diagnosis: Diagnosis, head: str) -> CommitMessage:
    """The fix commit's message, titled by what the fix settles and what made it: the failure
    kinds the fixers that changed files answer (all of them when the agent ran), and their names."""
    from ci_autofix.fixers.catalog import FIXERS

    def message(fixer_runs: list[FixerRun], agent: AgentResult | None) -> str:
        changed = {run.name for run in fixer_runs if run.changed_files}
        fixers = [fixer for fixer in FIXERS if fixer.name in changed]
        settled = [
            failure
            for failure in diagnosis.failures
            if agent is not None
            or any(failure.tool in f.failure_tools and failure.kind in f.failure_kinds for f in fixers)
        ]
        kinds = list(dict.fromkeys(failure.kind for failure in settled)) or [diagnosis.category.value]
        by = [run.name for run in fixer_runs if run.name in changed] + (["the agent"] if agent else [])
        plural = "s" if len(kinds) > 1 else ""
        subject = f"Fix the {' and '.join(kinds)} failure{plural}" + (f" ({', '.join(by)})" if by else "")
        return f"{subject[:72]}\n\nProposed by ci-autofix from a local log.\n\nAutofix-Base: {head}\n"

    return message


def _with_fixer_hint(halt: Halt, diagnosis: Diagnosis, settings: Settings) -> Halt:
    """An agent-disabled halt on failures a deterministic fixer repairs, when `auto` did not pick
    that fixer (it runs one only where the repository configures the tool), names the flag that does."""
    from ci_autofix.fixers.catalog import FIXERS

    if halt.reason is not HaltReason.AGENT_DISABLED or settings.fixers != ["auto"]:
        return halt
    names = [
        fixer.name
        for fixer in FIXERS
        if any(f.tool in fixer.failure_tools and f.kind in fixer.failure_kinds for f in diagnosis.failures)
    ]
    if not names:
        return halt
    hint = (
        f"The log shows failures that {', '.join(f'`{n}`' for n in names)} can repair, but `--fixers auto` "
        f"runs a fixer only where the repository configures its tool: pass `--fixers {','.join(names)}` "
        "to run it anyway."
    )
    return halt.keeping(halt.kept, message=f"{halt.message}.\n{hint}")


def checkout(repo: Path) -> tuple[Git, str]:
    """The checkout at `repo` and its HEAD commit, or a `UserError` saying why it is not one."""
    remedy = "Run `ci-autofix fix` in the repository the log came from, or pass its directory with --repo."
    if not repo.exists():
        raise UserError(f"The repository directory {repo} does not exist.", remedy)
    if not repo.is_dir():
        raise UserError(f"{repo} is a file, not a repository directory.", remedy)
    git = Git(repo)
    if not git.run("rev-parse", "--git-dir", check=False).ok:
        raise UserError(
            f"{repo} is not a git repository (nor inside one).",
            remedy + " The fix is made against the commit the log came from, so it needs its checkout "
            "(`git clone` it if you have none).",
        )
    try:
        return git, git.rev_parse("HEAD")
    except GitError:
        raise UserError(
            f"The repository {repo} has no commit yet: a fix is made against a commit.",
            "Commit your files first (`git add -A && git commit -m ...`), or pass the checkout the log came "
            "from with --repo.",
        ) from None


def new_branch(git: Git, name: str, *, current: str, prefix: str) -> str:
    """`name`, checked before any work: a valid branch name that does not exist yet in the checkout.
    Deleting a branch is advised only for an earlier fix's (under `prefix`), never for yours."""
    if not git.run("check-ref-format", "--branch", name, check=False).ok:
        raise UserError(
            f"`{name}` is not a valid git branch name.",
            "Pass a name such as `autofix/my-fix` with --branch (no spaces, `..`, `~`, `^`, `:` or "
            "trailing `.lock`; see `git help check-ref-format`).",
        )
    new_name = "Pass a new branch name with --branch, or leave --branch out for a fresh one"
    if name == current:
        raise UserError(
            f"{name} is the branch checked out in {git.repo}; the fix never moves an existing branch, it goes "
            "on a new side branch that you merge when you have read it.",
            f"{new_name} (`{prefix}{current}/local-<time>`).",
        )
    if git.run("rev-parse", "--verify", "--quiet", f"refs/heads/{name}", check=False).ok:
        earlier = (
            f", or delete that earlier fix's branch first (`git -C {git.repo} branch -D {name}`)"
            if name.startswith(prefix)
            else ""
        )
        raise UserError(
            f"A branch named {name} already exists in {git.repo}; the fix never moves an existing branch.",
            f"{new_name}{earlier}.",
        )
    # git keeps `a/b` as a file under the folder `a`: a branch cannot be both (`a` and `a/b`).
    parts = name.split("/")
    for taken in ["/".join(parts[:n]) for n in range(1, len(parts))]:
        if git.run("rev-parse", "--verify", "--quiet", f"refs/heads/{taken}", check=False).ok:
            raise UserError(
                f"A branch named {taken} exists in {git.repo}, so git cannot create the branch {name} "
                f"beside it (a name cannot be both a branch and a folder of branches).",
                f"Pass a branch name outside `{taken}/` with --branch"
                + (", or another --branch-prefix (such as `autofix/`)." if name.startswith(prefix) else "."),
            )
    if git.out("for-each-ref", "--count=1", "--format=%(refname:short)", f"refs/heads/{name}/"):
        raise UserError(
            f"Branches named {name}/... exist in {git.repo}, so git cannot create a branch named {name}.",
            f"{new_name}.",
        )
    return name


def writable(git: Git) -> None:
    """Refuse, before any work, a checkout whose git directory cannot take the fix's branch: its
    objects and its `refs/heads` (a read-only mount, another user's clone)."""
    common = Path(git.out("rev-parse", "--path-format=absolute", "--git-common-dir"))
    places = [common, common / "objects", common / "objects" / "pack", common / "refs" / "heads"]
    blocked = [place for place in places if place.exists() and not os.access(place, os.W_OK)]
    if blocked:
        raise UserError(
            f"Cannot write the fix branch into {common}: {blocked[0]} is not writable (a read-only "
            "checkout, or another user's).",
            "The fix becomes a new branch of this repository, which needs write access to its git "
            f"directory: run as a user who can write it, or clone it where you can write (`git clone "
            f"{git.repo} my-copy`) and pass that with --repo.",
        )
