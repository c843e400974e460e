"""How a run ended, in one record that becomes the outputs, the summary and the exit code."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

RunStatus = Literal["proposed", "applied", "success", "halted", "error"]


@dataclass
class Outcome:
    status: RunStatus
    reason: str = ""
    message: str = ""
    fix_branch: str = ""
    fix_sha: str = ""
    pull_request: int | None = None
    pull_request_url: str = ""
    attempt: int | None = None  # propose: this suggestion's attempt; success: how many it took
    run_url: str = ""  # propose: the workflow run it handled
    head_sha: str = ""  # apply: the branch's new head
    cost_usd: float | None = None  # the agent's spend, whenever it ran (a halt after it too)
    agent_turns: int | None = None  # its model turns, likewise
    patch_path: str = ""  # a halt after a change: the files that keep the work (`deliver.kept`)
    evidence_path: str = ""
    transcript_path: str = ""
    auto_apply: str = ""  # propose with `auto-apply`: dispatched, not-eligible or failed
    details: dict[str, Any] = field(default_factory=dict)

    def outputs(self) -> dict[str, str]:
        return {
            "status": self.status,
            "reason": self.reason,
            "fix-branch": self.fix_branch,
            "fix-sha": self.fix_sha,
            "pull-request": str(self.pull_request or ""),
            "attempt": str(self.attempt or ""),
            "run-url": self.run_url,
            "head-sha": self.head_sha,
            "cost-usd": "" if self.cost_usd is None else f"{self.cost_usd:.4f}",
            "patch-path": self.patch_path,
            "evidence-path": self.evidence_path,
            "transcript-path": self.transcript_path,
            "auto-apply": self.auto_apply,
            "result-json": json.dumps(asdict(self), sort_keys=True, default=str),
        }
