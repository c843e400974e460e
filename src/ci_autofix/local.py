"""`ci-autofix fix`: the propose stages on a local checkout and a failed CI log.

The stages run in a temporary copy of HEAD outside the repository (see `workarea`), so your
working tree, index and `.git` are left exactly as they were; the fix becomes a commit on a new
local side branch. Commands for the repository run as you (as a dedicated uid when run as
root), with a scrubbed environment and a throw-away HOME.

    gh run view <id> --log-failed | ci-autofix fix -
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ci_autofix.cli_input import read_log
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.git import Git, GitError
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings, load_settings

if TYPE_CHECKING:  # the stages are imported when they run, so `--help` stays fast
    from ci_autofix.ladder import Proposal
    from ci_autofix.triage import Diagnosis
    from ci_autofix.workflows import WorkflowCommands

EPILOG = (
    "exit codes: 0 the fix is committed on the side branch; 2 a wrong argument or input (the message "
    "says what to do); 3 halted without a fix (the reason is printed); 130 interrupted."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ci_autofix.cli import add_settings_arguments

    parser.add_argument(
        "log",
        nargs="?",
        default="-",
        metavar="LOG",
        help="The failed CI log: a file, or - for standard input (default: -).",
    )
    parser.add_argument(
        "--repo",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="The git checkout the log belongs to (default: the current directory).",
    )
    parser.add_argument(
        "--branch",
        default=None,
        metavar="NAME",
        help="Name of the local side branch for the fix (default: <branch-prefix><current "
        "branch>/local-<time>).",
    )
    add_settings_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from ci_autofix.cli import settings_overrides

    settings = load_settings(**settings_overrides(args))
    runner = Runner(in_actions=False, stream=sys.stderr)
    runner.mask(settings.secrets())
    from ci_autofix.secret_env import withdraw

    withdraw(settings.secrets())  # held in memory from here on
    log = read_log(args.log, example="gh run view <id> --log-failed | ci-autofix fix -")
    try:
        proposal, branch = fix(args.repo, log, settings, runner, branch=args.branch)
    except Halt as halt:
        runner.info(f"\nhalted ({halt.reason.value}): {local_words(halt.message)}")
        return 3
    print_report(proposal, branch, runner, args.repo)
    return 0


def fix(
    repo: Path, log: bytes, settings: Settings, runner: Runner, *, branch: str | None = None
) -> tuple[Proposal, str]:
    """Triage, fixers, agent, verification and policy; the fix lands on a new local branch."""
    from ci_autofix.locate import locate_failures
    from ci_autofix.triage import diagnose
    from ci_autofix.workflows import claimed_commands

    git, head = checkout(repo)
    current = git.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False).output.strip() or "detached"
    name = new_branch(
        git, branch or f"{settings.branch_prefix}{current}/local-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    if git.is_dirty():
        runner.warning(
            "Your working tree has uncommitted changes; the fix is made against HEAD without them."
        )

    runner.stage("triage")
    diagnosis = diagnose(log, max_tokens=settings.max_log_tokens)
    locate_failures(diagnosis, repo)
    runner.info(
        f"  {len(diagnosis.failures)} failure(s), category {diagnosis.category.value}; "
        f"the log names as failing: {', '.join(c.splitlines()[0] for c in diagnosis.log_commands) or 'no command'}"
    )
    # A command named only by the log is never run: it must be a workflow step's `run:` (or be
    # given with --test-command, which verification runs anyway).
    commands = claimed_commands(git, head, diagnosis.log_commands)
    for note in commands.notes:
        runner.info(f"  {note}")
    if diagnosis.is_infra:
        raise Halt(
            HaltReason.INFRA,
            f"The log shows an infrastructure failure "
            f"({diagnosis.infra_reason or diagnosis.category.value}): no code change would fix it.",
        )
    message = (
        f"Fix CI failure ({diagnosis.category.value})\n\nProposed by ci-autofix from a local log.\n\n"
        f"Autofix-Base: {head}\n"
    )
    try:
        proposal = _ladder(git, repo, head, name, diagnosis, settings, runner, message, commands)
    except Halt as halt:
        raise _with_fixer_hint(halt, diagnosis, settings) from None
    return proposal, name


def _ladder(
    git: Git,
    repo: Path,
    head: str,
    name: str,
    diagnosis: Diagnosis,
    settings: Settings,
    runner: Runner,
    message: str,
    commands: WorkflowCommands,
) -> Proposal:
    from ci_autofix.clients import build_clients
    from ci_autofix.ladder import LadderInput, run_ladder
    from ci_autofix.workarea import workarea

    with workarea(repo, head) as area:
        proposal = run_ladder(
            LadderInput(
                area=area,
                head_sha=head,
                diagnosis=diagnosis,
                settings=settings,
                commit_message=message,
                tools_dir=area.tools_dir,
                llm_factory=build_clients(settings).llm,
                commands=commands.lines,
                actions=commands.actions,
                notes=commands.notes,
            ),
            runner,
        )
        # The fix's objects are in the work area's git directory: the new branch is fetched from there.
        ref = area.fix_ref(proposal.fix_sha)
        git.run(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--",
            str(area.git_dir),
            f"{ref}:refs/heads/{name}",
        )
    return proposal


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
    return Halt(halt.reason, f"{halt.message}.\n{hint}", details=halt.details)


def checkout(repo: Path) -> tuple[Git, str]:
    """The checkout at `repo` and its HEAD commit, or a `UserError` saying why it is not one."""
    remedy = "Run `ci-autofix fix` in the repository the log came from, or pass its directory with --repo."
    if not repo.exists():
        raise UserError(f"The repository directory {repo} does not exist.", remedy)
    if not repo.is_dir():
        raise UserError(f"{repo} is a file, not a repository directory.", remedy)
    git = Git(repo)
    try:
        return git, git.rev_parse("HEAD")
    except GitError:
        raise UserError(f"{repo} is not a git checkout with a commit.", remedy) from None


def new_branch(git: Git, name: str) -> str:
    """`name`, checked before any work: a valid branch name that does not exist yet in the checkout."""
    if not git.run("check-ref-format", "--branch", name, check=False).ok:
        raise UserError(
            f"`{name}` is not a valid git branch name.",
            "Pass a name such as `autofix/my-fix` with --branch (no spaces, `..`, `~`, `^`, `:` or "
            "trailing `.lock`; see `git help check-ref-format`).",
        )
    if git.run("rev-parse", "--verify", "--quiet", f"refs/heads/{name}", check=False).ok:
        raise UserError(
            f"A branch named {name} already exists in {git.repo}; the fix never moves an existing branch.",
            f"Pass another name with --branch, or delete that branch first (`git -C {git.repo} branch -D {name}`).",
        )
    return name


def local_words(text: str) -> str:
    """The ladder's text as a local run reads it: the model key is an environment variable here,
    not the Action's input."""
    from ci_autofix.agent.llm import KEY_INPUT

    return text.replace(KEY_INPUT, "ANTHROPIC_API_KEY environment variable")


def print_report(proposal: Proposal, branch: str, runner: Runner, repo: Path) -> None:
    from ci_autofix.markdown import fence

    out = sys.stdout
    print(f"\nThe fix is commit {proposal.fix_sha[:12]} on the local branch {branch}.", file=out)
    for run in proposal.fixers:
        if run.changed_files:
            print(f"  {run.name} {run.version or ''}: {', '.join(run.changed_files)}", file=out)
    if proposal.agent is not None:
        print(
            f"  agent: {proposal.agent.summary} ({proposal.agent.turns} turns, "
            f"${proposal.agent.cost_usd:.4f})",
            file=out,
        )
    for note in proposal.notes:
        print(f"  note: {local_words(note)}", file=out)
    if proposal.verification is not None:
        print(f"\nVerification: {proposal.verification.outcome} ({proposal.verification.reason})", file=out)
        for pair in proposal.verification.evidence:  # which check the fix settles, and which still fails
            failed_before = pair.before is not None and not pair.before.ok
            state = {
                (True, True): "passes now",
                (True, False): "passes",
                (False, True): "still fails",
                (False, False): "fails",
            }[(pair.after.ok, failed_before)]
            label = {"failing": "", "test": " (test-command)", "lint": " (lint)"}[pair.role]
            before = pair.before.describe() if pair.before else "not run"
            print(
                f"  {pair.command}{label}: {state} ({before} before the fix, {pair.after.describe()} after)",
                file=out,
            )
    else:
        print(
            "\nVerification: not run (no workflow step runs the failing command, and no --test-command "
            "was given): pass the check with --test-command to have the fix verified.",
            file=out,
        )
    print(f"Patch policy: {proposal.verdict.status}", file=out)
    for finding in proposal.verdict.findings:
        print(f"  [{finding.severity}] {finding.code}: {finding.message}", file=out)
    print("\n" + fence(runner.clean(proposal.diff), "diff"), file=out)
    print(
        f"\nNext: review it with `git -C {repo} show {branch}`, then take it with "
        f"`git merge --ff-only {branch}` or `git cherry-pick {branch}` in that repository.",
        file=out,
    )
