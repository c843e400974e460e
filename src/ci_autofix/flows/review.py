"""The review flow: a changes-requested review becomes a verified suggestion, thread by thread.

event ─► guards (payload) ─► the PR and the review as GitHub's API has them (a writer's, the head
      unmoved) ─► answered already? ─► cycles so far (at the cap: the stuck report) ─► threads
      ─► the PR head's CI (a push or pull_request run anchors the suggestion; failed steps re-run)
      ─► fetch head and base ─► fix ladder (the threads as untrusted context) ─► deliver into the
      PR's head branch (a table of threads) ─► one reply per thread ─► inline suggestions

The suggestion is delivered and applied exactly as propose's are (provenance, policy, lease, gate).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ci_autofix.agent import UntrustedText
from ci_autofix.deliver import notice, report, stuck
from ci_autofix.deliver.threads import Accounted, Thread, account, note_paths, table, threads_of
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.flows.access import WRITE_LEVELS
from ci_autofix.flows.clients import Clients
from ci_autofix.flows.dispatch import own_workflow_file
from ci_autofix.flows.event import read_payload
from ci_autofix.flows.halts import halted, keep_work
from ci_autofix.flows.review_event import check_review_guards, is_bot, parse_review
from ci_autofix.git import Git, GitError, auth_env, fetch_bare, remote_url
from ci_autofix.github import PullInfo, ReviewInfo, RunInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.markdown import code_span
from ci_autofix.outcome import Outcome
from ci_autofix.refs import check_branch_name
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state.ledger import find_existing
from ci_autofix.state.marker import MAX_FILES, Suggestion
from ci_autofix.triage.model import Category, Diagnosis
from ci_autofix.workflow.definition import WorkflowCommands
from ci_autofix.workflow.failed_run import failed_commands, job_logs, triage_run

if TYPE_CHECKING:
    from ci_autofix.agent.joblogs import JobLog
    from ci_autofix.ladder.run import Proposal

REVIEW_CYCLES = 3  # review findings are a judgement: fewer cycles than CI attempts
STUCK_MARKER = "<!-- ci-autofix:review-stuck -->"
MAX_DIFF_CHARS = 40_000  # of the PR's diff, given to the agent
HISTORY_DEPTH = 200  # commits fetched first; the whole history only when the merge base is deeper
HEAD_REF, BASE_REF = "refs/ci-autofix/head", "refs/ci-autofix/base"


@dataclass
class _Seen:
    diagnosis: Diagnosis | None = None
    name: str = "review"


def review(settings: Settings, clients: Clients, runner: Runner) -> Outcome:
    runner.mask(settings.secrets())
    seen = _Seen()
    try:
        return _review(settings, clients, runner, seen)
    except Halt as halt:
        spent = halt.spent
        outcome = halted(
            halt,
            cost_usd=spent.cost_usd if spent else None,
            agent_turns=spent.turns if spent else None,
            **(keep_work(halt.kept, settings.runner_temp, runner, seen.name) if halt.kept else {}),
        )
        runner.summary(report.summary(outcome, diagnosis=seen.diagnosis))
        return outcome


def _review(settings: Settings, clients: Clients, runner: Runner, seen: _Seen) -> Outcome:
    event = parse_review(read_payload(settings.event_path))
    check_review_guards(event, settings)  # from the payload alone: no API call before this
    number = event.pull_request.number
    seen.name = f"review-{event.review.id}"
    gh = clients.github()
    pull = gh.get_pull(number)
    found = _the_review(gh, settings, pull, event.review.id)
    runner.stage(
        f"review {found.id} by @{found.author} requested changes on #{number} at {pull.head_sha[:12]}"
    )
    fix_branch = check_branch_name(
        f"{settings.branch_prefix}{pull.head_ref}/review-{found.id}", what="suggestion branch"
    )
    if existing := find_existing(gh, fix_branch):
        return Outcome(
            "proposed",
            reason="already-proposed",
            message=f"This review was already answered: {existing.pull.html_url}. Nothing changed.",
            fix_branch=fix_branch,
            pull_request=existing.pull.number,
            pull_request_url=existing.pull.html_url,
        )
    threads = threads_of(gh.review_comments(number), found.id)
    cycles = _cycles(gh, settings, pull)
    if len(cycles) >= REVIEW_CYCLES:
        _stuck(gh, settings, runner, pull, found, cycles, threads)
    cycle = len(cycles) + 1
    runner.info(f"  cycle {cycle} of {REVIEW_CYCLES} on #{number}; {len(threads)} thread(s)")
    anchor, failing = _head_ci(gh, settings, pull)

    from ci_autofix.ladder.run import LadderInput, run_ladder
    from ci_autofix.ladder.workarea import workarea

    with tempfile.TemporaryDirectory(prefix="ci-autofix-review-") as root:
        (Path(root) / "git").mkdir()
        git, merge_base = _fetch(Path(root) / "git", settings, pull)
        pr_diff = git.diff(merge_base, pull.head_sha)
        diagnosis, commands, logs = _checks(gh, git, settings, runner, pull, failing, Path(root))
        seen.diagnosis = diagnosis if failing else None
        with workarea(git.repo, pull.head_sha) as area:
            proposal = run_ladder(
                LadderInput(
                    area=area,
                    head_sha=pull.head_sha,
                    diagnosis=diagnosis,
                    settings=settings,
                    commit_message=_commit_message(pull, found, anchor, cycle),
                    tools_dir=area.tools_dir,
                    llm_factory=clients.llm,
                    context=_context(found, threads, pr_diff),
                    task=_task(pull, found, threads),
                    commands=commands.lines,
                    actions=commands.actions,
                    notes=commands.notes,
                    threads=[t.id for t in threads],
                    logs=logs,
                ),
                runner,
            )
            reports = proposal.agent.threads if proposal.agent else []
            accounted = account(threads, reports, note_paths(proposal.diff))
            outcome, pull_url = _deliver(
                gh, area.git, settings, runner, pull, found, anchor, proposal, fix_branch, cycle, accounted
            )
        _answer(gh, settings, runner, pull, found, accounted, proposal, pr_diff, pull_url, outcome)
    runner.summary(report.summary(outcome, proposal=proposal))
    return outcome


def _the_review(gh: GitHubAPI, settings: Settings, pull: PullInfo, review_id: int) -> ReviewInfo:
    """The review as GitHub's API reports it: changes requested by someone with write access, on
    the PR's current head commit, of an open PR whose head is in this repository."""
    found = gh.review(pull.number, review_id)
    if found.state != "CHANGES_REQUESTED":
        raise Halt(
            HaltReason.NOT_A_FAILURE,
            f"Review {found.id} on #{pull.number} is `{found.state}` (GitHub's API), not `CHANGES_REQUESTED`: "
            "nothing to fix.",
        )
    if pull.state != "open":
        raise Halt(HaltReason.NOT_A_FAILURE, f"#{pull.number} is {pull.state}: there is nothing to change.")
    if pull.head_repo != gh.repository:
        raise Halt(
            HaltReason.FORK,
            f"#{pull.number}'s head branch is in `{pull.head_repo or 'a deleted repository'}`, not in this "
            "repository: a suggestion can only be opened into a branch of this repository, and fixing a "
            "fork's code would run it in a job that holds secrets. Nothing is done.",
        )
    if found.author is None or (is_bot(found.author, found.author_type) and not settings.allow_bots):
        raise Halt(
            HaltReason.REFUSED,
            f"Review {found.id} is by {f'@{found.author}' if found.author else 'a deleted account'}, a bot "
            "or nobody (GitHub's API): ignored. Set `allow-bots: true` to act on bots' reviews.",
        )
    level = gh.permission(found.author)
    if level not in WRITE_LEVELS:
        raise Halt(
            HaltReason.REFUSED,
            f"@{found.author} requested changes on #{pull.number} but has `{level}` access to the repository: "
            "ignored. Only a review by someone with write access starts a fix (their judgement is what the "
            "fix carries out).",
        )
    if found.commit_id != pull.head_sha:
        raise Halt(
            HaltReason.BRANCH_MOVED,
            f"#{pull.number} moved on to {pull.head_sha[:12]} since review {found.id} was made on "
            f"{found.commit_id[:12]}: the review is about older code, so nothing is done. Request changes "
            "again on the new head if they still apply.",
        )
    return found


def _cycles(gh: GitHubAPI, settings: Settings, pull: PullInfo) -> list[PullInfo]:
    """The suggestions ci-autofix opened for reviews of this PR's branch, open or closed, oldest
    first: GitHub's record of who opened them and from which branch, not any PR body."""
    ours = re.compile(re.escape(f"{settings.branch_prefix}{pull.head_ref}/review-") + r"[1-9][0-9]*")
    return sorted(
        (
            p
            for p in gh.list_pulls(base=pull.head_ref)
            if p.author == settings.trusted_author and ours.fullmatch(p.head_ref)
        ),
        key=lambda p: p.number,
    )


def _stuck(
    gh: GitHubAPI,
    settings: Settings,
    runner: Runner,
    pull: PullInfo,
    found: ReviewInfo,
    cycles: list[PullInfo],
    threads: list[Thread],
) -> NoReturn:
    """At the cap: the stuck report (each cycle, and this review's open threads), then the halt."""
    runner.stage("review cycles exhausted: reporting for a human")
    rows = ["| Cycle | Suggestion | State |", "|---|---|---|"]
    for n, suggestion in enumerate(cycles, start=1):
        state = "merged" if suggestion.merged else suggestion.state
        rows.append(f"| {n} | [#{suggestion.number}]({suggestion.html_url}) | {state} |")
    open_rows = ["| Thread | Where | Finding |", "|---|---|---|"]
    for thread in threads:
        url = _thread_url(settings, pull.number, thread.id)
        open_rows.append(
            f"| [{thread.id}]({url}) | {code_span(thread.where, table=True)} | "
            f"{code_span(thread.finding, table=True)} |"
        )
    body = (
        f"{STUCK_MARKER}\n## ci-autofix is stuck on the review of this pull request\n\n"
        f"ci-autofix answered {len(cycles)} review(s) of this pull request, the most it does "
        f"({REVIEW_CYCLES}), and changes are requested again (review {found.id} by "
        f"{code_span('@' + (found.author or '?'))}). It will not try again: these threads need a person.\n\n"
        + "\n".join(rows)
        + "\n\n### Open threads of the latest review\n\n"
        + ("\n".join(open_rows) if threads else "(the review has no threads: its body is the finding)")
        + "\n"
    )
    url = stuck.post(
        gh,
        notice.Where(pull, pull.head_sha),
        runner.redact(body),
        settings.trusted_author,
        marker=STUCK_MARKER,
    )
    raise Halt(
        HaltReason.REVIEW_CYCLES_EXHAUSTED,
        f"ci-autofix answered {len(cycles)} review(s) of #{pull.number}, the most it does ({REVIEW_CYCLES}); "
        f"the stuck report: {url}. Address the findings yourself.",
        details={"stuck_report": url, "cycles": len(cycles)},
    )


CI_EVENTS = frozenset({"push", "pull_request"})  # what starts CI; a review's own workflows never anchor


def _head_ci(gh: GitHubAPI, settings: Settings, pull: PullInfo) -> tuple[RunInfo, list[RunInfo]]:
    """The run that anchors the suggestion (apply checks that it ran on this branch and commit,
    and its workflow is the one CI is started with on the fix), and the newest run of each
    workflow that failed on the head. Only CI counts: runs started by a push or a pull request,
    never one the review itself started (a labeler, a deploy preview); the anchor is the newest
    failing one, else the newest."""
    own = f".github/workflows/{own_workflow_file(settings)}"
    runs = [
        r
        for r in gh.runs_for_commit(pull.head_sha, branch=pull.head_ref)
        if r.event in CI_EVENTS
        and r.workflow_path != own
        and r.head_sha == pull.head_sha
        and r.head_branch == pull.head_ref
    ]
    if not runs:
        raise Halt(
            HaltReason.NO_CI_RUN,
            f"#{pull.number}'s head {pull.head_sha[:12]} has no CI run (one started by a push or a pull "
            "request): a suggestion is anchored to the CI run of the commit it changes (apply checks it), "
            "and verified with its failed steps or `test-command`. Let CI run on the head, then re-run this job.",
        )
    newest: dict[str, RunInfo] = {}
    for run in runs:  # newest first
        newest.setdefault(run.workflow_path, run)
    failing = [r for r in newest.values() if r.conclusion == "failure"]
    return (failing or runs)[0], failing


def _fetch(root: Path, settings: Settings, pull: PullInfo) -> tuple[Git, str]:
    """The PR's head and base branches in a fresh bare repository of ours, and their merge base
    (the PR's diff is from it, as GitHub shows it); the head must still be the reviewed commit."""
    token = settings.github_token or settings.ci_token
    if token is None:
        raise UserError(
            "No token to fetch the pull request's branches with.",
            "Pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the action.",
        )
    head = check_branch_name(pull.head_ref, what="the pull request's head branch")
    base = check_branch_name(pull.base_ref, what="the pull request's base branch")
    url = remote_url(settings.server_url, settings.repository)
    specs = (f"+refs/heads/{head}:{HEAD_REF}", f"+refs/heads/{base}:{BASE_REF}")
    try:
        git = fetch_bare(
            root,
            url,
            *specs,
            token=token.get_secret_value(),
            server_url=settings.server_url,
            depth=HISTORY_DEPTH,
        )
        merge_base = _merge_base(git)
        if merge_base is None:  # deeper than HISTORY_DEPTH: the whole history, once
            git.run(
                "fetch",
                "--no-tags",
                "--no-recurse-submodules",
                "--unshallow",
                "--",
                url,
                *specs,
                env=auth_env(settings.server_url, token.get_secret_value()),
            )
            merge_base = _merge_base(git)
    except GitError as exc:
        raise UserError(
            f"git could not fetch `{head}` and `{base}`, the pull request's branches:\n{exc.result.tail(10)}",
            "Check that the job's `permissions:` include `contents: write` (or `read`), then re-run the job.",
        ) from None
    if git.rev_parse(HEAD_REF) != pull.head_sha:
        raise Halt(
            HaltReason.BRANCH_MOVED,
            f"`{head}` moved on since the review was made on {pull.head_sha[:12]}: nothing is done. Request "
            "changes again on the new head if they still apply.",
        )
    if merge_base is None:
        raise UserError(
            f"`{head}` and `{base}` have no common commit, so the pull request's diff cannot be made.",
            "Rebase the pull request onto its base branch, then request changes again.",
        )
    return git, merge_base


def _merge_base(git: Git) -> str | None:
    result = git.run("merge-base", HEAD_REF, BASE_REF, check=False)
    found = result.output.strip()
    return found if result.ok and found else None


def _checks(
    gh: GitHubAPI,
    git: Git,
    settings: Settings,
    runner: Runner,
    pull: PullInfo,
    failing: list[RunInfo],
    root: Path,
) -> tuple[Diagnosis, WorkflowCommands, list[JobLog]]:
    """What verifies the fix: the failed steps of the head's failing CI runs (their diagnosis and
    their whole logs are the agent's too), and `test-command` (the ladder adds it)."""
    commands = WorkflowCommands()
    diagnoses: list[Diagnosis] = []
    kept: list[JobLog] = []
    for run in failing:
        runner.info(
            f"  CI fails on the head: {run.workflow_path} (run {run.id}); its failed steps verify the fix"
        )
        try:
            logs = root / f"logs-{run.id}"  # ours, removed with `root`
            logs.mkdir(mode=0o700, exist_ok=True)
            found, jobs = triage_run(gh, run.id, run.run_attempt, logs, max_tokens=settings.max_log_tokens)
        except Halt:  # no failed job in that attempt (re-run since): nothing to re-run from it
            continue
        if found.is_infra:  # no change would fix it, and re-running it proves nothing about the fix
            continue
        diagnoses.append(found)
        kept.extend(job_logs(jobs, logs))
        more = failed_commands(git, pull.head_sha, run.workflow_path, jobs)
        commands.commands.extend(more.commands)
        commands.actions.extend(more.actions)
        commands.notes.extend(more.notes)
    diagnosis = diagnoses[0] if diagnoses else _no_failure(settings)
    if not commands.lines and not settings.test_command:
        commands.notes.append(
            "CI passes on the pull request's head (or no failed step can be re-run), and no `test-command` "
            "is set: the fix cannot be verified here."
        )
    return diagnosis, commands, kept


def _no_failure(settings: Settings) -> Diagnosis:
    return Diagnosis(
        failures=[],
        log_commands=[],
        category=Category.UNKNOWN,
        excerpt="",
        excerpt_tokens=0,
        budget_tokens=settings.max_log_tokens,
    )


def _context(found: ReviewInfo, threads: list[Thread], pr_diff: str) -> list[UntrustedText]:
    """The review's body, each thread, and the PR's diff: all untrusted data for the agent."""
    items = [UntrustedText(f"review {found.id} by @{found.author}", found.body or "(no text)")]
    items.extend(t.context() for t in threads)
    items.append(UntrustedText("the pull request's diff", report.clip(pr_diff, MAX_DIFF_CHARS)))
    return items


def _task(pull: PullInfo, found: ReviewInfo, threads: list[Thread]) -> str:
    ids = ", ".join(str(t.id) for t in threads) or "(none: the review's body is the only finding)"
    return (
        f"Pull request #{pull.number} (`{pull.head_ref}` into `{pull.base_ref}`) got review {found.id}, which "
        f"requests changes. Its threads, by id: {ids}."
    )


def _commit_message(pull: PullInfo, found: ReviewInfo, anchor: RunInfo, cycle: int) -> str:
    return (
        f"Address review {found.id} on #{pull.number}\n\n"
        f"Proposed by ci-autofix for the changes requested in review {found.id} of #{pull.number} "
        f"(cycle {cycle} of {REVIEW_CYCLES}).\n\n"
        f"Autofix-Run: {anchor.id}\nAutofix-Review: {found.id}\nAutofix-Attempt: {cycle}\n"
        f"Autofix-Base: {pull.head_sha}\n"
    )


def _thread_url(settings: Settings, number: int, thread_id: int) -> str:
    return f"{settings.server_url.rstrip('/')}/{settings.repository}/pull/{number}#discussion_r{thread_id}"


def _deliver(
    gh: GitHubAPI,
    git: Git,
    settings: Settings,
    runner: Runner,
    pull: PullInfo,
    found: ReviewInfo,
    anchor: RunInfo,
    proposal: Proposal,
    fix_branch: str,
    cycle: int,
    accounted: list[Accounted],
) -> tuple[Outcome, str]:
    from ci_autofix.deliver.suggestion import deliver, delivered

    runner.stage("delivering the suggestion")
    record = Suggestion(
        run_id=anchor.id,
        run_attempt=anchor.run_attempt,
        workflow=anchor.workflow_path,
        failing_branch=pull.head_ref,
        head_sha=pull.head_sha,
        fix_sha=proposal.fix_sha,
        fix_branch=fix_branch,
        attempt=cycle,
        verification=proposal.verification.outcome if proposal.verification else "skipped",
        policy=proposal.verdict.status,
        failed=f"review {found.id} of #{pull.number}",
        files=proposal.changed_files[:MAX_FILES],
        review_id=found.id,
        reviewed_pull=pull.number,
    )
    ctx = report.RunContext(
        repository=settings.repository,
        server_url=settings.server_url,
        workflow_name=anchor.name or anchor.workflow_path,
        run_url=report.run_link(settings.server_url, settings.repository, anchor.id),
        failing_branch=pull.head_ref,
        head_sha=pull.head_sha,
    )
    counts = {o: sum(1 for a in accounted if a.outcome == o) for o in ("fixed", "annotated", "declined")}
    review_url = f"{settings.server_url.rstrip('/')}/{settings.repository}/pull/{pull.number}#pullrequestreview-{found.id}"
    section = (
        f"{code_span('@' + (found.author or '?'))} requested changes on #{pull.number} "
        f"([review {found.id}]({review_url})) at `{pull.head_sha[:12]}`. This pull request answers it as one "
        f"commit on top of #{pull.number}'s head (cycle {cycle} of {REVIEW_CYCLES}): {counts['fixed']} fixed, "
        f"{counts['annotated']} left as-is with a `NOTE:` comment, {counts['declined']} declined. "
        f"**Nothing reaches {code_span(pull.head_ref)} until someone approves it** (see the end).\n\n"
        "### Review threads\n"
        + (
            table(accounted, link=lambda i: _thread_url(settings, pull.number, i))
            if accounted
            else "The review has no threads: its body was the finding."
        )
    )
    answering = report.Answering(
        title=f"ci-autofix: address review {found.id} on #{pull.number}", section=section
    )
    reviewers = [
        p for p in dict.fromkeys([pull.author or "", *settings.reviewers]) if p and not p.endswith("[bot]")
    ]
    delivery = deliver(
        gh,
        git,
        settings,
        ctx,
        _no_failure(settings),
        proposal,
        record,
        reviewers,
        anchor.workflow_path,
        answering,
    )
    outcome = delivered(
        runner,
        delivery,
        proposal,
        message=f"Suggestion {delivery.pull.html_url} answers review {found.id} on #{pull.number}.",
        run_url=ctx.run_url,
    )
    outcome.details["threads"] = counts
    return outcome, delivery.pull.html_url


def _answer(
    gh: GitHubAPI,
    settings: Settings,
    runner: Runner,
    pull: PullInfo,
    found: ReviewInfo,
    accounted: list[Accounted],
    proposal: Proposal,
    pr_diff: str,
    suggestion_url: str,
    outcome: Outcome,
) -> None:
    """One reply per thread, then the fix's hunks as inline suggestions on the reviewed PR."""
    from ci_autofix.deliver.inline_review import post_suggestions
    from ci_autofix.deliver.threads import reply

    runner.stage(f"answering the review on #{pull.number}")
    problems = reply(
        gh,
        pull.number,
        accounted,
        review_id=found.id,
        suggestion_url=suggestion_url,
        trusted=settings.trusted_author,
        redact=runner.redact,
    )
    posted = post_suggestions(
        gh,
        pull.number,
        pull.head_sha,
        pr_diff=pr_diff,
        fix_diff=proposal.diff,
        suggestion_url=suggestion_url,
        redact=runner.redact,
    )
    problems.extend(posted.problems)
    runner.info(f"  {posted.describe()}")
    for problem in problems:
        runner.warning(problem)
    outcome.details["inline"] = posted.describe()
    outcome.details["warnings"] = problems


__all__ = ["review"]
