"""One settings model: the action's inputs, the runner's environment, and the CLI's flags.

Inputs arrive as `INPUT_<NAME>` with the name upper-cased and hyphens kept
(`INPUT_MAX-ATTEMPTS`); the underscore spelling is accepted too, and an empty value means
the default (the runner sets every declared input, `""` when the workflow leaves it out).
The runner's own variables (`GITHUB_*`, `RUNNER_*`) fill the runner fields. The CLI passes
its flags as keyword arguments, which win over the environment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, AliasGenerator, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from ci_autofix.errors import UserError

DEFAULT_MODEL = "claude-sonnet-5-5"

Mode = Literal["auto", "propose", "apply", "review"]
Provider = Literal["anthropic", "bedrock", "vertex"]
StrList = Annotated[list[str], NoDecode]

# Settings a local `fix` run takes as flags (tokens never: they come from the environment).
LOCAL_FLAGS = (
    "fixers",
    "setup_command",
    "test_command",
    "protected_paths",
    "max_changed_lines",
    "max_files",
    "allow_shell",
    "provider",
    "model",
    "max_turns",
    "max_cost_usd",
    "max_minutes",
    "command_timeout",
    "max_log_tokens",
    "require_verified",
    "branch_prefix",
)


@dataclass(frozen=True)
class Local:
    """Where a run that is not the Action reads its settings: a local command (`fix`), which takes
    `flags` on its command line. Its messages name a setting by its flag (`--max-minutes`), where
    the Action's name the input under `with:` (`max-minutes`)."""

    command: str
    flags: Sequence[str] = ()


def _input_aliases(field_name: str) -> AliasChoices:
    kebab = field_name.replace("_", "-").upper()
    return AliasChoices(f"INPUT_{kebab}", f"INPUT_{field_name.upper()}")


def _runner(*names: str) -> Any:
    """A field read from the runner's environment rather than from an input."""
    return AliasChoices(*names)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        alias_generator=AliasGenerator(validation_alias=_input_aliases),
        populate_by_name=False,  # by name, generic variables such as MODEL or MODE would be read too
        env_ignore_empty=True,
        str_strip_whitespace=True,
        extra="ignore",
        frozen=True,
    )

    # ---- action inputs (kebab-case in action.yml) -------------------------------------------
    mode: Mode = Field(
        "auto",
        description="Which flow to run: `auto` picks it from the event "
        "(`workflow_run` → propose, `workflow_dispatch` → apply, or propose when it names a `run-id`, "
        "`pull_request_review` → review).",
    )
    github_token: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN", "GITHUB_TOKEN"),
        description="Token for the GitHub API and for pushing the suggestion branch, usually `secrets.GITHUB_TOKEN`.",
    )
    anthropic_api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices(
            "INPUT_ANTHROPIC-API-KEY", "INPUT_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"
        ),
        description="Anthropic API key for the fix agent. Without it only the deterministic fixers run.",
    )
    ci_token: SecretStr | None = Field(
        None,
        description="Optional GitHub App token or PAT used to push, so that CI runs on the fix "
        "(pushes made with `GITHUB_TOKEN` start no workflow).",
    )
    provider: Provider = Field(
        "anthropic", description="Where the model runs: `anthropic`, `bedrock` or `vertex`."
    )
    model: str = Field(DEFAULT_MODEL, description="Model used by the fix agent.")
    effort: Literal["", "low", "medium", "high", "xhigh", "max"] = Field(
        "",
        description="The model's effort (the Messages API's `output_config.effort`: low, medium, high, xhigh, "
        "max), the main cost lever on current models; empty: not sent, the model's own default.",
    )
    max_attempts: int = Field(
        3,
        ge=1,
        le=20,
        description="Most attempts per lineage of a failing branch: suggestions proposed, and attempts that "
        "halted after the model ran or a change was made.",
    )
    max_turns: int = Field(30, ge=1, le=200, description="Most model turns per attempt.")
    max_cost_usd: float = Field(2.0, gt=0, le=100, description="Most model spend per attempt, in US dollars.")
    max_lineage_cost_usd: float = Field(
        6.0,
        gt=0,
        le=1000,
        description="Most model spend per lineage of a failing branch (every attempt, halted or proposed, "
        "until a human commit starts a new lineage), in US dollars.",
    )
    max_minutes: float = Field(15, gt=0, le=350, description="Wall-clock limit for the agent, in minutes.")
    command_timeout: int = Field(
        600,
        ge=5,
        le=3600,
        description="Timeout in seconds for each command we run (fixers, the failing command, tests).",
    )
    max_log_tokens: int = Field(
        6000,
        ge=500,
        le=100_000,
        description="Token budget of the log excerpt given to the agent and shown in the pull request.",
    )
    branch_prefix: str = Field(
        "ci-autofix/",
        min_length=1,
        max_length=64,
        description="Prefix of suggestion branches; runs on such branches are skipped.",
    )
    branches: StrList = Field(
        default_factory=list,
        description="Only handle failures on branches matching "
        "one of these globs (comma or newline separated; empty: all).",
    )
    exclude_branches: StrList = Field(
        default_factory=list, description="Never handle failures on branches matching one of these globs."
    )
    reviewers: StrList = Field(
        default_factory=list,
        description="Extra reviewers to request (logins, or "
        "`org/team` for teams), besides the author of the failing change.",
    )
    labels: StrList = Field(
        default_factory=lambda: ["ci-autofix"], description="Labels put on the suggestion PR."
    )
    fixers: StrList = Field(
        default_factory=lambda: ["auto"],
        description="Deterministic fixers to try: `auto` "
        "(what the failing step ran and the repository configures), `none`, or a list of "
        "`ruff-format`, `ruff-check`, `black`, `isort`, `goimports`, `gofmt`, `cargo-fmt`, `eslint`, `biome-lint`, "
        "`biome-check`, `biome-format`, `prettier`.",
    )
    setup_command: str = Field(
        "",
        description="Command that prepares the environment before verification "
        "(for example `pip install -e .[test]`).",
    )
    test_command: str = Field("", description="Extra command that must pass for a fix to count as verified.")
    protected_paths: StrList = Field(
        default_factory=list,
        description="Globs of paths the fix may not touch, in addition to the files that decide what CI runs, "
        "who must review and what a merge bot merges (`.github/**`, `action.yml`/`action.yaml` anywhere, "
        "`CODEOWNERS`, merge bots' and other CI systems' files: see Security).",
    )
    max_changed_lines: int = Field(200, ge=1, le=100_000, description="Largest fix, in changed lines.")
    max_files: int = Field(10, ge=1, le=1000, description="Largest fix, in changed files.")
    allow_shell: bool = Field(
        False,
        description="Let the agent run arbitrary shell commands (otherwise only "
        "the failing command, `setup-command` and `test-command`).",
    )
    allow_forks: bool = Field(
        False,
        description="Handle failures of pull requests from forks. Off by default: "
        "it runs untrusted code in a job that holds secrets.",
    )
    allow_bots: bool = Field(
        False,
        description="review: act on a changes-requested review whose author is a bot. Off by default: a "
        "bot's review would start a fix with nobody's judgement behind it.",
    )
    rerun_infra: bool = Field(
        False,
        description="Re-run the failed jobs once when the failure is "
        "infrastructure (network, runner lost) instead of halting.",
    )
    inherited_failures: Literal["halt", "fix-base", "fix-here"] = Field(
        "halt",
        description="When the base branch's latest run of the workflow fails the same way, in files the PR "
        "does not change: halt failing-on-base (halt), propose the fix against the base branch, for its own "
        "failed run (fix-base), or fix it in the failing branch anyway (fix-here).",
    )
    inline_suggestions: bool = Field(
        True,
        description="propose: also post the hunks of a verified, policy-clean fix that lie inside lines the "
        "failing PR changed as one-click suggestions on that PR, beside the suggestion PR.",
    )
    rerun_flaky: bool = Field(
        False,
        description="When the failure does not reproduce here (halt not-reproduced), re-run the failed jobs "
        "once, on the run's first attempt.",
    )
    attempt_unreproduced: bool = Field(
        False,
        description="Let the agent try from the log when the failure does not reproduce here; "
        "its fix is then an unverified draft.",
    )
    require_verified: bool = Field(
        False, description="Halt instead of proposing a fix that could not be verified here."
    )
    require_ci_green: bool = Field(False, description="apply: refuse unless CI on the fix concluded success.")
    trusted_author: str = Field(
        "github-actions[bot]",
        pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$",
        description="apply: the login the propose job's `github-token` acts as (`github-actions[bot]` "
        "for `GITHUB_TOKEN`, `<app-slug>[bot]` for an App token, the user of a PAT). Only suggestion "
        "PRs it opened, on fix commits it marked with a `ci-autofix/provenance` status, are applied.",
    )
    pull_request: int | None = Field(None, ge=1, description="apply: number of the suggestion pull request.")
    apply_workflow: str = Field(
        "ci-autofix-apply.yml",
        description="File name of your apply workflow "
        "(the one with `mode: apply`), used in the approval instructions on each suggestion.",
    )
    keep_branch: bool = Field(False, description="apply: keep the suggestion branch after applying.")
    ask_first: bool = Field(
        False,
        description="propose: only triage, and ask on the failing PR whether to attempt a fix (the "
        "comment shows the command that dispatches the attempt); halts `awaiting-approval`.",
    )
    run_id: int | None = Field(
        None,
        description="propose on `workflow_dispatch`: the failed workflow run to attempt a fix for "
        "(the ask-first comment's command passes it).",
    )
    auto_apply: bool = Field(
        False,
        description="propose: dispatch the apply workflow for a suggestion that is verified and "
        "policy-clean; the apply job's environment still decides (required reviewers, or none "
        "for unattended runs).",
    )
    fail_on_halt: bool = Field(False, description="Fail the job when the run halts without a fix.")

    # ---- the runner's environment --------------------------------------------------------------
    event_name: str = Field("", validation_alias=_runner("GITHUB_EVENT_NAME"))
    event_path: Path | None = Field(None, validation_alias=_runner("GITHUB_EVENT_PATH"))
    repository: str = Field("", validation_alias=_runner("GITHUB_REPOSITORY"))
    api_url: str = Field("https://api.github.com", validation_alias=_runner("GITHUB_API_URL"))
    server_url: str = Field("https://github.com", validation_alias=_runner("GITHUB_SERVER_URL"))
    workspace: Path = Field(Path("."), validation_alias=_runner("GITHUB_WORKSPACE"))
    output_path: Path | None = Field(None, validation_alias=_runner("GITHUB_OUTPUT"))
    summary_path: Path | None = Field(None, validation_alias=_runner("GITHUB_STEP_SUMMARY"))
    actor: str = Field("", validation_alias=_runner("GITHUB_ACTOR"))
    triggering_actor: str = Field("", validation_alias=_runner("GITHUB_TRIGGERING_ACTOR"))
    workflow_ref: str = Field("", validation_alias=_runner("GITHUB_WORKFLOW_REF"))
    in_actions: bool = Field(False, validation_alias=_runner("GITHUB_ACTIONS"))
    runner_temp: Path | None = Field(None, validation_alias=_runner("RUNNER_TEMP"))

    @field_validator(
        "branches", "exclude_branches", "reviewers", "labels", "fixers", "protected_paths", mode="before"
    )
    @classmethod
    def _split_list(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip() for item in value.replace(",", "\n").splitlines() if item.strip()]
        return value

    @field_validator("run_id", mode="before")
    @classmethod
    def _plain_run_id(cls, value: object) -> object:
        from ci_autofix.refs import plain_number

        if value is None or value == "":
            return None
        try:
            return plain_number(value, what="the value", kind="workflow run id", remedy="")
        except UserError as exc:
            raise ValueError(
                f"{exc.cause} Pass the id of the failed workflow run (the number in its URL, "
                "`.../actions/runs/<id>`), as the ask-first comment's command does."
            ) from None

    @field_validator("branch_prefix")
    @classmethod
    def _plain_prefix(cls, value: str) -> str:
        from ci_autofix.refs import branch_problem

        if problem := branch_problem(value.rstrip("/") or "/"):
            raise ValueError(f"not usable as a branch name prefix: {problem}")
        return value if value.endswith("/") else value + "/"

    def __init__(self, **values: Any) -> None:
        # Keyword arguments by field name (`Settings(max_turns=4)`, the CLI's flags) map to the
        # field's first alias, since reading by name would also pick up generic variables.
        super().__init__(**{_first_alias(name): value for name, value in values.items()})

    # ---- helpers ---------------------------------------------------------------------------------
    @classmethod
    def input_names(cls) -> list[str]:
        """The action's inputs as the user writes them in `with:` (kebab-case)."""
        return [
            name.replace("_", "-") for name, field in cls.model_fields.items() if not _is_runner_field(field)
        ]

    def secrets(self) -> list[str]:
        """Every secret value this run holds, for masking."""
        return [
            s.get_secret_value()
            for s in (self.github_token, self.anthropic_api_key, self.ci_token)
            if s is not None and s.get_secret_value()
        ]


def _is_runner_field(field: Any) -> bool:
    alias = field.validation_alias
    return isinstance(alias, AliasChoices) and not any(
        str(choice).startswith("INPUT_") for choice in alias.choices
    )


def load_settings(local: Local | None = None, **overrides: Any) -> Settings:
    """Read the settings. Errors name the input under `with:` when run as the Action, the flag or
    the environment variable when run by a `local` command. (What only a stage can check, such as
    the fixers' names and the price table, `cli.io.load` checks next, before any work.)"""
    try:
        return Settings(**{name: value for name, value in overrides.items() if value is not None})
    except ValidationError as exc:
        raise UserError(*_describe(exc, local)) from None


def _first_alias(name: str) -> str:
    field = Settings.model_fields.get(name)
    if field is None:
        return name
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return str(_input_aliases(name).choices[0])


def _describe(exc: ValidationError, local: Local | None) -> tuple[str, str]:
    problems = []
    for error in exc.errors():
        where = str(error["loc"][0]) if error["loc"] else "?"
        name = where.removeprefix("INPUT_").lower().replace("_", "-") if where.startswith("INPUT_") else where
        name = name.replace("_", "-")
        secret = any(word in name for word in ("token", "key"))
        value = repr(error.get("input"))
        shown = "" if secret else f" (got {value[:60] + '…' if len(value) > 60 else value})"
        said = error["msg"] if local is None else flag_words(error["msg"])
        if not (where.startswith("INPUT_") or name in Settings.input_names()):
            problems.append(f"{where}{shown}: {said}")
        elif local is None:
            problems.append(f"input `{name}`{shown}: {said}")
        elif name.replace("-", "_") in local.flags:
            problems.append(f"flag `--{name}`{shown}: {said}")
        else:  # a local command reads the other inputs from the environment only
            problems.append(f"environment variable {where}{shown}: {said}")
    cause = "Invalid configuration: " + "; ".join(problems)
    if local is None:
        remedy = (
            "Correct the value under `with:` in your workflow; the README's inputs table lists each "
            "input's accepted values."
        )
    else:
        fix = "Correct the value" + (
            ", or unset the environment variable"
            if any("environment variable" in p for p in problems)
            else ""
        )
        remedy = (
            f"{fix}; `ci-autofix {local.command} --help` lists each flag's accepted values "
            "(the README's inputs table too: each flag is the input of the same name)."
        )
    return cause, remedy


def flag_words(text: str) -> str:
    """`text` as a local run reads it: each setting it names as the Action's input (`max-turns`, "the
    `fixers` input", `provider: anthropic`) named as the local flag (`--max-turns`, "the `--fixers`
    flag", `--provider anthropic`)."""
    names = "|".join(re.escape(name.replace("_", "-")) for name in LOCAL_FLAGS)
    text = re.sub(rf"`({names}): ([^`\n]+)`", r"`--\1 \2`", text)  # `provider: anthropic`, as in `with:`
    return re.sub(rf"`({names})`( input)?", lambda m: f"`--{m[1]}`" + (" flag" if m[2] else ""), text)
