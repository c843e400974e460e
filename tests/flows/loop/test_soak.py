"""The propose flow soaked: many runs over several branches with re-deliveries, human pushes and
injected faults, then every event once more with no fault, against the emulator (loopback only).

Seeded, bounded in count (`CI_AUTOFIX_SOAK_RUNS`, default 40; the issue's figure is 100) and in time
(each run is one in-process propose, `testing.propose`, with quick client settings). What must hold afterwards: every
run ended typed (an outcome, or a `UserError` naming cause and remedy), nothing was written outside
suggestion branches and no suggestion branch was moved, at most one PR per run, no suggestion branch
without an open PR (closed and superseded suggestions' branches are deleted, strays swept), every open suggestion labelled and carrying a valid record for its branch's current head, and
the fault-free pass ended without an error."""

from __future__ import annotations

import collections
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

from ci_autofix.cli.demo import job_log
from ci_autofix.errors import UserError
from ci_autofix.state.marker import parse
from tests.testing.emulator import BOT, GitHubEmulator, JobSpec, Run, StepSpec
from tests.testing.git import ALICE, clone, commit, git, init_repo
from tests.testing.propose import propose_in_process

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


@dataclass
class Soak:
    emu: GitHubEmulator
    tmp: Path
    rng: random.Random
    log: bytes = b""
    runs: list[Run] = field(default_factory=list)
    heads: dict[str, str] = field(default_factory=dict)
    pushes: collections.Counter[str] = field(default_factory=collections.Counter)  # the people's, per branch
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

    def human_push(self, branch: str) -> None:
        git(self.source, "checkout", "-q", "--detach", self.heads[branch])
        self.n += 1
        self.heads[branch] = commit(self.source, broken(branch, self.n + 1), f"More on {branch}")
        self.pushes[branch] += 1
        git(
            self.source,
            "push",
            "-q",
            "--force",
            str(self.emu.bare_path(REPO)),
            f"{self.heads[branch]}:refs/heads/{branch}",
        )

    def fail(self, branch: str) -> Run:
        run = self.emu.add_workflow_run(
            REPO,
            CI,
            branch,
            self.heads[branch],
            "failure",
            actor="alice",
            jobs=[
                JobSpec("lint", "failure", [StepSpec("Run ruff format --check .", "failure")], log=self.log)
            ],
        )
        self.runs.append(run)
        return run

    def propose(self, run: Run) -> str:
        """One propose job for `run`; returns how it ended (`status/reason`, or `error`)."""
        self.n += 1
        work = self.tmp / f"run-{self.n}"
        work.mkdir()
        workspace = clone(self.emu.bare_path(REPO), work / "workspace", detach=run.head_sha)
        try:
            outcome = propose_in_process(self.emu, work, run, workspace, fixers=["ruff-format"]).outcome
        except UserError as exc:  # typed: the entrypoint prints cause and remedy
            assert exc.cause and exc.remedy
            return "error"
        return f"{outcome.status}/{outcome.reason}"


def test_soak(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    soak = Soak(emu, tmp_path, random.Random(20261201))
    soak.setup()
    count = int(os.environ.get("CI_AUTOFIX_SOAK_RUNS", "40"))
    faults: collections.Counter[str] = collections.Counter()
    for _ in range(count):
        roll, branch = soak.rng.random(), soak.rng.choice(BRANCHES)
        if roll < 0.2 and soak.runs:
            run = soak.rng.choice(soak.runs)  # a re-run of a delivery
        else:
            if roll < 0.45:
                soak.human_push(branch)
            run = soak.fail(branch)
        if soak.rng.random() < 0.35:
            name, inject = soak.rng.choice(FAULTS)
            inject(emu)
            faults[name] += 1
        ending = soak.propose(run)
        emu.clear_faults()
        emu.push_allowed[emu.token] = True
        soak.endings[ending] += 1

    clean: collections.Counter[str] = collections.Counter()
    for run in list(soak.runs):  # every event once more, no fault
        clean[soak.propose(run)] += 1

    print(json.dumps({"runs": count, "faults": faults, "endings": soak.endings, "fault-free pass": clean}))
    assert clean["error"] == 0, clean
    assert set(soak.endings) <= {
        "error",
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
            )
        ),
    }, soak.endings

    # no write outside suggestion branches: the people's branches are where they pushed them, and
    # every update of theirs is one of their pushes (none forced or otherwise by ci-autofix)
    bare = emu.bare_path(REPO)
    for branch, head in soak.heads.items():
        assert emu.branch_sha(REPO, branch) == head
        updates = git(bare, "reflog", "show", "--format=%H", f"refs/heads/{branch}").split()
        assert len(updates) == soak.pushes[branch], (branch, updates)
    pulls = emu.pulls(REPO)
    per_run = collections.Counter(p.head_ref for p in pulls)
    assert max(per_run.values()) == 1  # at most one PR per run
    ours = [name.removeprefix("refs/heads/") for name in emu.refs(REPO, "refs/heads/ci-autofix/")]
    open_heads = {p.head_ref for p in pulls if p.state == "open"}
    assert set(ours) <= open_heads, (
        f"suggestion branches without an open PR: {sorted(set(ours) - open_heads)}"
    )
    closed = [p for p in pulls if p.state != "open"]
    print(json.dumps({"suggestions": len(pulls), "closed": len(closed), "branches": len(ours)}))
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
