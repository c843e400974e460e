"""The propose flow soaked: many runs over several branches with re-deliveries, human pushes and
injected faults, then every event once more with no fault, against the emulator (loopback only).

Besides plain failures, the loop's events: twin runs failing the same way on one commit, the base
branch red with the same failure (then green again), a failure that does not reproduce here, an
attempt that halts (the patch policy) re-run until the cap, a suggestion applied and CI failing on
it with the same failure (the circuit breaker), a suggestion a person closes (its branch swept).

Seeded, bounded in count (`CI_AUTOFIX_SOAK_RUNS`, default 40; the issue's figure is 100) and in time
(each run is one in-process propose, `testing.propose`, with quick client settings). What must hold afterwards: every
run ended typed (an outcome, or a `UserError` naming cause and remedy), nothing was written outside
suggestion branches (besides the fixes applied) and no suggestion branch was moved, at most one PR per run, no suggestion branch
without an open PR (closed and superseded suggestions' branches are deleted, strays swept), every open suggestion labelled and carrying a valid record for its branch's current head, and
the fault-free pass ended without an error."""

from __future__ import annotations

import collections
import io
import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ci_autofix.cli.demo import job_log
from ci_autofix.errors import UserError
from ci_autofix.flows.apply import apply
from ci_autofix.flows.clients import Clients
from ci_autofix.github import GitHub
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state.marker import parse
from tests.testing.emulator import BOT, GitHubEmulator, JobSpec, Run, StepSpec
from tests.testing.emulator.state import Pull
from tests.testing.git import ALICE, clone, commit, git, init_repo
from tests.testing.propose import FAST, no_model, propose_in_process

REPO = "acme/soak"
CI = ".github/workflows/ci.yml"
BRANCHES = ("b0", "b1", "b2")
FAULTS = (
    ("5xx on a read", lambda e: e.fail("GET", r"/actions/runs/\d+/attempts/\d+/jobs", 502, times=None)),
    ("5xx on PR creation", lambda e: e.fail("POST", r"/pulls$", 502, times=None)),
    (
        "PR creation refused",
        lambda e: e.fail("POST", r"/pulls$", 422, {"message": "Validation Failed"}, times=None),
    ),
    ("PR edit refused", lambda e: e.fail("PATCH", r"/pulls/\d+$", 500, times=None)),
    ("label refused", lambda e: e.deny("POST", r"/issues/\d+/labels", "issues=write")),
    ("branch deletion refused", lambda e: e.fail("DELETE", r"/git/refs/", 403, times=None)),
    (
        "secondary rate limit",
        lambda e: e.rate_limit("POST", r"/statuses/", kind="secondary", retry_after=3600),
    ),
    ("primary rate limit", lambda e: e.rate_limit("GET", r"/pulls$", kind="primary", times=None)),
    ("push refused", lambda e: e.forbid_push()),
)


def broken(branch: str, n: int) -> dict[str, str]:
    return {f"{branch}.py": f"def f{n}( x ):\n    return x*{n}\n"}


def formatted(branch: str, n: int) -> dict[str, str]:
    """What `ruff format --check` passes: CI's failure of it does not reproduce here."""
    return {f"{branch}.py": f"def f{n}(x):\n    return x * {n}\n"}


@dataclass
class Soak:
    emu: GitHubEmulator
    tmp: Path
    rng: random.Random
    log: bytes = b""
    runs: list[Run] = field(default_factory=list)
    heads: dict[str, str] = field(default_factory=dict)
    pushes: collections.Counter[str] = field(default_factory=collections.Counter)  # the people's, per branch
    applied: collections.Counter[str] = field(
        default_factory=collections.Counter
    )  # fixes applied, per branch
    endings: collections.Counter[str] = field(default_factory=collections.Counter)
    n: int = 0

    def setup(self) -> None:
        self.source = self.tmp / "source"
        ci = "on: [push]\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ruff format --check .\n"
        init_repo(self.source, {"pyproject.toml": '[project]\nname = "soak"\nversion = "0"\n', CI: ci})
        for branch in BRANCHES:
            git(self.source, "checkout", "-q", "-b", branch, "main")
            self.heads[branch] = commit(self.source, broken(branch, 1), f"Start {branch}")
        self.log = job_log(self.source, ["ruff format --check ."])
        self.emu.create_repo(REPO, source=self.source)
        git(self.emu.bare_path(REPO), "config", "core.logAllRefUpdates", "always")  # every ref update, logged
        self.emu.add_user("alice", permission="write", email=ALICE[1])

    def human_push(self, branch: str, files: Callable[[str, int], dict[str, str]] = broken) -> None:
        git(self.source, "fetch", "-q", str(self.emu.bare_path(REPO)), branch)  # an applied fix, too
        git(self.source, "checkout", "-q", "--detach", self.heads[branch])
        self.n += 1
        self.heads[branch] = commit(self.source, files(branch, self.n + 1), f"More on {branch}")
        self.pushes[branch] += 1
        git(
            self.source,
            "push",
            "-q",
            "--force",
            str(self.emu.bare_path(REPO)),
            f"{self.heads[branch]}:refs/heads/{branch}",
        )

    def jobs(self, conclusion: str = "failure") -> list[JobSpec]:
        step = StepSpec("Run ruff format --check .", conclusion)
        return [JobSpec("lint", conclusion, [step], log=self.log if conclusion == "failure" else b"")]

    def fail(self, branch: str) -> Run:
        run = self.emu.add_workflow_run(
            REPO, CI, branch, self.heads[branch], "failure", actor="alice", jobs=self.jobs()
        )
        self.runs.append(run)
        return run

    def propose(self, run: Run, **inputs: object) -> str:
        """One propose job for `run`; returns how it ended (`status/reason`, or `error`)."""
        self.n += 1
        work = self.tmp / f"run-{self.n}"
        work.mkdir()
        workspace = clone(self.emu.bare_path(REPO), work / "workspace", detach=run.head_sha)
        try:
            outcome = propose_in_process(
                self.emu, work, run, workspace, fixers=["ruff-format"], **inputs
            ).outcome
        except UserError as exc:  # typed: the entrypoint prints cause and remedy
            assert exc.cause and exc.remedy
            return "error"
        return f"{outcome.status}/{outcome.reason}"

    def apply(self, number: int) -> str:
        """alice applies suggestion #number (in process, as the apply job would)."""
        self.n += 1
        work = self.tmp / f"apply-{self.n}"
        work.mkdir()
        settings = Settings(
            mode="apply",
            pull_request=number,
            github_token=self.emu.token,
            event_name="workflow_dispatch",
            repository=REPO,
            api_url=self.emu.api_url,
            server_url=self.emu.server_url,
            actor="alice",
            triggering_actor="alice",
            in_actions=False,
        )
        runner = Runner(
            in_actions=False, output_path=work / "output", summary_path=work / "summary", stream=io.StringIO()
        )

        def github() -> GitHub:
            return GitHub(token=self.emu.token, api_url=self.emu.api_url, repository=REPO, settings=FAST)

        try:
            outcome = apply(settings, Clients(github=github, llm=no_model), runner)
        except UserError as exc:
            assert exc.cause and exc.remedy
            return "apply:error"
        record = parse(self.emu.pull(REPO, number).body)
        if outcome.status == "applied" and record is not None:
            self.heads[record.failing_branch] = outcome.head_sha
            self.applied[record.failing_branch] += 1
        return f"apply:{outcome.status}/{outcome.reason}"

    def open_suggestions(self, branch: str) -> list[Pull]:
        """The open suggestions for `branch`'s current head, oldest first."""
        found = []
        for pull in self.emu.pulls(REPO):
            record = parse(pull.body)
            if pull.state == "open" and record is not None and record.head_sha == self.heads.get(branch):
                found.append(pull)
        return found

    # ---- the loop's events: each returns how its proposes (and applies) ended, in order ------------
    def twins(self, branch: str) -> list[str]:
        """`on: [push, pull_request]`: two runs fail the same way on one commit."""
        first, second = self.fail(branch), self.fail(branch)
        return [self.propose(first), self.propose(second)]

    def base_red(self, branch: str) -> list[str]:
        """main's latest run fails the same way; then main goes green again."""
        main = self.emu.branch_sha(REPO, "main")
        assert main is not None
        self.emu.add_workflow_run(REPO, CI, "main", main, "failure", actor="alice", jobs=self.jobs())
        try:
            return [self.propose(self.fail(branch))]
        finally:
            self.emu.add_workflow_run(
                REPO, CI, "main", main, "success", actor="alice", jobs=self.jobs("success")
            )

    def unreproduced(self, branch: str) -> list[str]:
        """A push that CI fails but that passes here."""
        self.human_push(branch, formatted)
        return [self.propose(self.fail(branch))]

    def halting_until_the_cap(self, branch: str) -> list[str]:
        """A new lineage whose attempts halt (the fix is larger than `max-changed-lines`); a person
        re-runs the failed job until ci-autofix stops at the cap."""
        self.human_push(branch)
        run = self.fail(branch)
        endings = []
        for _ in range(4):
            endings.append(self.propose(run, max_changed_lines=1))
            self.emu.add_attempt(run, "failure", self.jobs())
        return endings

    def breaker(self, branch: str) -> list[str]:
        """The suggestion is applied; CI fails on the fix with the very same failure."""
        suggestions = self.open_suggestions(branch)
        if not suggestions:
            return [self.propose(self.fail(branch))]
        applied = self.apply(suggestions[-1].number)
        if not applied.startswith("apply:applied"):
            return [applied]
        return [applied, self.propose(self.fail(branch))]

    def close(self, branch: str) -> list[str]:
        """A person closes a suggestion (its branch stays until a run for the branch sweeps it)."""
        for pull in self.open_suggestions(branch)[:1]:
            pull.state = "closed"
        return []


def test_soak(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    soak = Soak(emu, tmp_path, random.Random(20261201))
    soak.setup()
    count = int(os.environ.get("CI_AUTOFIX_SOAK_RUNS", "40"))
    # first, every event of the loop once, without faults, each ending as it must
    scripted: list[tuple[Callable[[str], list[str]], str, list[str]]] = [
        (soak.halting_until_the_cap, "b0", ["halted/policy"] * 3 + ["halted/attempts-exhausted"]),
        (soak.twins, "b1", ["proposed/", "proposed/same-failure"]),
        (soak.breaker, "b1", ["apply:applied/", "halted/same-failure-again"]),
        (soak.base_red, "b2", ["halted/failing-on-base"]),
        (lambda branch: [soak.propose(soak.fail(branch))], "b2", ["proposed/"]),
        (soak.close, "b2", []),
        (soak.unreproduced, "b2", ["halted/not-reproduced"]),
    ]
    for event, branch, expected in scripted:
        assert event(branch) == expected, (event, branch)
        soak.endings.update(expected)
    swept = emu.refs(REPO, "refs/heads/ci-autofix/b2/")
    assert swept == {}, f"the closed suggestion's branch is still there: {swept}"

    faults: collections.Counter[str] = collections.Counter()
    events: collections.Counter[str] = collections.Counter()
    loop_events: list[tuple[str, Callable[[str], list[str]]]] = [
        ("twins", soak.twins),
        ("base red", soak.base_red),
        ("unreproduced", soak.unreproduced),
        ("halting until the cap", soak.halting_until_the_cap),
        ("applied, then the same failure", soak.breaker),
        ("closed", soak.close),
    ]
    for _ in range(count):
        roll, branch = soak.rng.random(), soak.rng.choice(BRANCHES)
        if soak.rng.random() < 0.35:
            name, inject = soak.rng.choice(FAULTS)
            inject(emu)
            faults[name] += 1
        if roll < 0.3:
            name, event = soak.rng.choice(loop_events)
            events[name] += 1
            endings = event(branch)
        elif roll < 0.45 and soak.runs:
            endings = [soak.propose(soak.rng.choice(soak.runs))]  # a re-run of a delivery
        else:
            if roll < 0.65:
                soak.human_push(branch)
            endings = [soak.propose(soak.fail(branch))]
        emu.clear_faults()
        emu.push_allowed[emu.token] = True
        soak.endings.update(endings)

    clean: collections.Counter[str] = collections.Counter()
    for run in list(soak.runs):  # every event once more, no fault
        clean[soak.propose(run)] += 1

    print(
        json.dumps(
            {
                "runs": count,
                "events": events,
                "faults": faults,
                "endings": soak.endings,
                "fault-free pass": clean,
            }
        )
    )
    assert clean["error"] == 0, clean
    assert set(soak.endings) <= {
        "error",
        "apply:error",
        "apply:applied/",
        "apply:halted/branch-moved",
        *(
            f"{s}/{r}"
            for s in ("proposed", "halted")
            for r in (
                "",
                "already-proposed",
                "repaired",
                "same-failure",
                "attempts-exhausted",
                "branch-moved",
                "failing-on-base",
                "not-reproduced",
                "policy",
                "same-failure-again",
            )
        ),
    }, soak.endings

    # no write outside suggestion branches but through apply: the people's branches are where they
    # pushed them or a fix was applied, and every update of theirs is one of those
    bare = emu.bare_path(REPO)
    for branch, head in soak.heads.items():
        assert emu.branch_sha(REPO, branch) == head
        updates = git(bare, "reflog", "show", "--format=%H", f"refs/heads/{branch}").split()
        assert len(updates) == soak.pushes[branch] + soak.applied[branch], (branch, updates)
    pulls = emu.pulls(REPO)
    per_run = collections.Counter(p.head_ref for p in pulls)
    assert max(per_run.values()) == 1  # at most one PR per run
    ours = [name.removeprefix("refs/heads/") for name in emu.refs(REPO, "refs/heads/ci-autofix/")]
    open_heads = {p.head_ref for p in pulls if p.state == "open"}
    assert set(ours) <= open_heads, (
        f"suggestion branches without an open PR: {sorted(set(ours) - open_heads)}"
    )
    closed = [p for p in pulls if p.state != "open"]
    print(
        json.dumps(
            {"suggestions": len(pulls), "closed": len(closed), "branches": len(ours), "applied": soak.applied}
        )
    )
    for pull in pulls:
        record = parse(pull.body)
        assert pull.user == BOT and record is not None, pull.number
        if pull.state != "open":
            continue
        assert set(record.labels) <= set(pull.labels) and "ci-autofix" in pull.labels
        assert record.head_sha == soak.heads[record.failing_branch], "a stale open suggestion"
        sha = emu.branch_sha(REPO, pull.head_ref)
        assert sha == record.fix_sha  # never moved after it was delivered
        assert git(emu.bare_path(REPO), "rev-parse", f"{sha}^") == record.head_sha
