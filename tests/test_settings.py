"""Settings read the way the runner passes inputs: INPUT_<NAME> upper-cased, hyphens kept."""

from __future__ import annotations

import pytest

from ci_autofix.errors import UserError
from ci_autofix.settings import DEFAULT_MODEL, Settings, load_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith(("INPUT_", "GITHUB_", "RUNNER_")) or name in {"ANTHROPIC_API_KEY"}:
            monkeypatch.delenv(name)


def test_hyphenated_input_names_as_the_runner_sets_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INPUT_MAX-ATTEMPTS", "5")
    monkeypatch.setenv("INPUT_ALLOW-FORKS", "true")
    monkeypatch.setenv("INPUT_REVIEWERS", "alice, bob\nacme/core")
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", "ghs_abcdefghijklmnopqrstuvwxyz0123456789")
    s = load_settings()
    assert s.max_attempts == 5
    assert s.allow_forks is True
    assert s.reviewers == ["alice", "bob", "acme/core"]
    assert s.github_token is not None and s.github_token.get_secret_value().startswith("ghs_")
    assert "ghs_" not in repr(s)


def test_underscore_spelling_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INPUT_MAX_ATTEMPTS", "2")
    assert load_settings().max_attempts == 2


def test_empty_values_mean_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    # the runner sets every declared input, "" when the workflow leaves it out
    for name in Settings.input_names():
        monkeypatch.setenv(f"INPUT_{name.upper()}", "")
    s = load_settings()
    assert s.model == DEFAULT_MODEL
    assert s.max_attempts == 3
    assert s.labels == ["ci-autofix"]
    assert s.mode == "auto"


def test_runner_variables(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("GITHUB_EVENT_NAME", "workflow_run")
    monkeypatch.setenv("GITHUB_API_URL", "https://ghe.example.com/api/v3")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    s = load_settings()
    assert (s.event_name, s.api_url, s.workspace, s.in_actions) == (
        "workflow_run",
        "https://ghe.example.com/api/v3",
        tmp_path,
        True,
    )


def test_generic_environment_names_are_not_read_as_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL", "something-else")
    monkeypatch.setenv("MODE", "apply")
    s = load_settings()
    assert s.model == DEFAULT_MODEL and s.mode == "auto"


def test_keyword_overrides_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INPUT_MAX-TURNS", "9")
    assert load_settings(max_turns=4).max_turns == 4


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("INPUT_MAX-ATTEMPTS", "many", "input `max-attempts` (got 'many')"),
        ("INPUT_MAX-ATTEMPTS", "0", "input `max-attempts`"),
        ("INPUT_ALLOW-FORKS", "maybe", "input `allow-forks` (got 'maybe')"),
        ("INPUT_MODE", "fix", "input `mode`"),
        ("INPUT_BRANCH-PREFIX", "-x/", "input `branch-prefix`"),
    ],
)
def test_bad_values_name_the_input(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(UserError) as err:
        load_settings()
    assert expected in err.value.cause
    assert "with:" in err.value.remedy


def test_a_bad_token_value_is_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INPUT_MAX-COST-USD", "lots")
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", "ghs_secretsecretsecretsecretsecret0000")
    with pytest.raises(UserError) as err:
        load_settings()
    assert "ghs_secret" not in str(err.value)


def test_branch_prefix_gets_a_trailing_slash() -> None:
    assert load_settings(branch_prefix="autofix").branch_prefix == "autofix/"


def test_secrets_lists_every_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", "t1-value")
    monkeypatch.setenv("INPUT_CI-TOKEN", "t2-value")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "t3-value")
    assert sorted(load_settings().secrets()) == ["t1-value", "t2-value", "t3-value"]


def test_unknown_fixers_fail_at_startup(monkeypatch: pytest.MonkeyPatch) -> None:
    from ci_autofix.cli.io import load

    monkeypatch.setenv("INPUT_FIXERS", "ruff-format, prettyfier")
    with pytest.raises(UserError) as err:
        load()
    assert "`fixers` input" in err.value.cause and "prettyfier" in err.value.cause


def test_a_long_bad_value_is_shortened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INPUT_PULL-REQUEST", "9" * 10_000 + "x")
    with pytest.raises(UserError) as err:
        load_settings()
    assert len(err.value.cause) < 400
