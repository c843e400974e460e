"""The failed steps a ladder test hands the ladder, as the workflow definition would describe them."""

from __future__ import annotations

from typing import Any

from ci_autofix.workflow.definition import StepCommand, WorkflowCommands


def failed_steps(*commands: str, job: dict[str, Any] | None = None) -> WorkflowCommands:
    """Failed steps running `commands` (one step each) in a job whose mapping is `job`."""
    return WorkflowCommands(
        commands=[
            StepCommand(command, command, "test", f"step {n}") for n, command in enumerate(commands, 1)
        ],
        job=job or {},
    )
