"""A halt as each flow ends with it: an outcome for the Action, one line and exit 3 locally.

The flows catch their own halts (each knows what else a halt owes: a comment, the
diagnosis for the summary); the words and fields of the ending are made here, once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ci_autofix.deliver import kept
from ci_autofix.errors import Halt, Kept
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner

EXIT_HALTED = 3  # a local command halted without a fix


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
