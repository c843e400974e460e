"""A repository in the GitHub emulator with a failing branch and suggestion PRs built directly
(a real fix commit on a side branch whose parent is the failing head, a PR whose body holds the
suggestion record, our label), independent of the propose flow."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_autofix.flows.apply import apply
from ci_autofix.flows.clients import Clients
from ci_autofix.github import GitHub
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state import provenance
from ci_autofix.state.marker import Suggestion
from tests.testing.emulator import BOT, GitHubEmulator, Pull
from tests.testing.git import commit, git
from tests.testing.propose import FAST
from tests.testing.world import alice_repository

REPO = "acme/widgets"
CI_PATH = ".github/workflows/ci.yml"
CI_PUSH_ONLY = "name: CI\non: [push, pull_request]\njobs: {}\n"
CI_DISPATCHABLE = "name: CI\non:\n  push:\n  workflow_dispatch:\njobs: {}\n"
BROKEN = {"widgets.py": "def area(width,height):\n    return width*height\n"}
FIXED = {"widgets.py": "def area(width, height):\n    return width * height\n"}


@dataclass
class Suggested:
    pull: Pull
    record: Suggestion

    @property
    def number(self) -> int:
        return self.pull.number


@dataclass
class Applied:
    outcome: Outcome
    log: str
    outputs: dict[str, str]
    summary: str


@dataclass
class World:
    emu: GitHubEmulator
    src: Path
    tmp: Path
    head_sha: str
    run_id: int
    runs: int = 0
    extra_env: dict[str, str] = field(default_factory=dict)

    # ---- seeding ------------------------------------------------------------------------------
    def push(self, sha: str, branch: str) -> None:
        """Put `sha` on `branch` in the emulator, as a developer's push would."""
        git(self.src, "push", "-q", "--force", str(self.emu.bare_path(REPO)), f"{sha}:refs/heads/{branch}")

    def new_commit(self, parent: str, files: dict[str, str], message: str) -> str:
        git(self.src, "checkout", "-q", "--detach", parent)
        return commit(self.src, files, message)

    def suggest(
        self,
        files: dict[str, str] | None = None,
        *,
        run_id: int | None = None,
        parent: str | None = None,
        labels: list[str] | None = None,
        user: str = BOT,
        body: str | None = None,
        tamper: dict[str, Any] | None = None,
        vouched: bool = True,
        **record: Any,
    ) -> Suggested:
        """A suggestion PR into `feature`, as propose would have delivered it: the fix commit
        carries the `ci-autofix/provenance` status by the bot (`vouched=False`: none). `tamper`:
        fields of the record as written in the PR body that differ from the real suggestion."""
        run_id = run_id or self.run_id
        fix_branch = record.pop("fix_branch", f"ci-autofix/feature/{run_id}")
        fix_sha = self.new_commit(parent or self.head_sha, files or FIXED, f"Fix the format ({run_id})")
        self.push(fix_sha, fix_branch)
        suggestion = Suggestion(
            run_id=run_id,
            workflow=CI_PATH,
            failing_branch=record.pop("failing_branch", "feature"),
            head_sha=record.pop("head_sha", self.head_sha),
            fix_sha=record.pop("fix_sha", fix_sha),
            fix_branch=fix_branch,
            **record,
        )
        if vouched:
            self.emu.add_status(
                REPO,
                fix_sha,
                context=provenance.CONTEXT,
                description=provenance.description(suggestion),
                creator=BOT,
            )
        shown = suggestion.model_copy(update=tamper or {})
        text = body if body is not None else f"ci-autofix suggests a fix.\n\n{shown.render()}\n"
        pull = self.emu.add_pull(
            REPO,
            head=fix_branch,
            base="feature",
            title="ci-autofix: fix `ruff format --check` failing on feature",
            body=text,
            user=user,
            labels=["ci-autofix"] if labels is None else labels,
        )
        return Suggested(pull, suggestion)

    # ---- running apply in-process -----------------------------------------------------------------
    def settings(self, number: int | None, **inputs: Any) -> Settings:
        values: dict[str, Any] = {
            "mode": "apply",
            "pull_request": number,
            "github_token": self.emu.token,
            "event_name": "workflow_dispatch",
            "repository": REPO,
            "api_url": self.emu.api_url,
            "server_url": self.emu.server_url,
            "actor": "alice",
            "triggering_actor": "alice",
            "in_actions": False,
        }
        values.update(inputs)
        return Settings(**{k: v for k, v in values.items() if v is not None})

    def apply(self, number: int | None, **inputs: Any) -> Applied:
        return self.apply_with(self.settings(number, **inputs))

    def apply_with(self, settings: Settings) -> Applied:
        self.runs += 1
        out = self.tmp / f"output-{self.runs}"
        summary = self.tmp / f"summary-{self.runs}"
        stream = io.StringIO()
        runner = Runner(in_actions=False, output_path=out, summary_path=summary, stream=stream)
        token = settings.github_token.get_secret_value() if settings.github_token else ""

        def github() -> GitHub:
            return GitHub(token=token, api_url=self.emu.api_url, repository=REPO, settings=FAST)

        def llm() -> Any:
            raise AssertionError("apply never builds a model client")

        outcome = apply(settings, Clients(github=github, llm=llm), runner)
        runner.set_outputs(outcome.outputs())
        return Applied(
            outcome,
            stream.getvalue(),
            read_outputs(out),
            summary.read_text(encoding="utf-8") if summary.exists() else "",
        )

    # ---- inspection -----------------------------------------------------------------------------
    def branch(self, name: str) -> str | None:
        return self.emu.branch_sha(REPO, name)

    def pull(self, number: int) -> Pull:
        return self.emu.pull(REPO, number)

    def comments(self, number: int) -> list[str]:
        return self.emu.comments(REPO, number)

    def git_requests(self) -> list[str]:
        return [f"{r.method} {r.path}?{r.query}" for r in self.emu.requests if r.server == "git"]

    def pushes(self) -> list[str]:
        return [r for r in self.git_requests() if "git-receive-pack" in r and r.startswith("POST")]

    def writes(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.emu.api_requests() if r.method != "GET"]


def read_outputs(path: Path) -> dict[str, str]:
    """`GITHUB_OUTPUT` as the runner reads it (`name=value` and `name<<DELIM` blocks)."""
    if not path.exists():
        return {}
    outputs: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for inner in lines:
                if inner == delimiter:
                    break
                value.append(inner)
            outputs[name] = "\n".join(value)
        else:
            name, _, value_text = line.partition("=")
            outputs[name] = value_text
    return outputs


def forged_body(**record: Any) -> str:
    """A PR body whose record is raw JSON, so values no `Suggestion` would accept can be planted."""
    payload = json.dumps(record, separators=(",", ":"))
    return f"Looks legit.\n\n<!-- ci-autofix:suggestion {payload} -->\n"


def make_world(emu: GitHubEmulator, tmp_path: Path, *, ci_text: str = CI_PUSH_ONLY) -> World:
    """alice's failed run (`world`) with bob as a reader; its CI run has no jobs (apply reads none)."""
    main = {"pyproject.toml": '[project]\nname = "widgets"\n', CI_PATH: ci_text, **FIXED}
    dispatch = "workflow_dispatch" in ci_text
    repository = alice_repository(
        emu, tmp_path / "src", REPO, main, "feature", BROKEN, "Add area", dispatch=dispatch
    )
    emu.add_user("bob", permission="read")
    run = repository.run([])
    return World(emu, repository.source, tmp_path, repository.head_sha, run.id)
