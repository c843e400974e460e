"""The `github` context of a failed run, as far as it is known here: the values a step's
`${{ github.* }}` expressions took when CI ran it.

A workflow's `env:` often names the run (`BUILD_CACHE_KEY: ${{ github.sha }}`); without its value
the step cannot be replayed. The failed run tells most of them (its event, commit, branch, pull
request, id and repository); a local `fix` knows the checkout's HEAD and branch. Only these exact
names are ever looked up, never evaluated: `github.sha` is known, `github['sha']`, `github.event.*`
or `format(...)` are not. A value is written into the step's script as the runner writes it, so
one that is not plain words (a branch named `a;b` or `$(x)`) is not used, and the step is not
replayed. `github.workspace` is the checkout's directory, which here is the clean copy each run
happens in: in `env:` it becomes `$GITHUB_WORKSPACE`, which the replayed step sets to its copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ci_autofix.git import Git

WORKSPACE = "github.workspace"
_PLAIN = re.compile(r"^[A-Za-z0-9._/@+-]*$")
# events whose `github.sha` and `github.ref` are the run's head commit and branch
_ON_A_BRANCH = frozenset({"push", "workflow_dispatch", "schedule"})
_PULL_EVENTS = frozenset({"pull_request", "pull_request_target"})


@dataclass(frozen=True)
class Pull:
    """The pull request a run ran for: its number and its head and base branches."""

    number: int
    head: str
    base: str


@dataclass
class Context:
    """The `github.*` values known here (name -> value), and why each other one is not."""

    values: dict[str, str] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)

    def value(self, name: str) -> str | None:
        return self.values.get(name)

    def why_unknown(self, name: str) -> str:
        return self.unknown.get(name, "only the runner knows it")

    def learn(self, name: str, value: str | None, why: str) -> None:
        if value is None:
            self.unknown[name] = why
        elif not _PLAIN.match(value):
            self.unknown[name] = (
                f"its value `{value[:80]}` is not plain words, so it is never written into a command"
            )
        else:
            self.values[name] = value


def of_run(
    *, event: str, sha: str, branch: str | None, run_id: int, repository: str, pulls: list[Pull]
) -> Context:
    """The context of a failed run, from what GitHub says of it (the `workflow_run` payload)."""
    context = Context()
    context.learn("github.event_name", event, "")
    context.learn("github.run_id", str(run_id), "")
    context.learn("github.repository", repository or None, "the run names no repository")
    pull = pulls[0] if len(pulls) == 1 else None
    if event in _ON_A_BRANCH:
        context.learn("github.sha", sha, "")
        on_branch = f"refs/heads/{branch}" if branch else None
        context.learn("github.ref", on_branch, "the run names no branch")
        context.learn("github.ref_name", branch, "the run names no branch")
    elif event in _PULL_EVENTS:
        why = f"a `{event}` run's `github.sha` is the merge commit GitHub made for it, which the run does not name"
        context.learn("github.sha", None, why)
        merge = f"{pull.number}/merge" if pull and event == "pull_request" else None
        why = (
            "the run does not name exactly one pull request"
            if pull is None
            else f"a `{event}` run's ref is the base branch's"
        )
        context.learn("github.ref", f"refs/pull/{merge}" if merge else None, why)
        context.learn("github.ref_name", merge, why)
    else:
        for name in ("github.sha", "github.ref", "github.ref_name"):
            context.learn(name, None, f"it depends on the `{event}` event's own rules")
    if event in _PULL_EVENTS:
        why = "the run does not name exactly one pull request"
        context.learn("github.head_ref", pull.head if pull else None, why)
        context.learn("github.base_ref", pull.base if pull else None, why)
    else:  # only a pull request's run has them: empty for every other event
        context.learn("github.head_ref", "", "")
        context.learn("github.base_ref", "", "")
    return context


def of_checkout(git: Git, head: str) -> Context:
    """The context of a local run on a checkout: its HEAD, and its branch when one is checked out."""
    context = Context()
    context.learn("github.sha", head, "")
    branch = git.run("symbolic-ref", "-q", "--short", "HEAD", check=False)
    name = branch.output.strip() if branch.ok and branch.output.strip() else None
    context.learn("github.ref", f"refs/heads/{name}" if name else None, "the checkout is on no branch")
    context.learn("github.ref_name", name, "the checkout is on no branch")
    for unknown in (
        "github.event_name",
        "github.run_id",
        "github.repository",
        "github.head_ref",
        "github.base_ref",
    ):
        context.learn(unknown, None, "a local run does not know the run CI made")
    return context
