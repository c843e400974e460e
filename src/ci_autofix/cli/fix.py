"""`ci-autofix fix`: the propose stages on a local checkout and a failed CI log.

The stages run in a temporary copy of HEAD outside the repository (`flows.local`), so your
working tree, index and `.git` are left exactly as they were; the fix becomes a commit on a new
local side branch.

    gh run view <id> --log-failed | ci-autofix fix -
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ci_autofix.cli.flags import FIX_FLAGS, add_settings_arguments, settings_overrides
from ci_autofix.cli.io import load, log_file
from ci_autofix.errors import Halt
from ci_autofix.flows.ended import ended_locally, local_words
from ci_autofix.flows.local import fix
from ci_autofix.runner import Runner
from ci_autofix.settings import Local

if TYPE_CHECKING:
    from ci_autofix.ladder.run import Proposal

EXIT_PARTIAL = 1  # a fix is committed, but a failing check still fails after it
EPILOG = (
    "exit codes: 0 the fix is committed on the side branch (verified, or not verifiable here: the report "
    "says which); 1 a partial fix is committed: it settles part of the failure, and a failing check still "
    "fails after it (the report says which); 2 a wrong argument or input (the message says what to do); "
    "3 halted without a fix (the reason is printed); 130 interrupted."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
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
    settings = load(Local("fix", FIX_FLAGS), **settings_overrides(args))
    from ci_autofix.agent.llm import check_provider

    check_provider(settings)  # the agent may run: its provider's environment is checked before any work
    runner = Runner(in_actions=False, stream=sys.stderr, words=local_words)
    runner.mask(settings.secrets())
    from ci_autofix.secret_env import withdraw

    withdraw(settings.secrets())  # held in memory from here on
    try:
        with log_file(args.log, example="gh run view <id> --log-failed | ci-autofix fix -") as log:
            proposal, branch = fix(args.repo, log, settings, runner, branch=args.branch)
    except Halt as halt:
        return ended_locally(halt, runner)
    return print_report(proposal, branch, runner, args.repo)


def print_report(proposal: Proposal, branch: str, runner: Runner, repo: Path) -> int:
    """Print what the fix is, how it was verified and what the policy says; the exit code: 0 for a
    fix, `EXIT_PARTIAL` for one after which a failing check still fails."""
    from ci_autofix.markdown import fence

    out = sys.stdout
    partial = proposal.verification is not None and proposal.verification.outcome == "failed"
    if partial:
        print(
            f"\nA partial fix is commit {proposal.fix_sha[:12]} on the local branch {branch}: it settles part "
            "of the failure, and a failing check still fails after it (see Verification).",
            file=out,
        )
    else:
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
        print(
            f"\nVerification: {proposal.verification.outcome} ({local_words(proposal.verification.reason)})",
            file=out,
        )
        if (setup := proposal.verification.setup) is not None:  # what prepared the environment, shown
            print(f"  setup: {setup.command}: {setup.describe()}", file=out)
            if not setup.ok:
                print(fence(runner.clean(setup.tail), "text"), file=out)
                print(
                    "  If your CI prepares the environment another way, pass its command with --setup-command.",
                    file=out,
                )
        if proposal.verification.resolved:
            print(f"  {local_words(proposal.verification.resolved)}", file=out)
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
        telling = proposal.verification.telling()  # what decided an outcome that is not verified
        if telling is not None and telling[1] is not setup:
            what, evidence = telling
            print(f"  Output {what} ({evidence.describe()}), its last lines:", file=out)
            print(fence(runner.clean(evidence.tail or "(it printed nothing)"), "text"), file=out)
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
    return EXIT_PARTIAL if partial else 0
