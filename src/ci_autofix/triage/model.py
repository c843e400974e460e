"""What triage produces: the `Diagnosis` every later stage reads."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Category(StrEnum):
    # the code is at fault: a fix may help
    TEST = "test"
    LINT = "lint"
    FORMAT = "format"
    TYPE = "type"
    BUILD = "build"
    DEPENDENCY = "dependency"
    # the infrastructure is at fault: no code change helps
    NETWORK = "infra-network"
    SERVICE = "infra-service"  # registry or service 5xx
    RATE_LIMIT = "infra-rate-limit"
    RUNNER_LOST = "infra-runner-lost"
    OOM = "infra-oom"
    DISK_FULL = "infra-disk-full"
    TIMEOUT = "infra-timeout"
    CANCELLED = "infra-cancelled"
    UNKNOWN = "unknown"

    @property
    def is_infra(self) -> bool:
        return self.value.startswith("infra-")


@dataclass
class Failure:
    """One thing that failed, located as precisely as the log allows."""

    tool: str  # "pytest", "ruff", "mypy", "ruff-format", "generic", ...
    kind: str  # "test", "lint", "format", "type", "build", "dependency", "error"
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    test_id: str | None = None
    rule: str | None = None  # a lint rule code, an error code
    evidence: list[str] = field(default_factory=list)  # the log lines that show it
    where: list[str] = field(default_factory=list)  # jobs (or retries) it occurred in


@dataclass
class Diagnosis:
    failures: list[Failure]
    # What the log text says the failed step ran (its `##[group]Run` header and echoed script):
    # a claim that any line the build printed can forge. Never run, allowed or shown as trusted;
    # the commands ci-autofix runs come from the workflow definition (`ci_autofix.workflow.definition`).
    log_commands: list[str]
    category: Category
    excerpt: str  # redacted, within the token budget, in log order, with elision markers
    excerpt_tokens: int
    budget_tokens: int
    infra_reason: str | None = None
    jobs: list[str] = field(default_factory=list)

    @property
    def is_infra(self) -> bool:
        return self.category.is_infra

    @property
    def tools(self) -> set[str]:
        return {f.tool for f in self.failures}

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["category"] = self.category.value
        data["is_infra"] = self.is_infra
        return data
