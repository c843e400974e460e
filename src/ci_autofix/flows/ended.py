"""How a flow ends on a halt: kept work, an outcome and a summary for the Action; exit 3 locally.

Every flow catches its own halts (each knows what else a halt owes: a comment, the attempt's
record); what the ending is made of (the halt's reason and words, what the agent spent, the
halted attempt's work in files and in the summary) is made here, once, for all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ci_autofix.deliver import kept
from ci_autofix.errors import Halt, Kept
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner

EXIT_HALTED = 3  # a local command halted without a fix


def ended(
    halt: Halt,
    runner: Runner,
    *,
    keep_in: Path | None,
    name: str,
    summary: Callable[[Outcome], str],
    **fields: Any,
) -> Outcome:
    """An Action flow's ending for `halt`: the outcome (the halt's reason, message and details,
    what the agent spent, the files that keep the halted attempt's work under `keep_in` named
    after `name`, and what the flow adds in `fields`) and the job summary (`summary` of the
    outcome, then the kept work)."""
    spent = halt.spent  # set when the halt came after the agent ran
    if spent is not None:
        fields = {"cost_usd": spent.cost_usd, "agent_turns": spent.turns, **fields}
    if halt.kept is not None:
        fields = {**fields, **keep_work(halt.kept, keep_in, runner, name)}
    outcome = halted(halt, **fields)
    runner.summary(summary(outcome) + (f"\n{kept.summary(halt.kept)}\n" if halt.kept else ""))
    return outcome


def halted(halt: Halt, **fields: Any) -> Outcome:
    """The run's outcome for `halt`: its reason, message and details, and what the flow adds."""
    return Outcome("halted", reason=halt.reason.value, message=halt.message, details=halt.details, **fields)


def ended_locally(halt: Halt, runner: Runner) -> int:
    """A local command's ending for `halt`: the reason and message on stderr, exit 3."""
    runner.info(f"\nhalted ({halt.reason.value}): {local_words(halt.message)}")
    return EXIT_HALTED


def local_words(text: str) -> str:
    """The ladder's text as a local run reads it: the model key is an environment variable here,
    not the Action's input, and the other settings are flags (`settings.flag_words`)."""
    from ci_autofix.agent.llm import KEY_INPUT
    from ci_autofix.settings import flag_words

    text = text.replace(KEY_INPUT, "ANTHROPIC_API_KEY environment variable")
    for action, local in (
        ("to the step's `with:`", "to your environment"),
        ("the step's `env:`", "your environment"),
        ("Build an image with", "Install it with"),
    ):
        text = text.replace(action, local)
    return flag_words(text)


def keep_work(work: Kept, runner_temp: Path | None, runner: Runner, name: str) -> dict[str, str]:
    """The halted attempt's work in files under RUNNER_TEMP: the outcome's `*_path` fields."""
    try:
        written = kept.write(work, runner_temp, name, runner.redact)
    except OSError as exc:
        runner.warning(
            f"The halted attempt's work could not be kept in files ({exc}); the job summary has it."
        )
        return {}
    return {key.replace("-", "_"): path for key, path in written.items()}
