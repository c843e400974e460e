"""The review flow's context: one review cycle on a pull request, as each step of the flow takes it.

`Cycle` is built once the review is known to be one to answer (GitHub's API says so) and is frozen
from then on; `CycleSoFar` is what the flow's ending needs when a halt cuts it short.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_autofix.deliver.threads import Thread
from ci_autofix.flows.clients import Clients
from ci_autofix.github import PullInfo, ReviewInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.triage.model import Diagnosis

REVIEW_CYCLES = 3  # review findings are a judgement: fewer cycles than CI attempts


@dataclass
class CycleSoFar:
    """What the flow learned before it halted: for the summary, and the files of kept work."""

    diagnosis: Diagnosis | None = None
    name: str = "review"


@dataclass(frozen=True)
class Cycle:
    """The answer to `review`, which requested changes on `pull` at its head: the cycle's
    `number` (of `REVIEW_CYCLES`), the review's threads, and the suggestion branch it delivers to."""

    settings: Settings
    clients: Clients
    runner: Runner
    gh: GitHubAPI
    pull: PullInfo
    review: ReviewInfo
    threads: list[Thread]
    fix_branch: str
    number: int

    def thread_url(self, thread_id: int) -> str:
        """A thread's place on the reviewed PR's page."""
        settings = self.settings
        return (
            f"{settings.server_url.rstrip('/')}/{settings.repository}/pull/{self.pull.number}"
            f"#discussion_r{thread_id}"
        )
