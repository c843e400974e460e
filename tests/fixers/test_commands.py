from __future__ import annotations

import pytest

from ci_autofix.fixers.catalog import BLACK, ISORT, RUFF_CHECK, RUFF_FORMAT
from ci_autofix.fixers.commands import fix_arguments, read_commands, simple_commands


@pytest.mark.parametrize(
    ("command", "name", "args", "checking", "pin"),
    [
        ("ruff format --check .", "ruff-format", ("--check", "."), True, None),
        ("ruff format --diff src tests", "ruff-format", ("--diff", "src", "tests"), True, None),
        ("ruff check --output-format=github .", "ruff-check", ("--output-format=github", "."), True, None),
        ("ruff .", "ruff-check", (".",), True, None),
        ("black --check -l 100 src", "black", ("--check", "-l", "100", "src"), True, None),
        ("python -m black --check .", "black", ("--check", "."), True, None),
        ("python3.12 -m isort --check-only --diff .", "isort", ("--check-only", "--diff", "."), True, None),
        ("uv run --frozen ruff format --check", "ruff-format", ("--check",), True, None),
        ("poetry run isort -c src", "isort", ("-c", "src"), True, None),
        ("uvx ruff@0.8.6 format --check .", "ruff-format", ("--check", "."), True, "0.8.6"),
        ("pipx run black==24.2.0 --check .", "black", ("--check", "."), True, "24.2.0"),
        ("PYTHONWARNINGS=ignore .venv/bin/black --check src", "black", ("--check", "src"), True, None),
        ("black src", "black", ("src",), False, None),
    ],
)
def test_reads_the_tool_from_a_command(
    command: str, name: str, args: tuple[str, ...], checking: bool, pin: str | None
) -> None:
    [invocation] = read_commands([command]).invocations
    assert (invocation.fixer.name, invocation.args, invocation.checking, invocation.pin) == (
        name,
        args,
        checking,
        pin,
    )


def test_splits_scripts_into_simple_commands() -> None:
    script = "pip install -r requirements.txt\nruff check . && ruff format --check . \\\n  src\nblack --check . || exit 1"
    facts = read_commands([script])
    assert [(i.fixer.name, i.args) for i in facts.invocations] == [
        ("ruff-check", (".",)),
        ("ruff-format", ("--check", ".", "src")),
        ("black", ("--check", ".")),
    ]


@pytest.mark.parametrize(
    ("command", "hooks"),
    [
        ("pre-commit run --all-files", ()),
        ("pre-commit run ruff-format --all-files --show-diff-on-failure", ("ruff-format",)),
        ("pre-commit run --hook-stage manual black --files a.py b.py", ("black",)),
        ("uvx pre-commit run --all-files", ()),
        ("pre-commit/action@v3.0.1", ()),
    ],
)
def test_reads_pre_commit_runs(command: str, hooks: tuple[str, ...]) -> None:
    facts = read_commands([command])
    assert [run.hooks for run in facts.pre_commit] == [hooks]


@pytest.mark.parametrize(
    "command",
    ["pytest -q", "make lint", "echo 'ruff format --check'", "ruff rule E501", "npx biome migrate --write"],
)
def test_other_commands_name_no_fixer(command: str) -> None:
    facts = read_commands([command])
    assert facts.invocations == []
    assert facts.pre_commit == []


@pytest.mark.parametrize(
    ("fixer", "args", "options", "paths"),
    [
        (
            RUFF_FORMAT,
            ["--check", "--diff", "--config", "ruff.toml", "src"],
            ["--config", "ruff.toml"],
            ["src"],
        ),
        (
            RUFF_CHECK,
            ["--output-format", "github", "--select", "I,F401", "--exit-zero", "."],
            ["--select", "I,F401"],
            ["."],
        ),
        (RUFF_CHECK, ["--fix", "--output-format=full", "--", "-weird.py"], [], ["-weird.py"]),
        (
            BLACK,
            ["--check", "--diff", "--color", "-l", "100", "-t", "py311", "src", "tests"],
            ["-l", "100", "-t", "py311"],
            ["src", "tests"],
        ),
        (
            ISORT,
            ["--check-only", "--diff", "--profile", "black", "--sp", "cfg/isort.cfg", "."],
            ["--profile", "black", "--sp", "cfg/isort.cfg"],
            ["."],
        ),
        (ISORT, ["-c", "--line-length=100", "pkg"], ["--line-length=100"], ["pkg"]),
    ],
)
def test_fix_arguments_drop_report_flags_and_keep_the_rest(fixer, args, options, paths) -> None:  # type: ignore[no-untyped-def]
    result = fix_arguments(fixer, args)
    assert (list(result.options), list(result.paths)) == (options, paths)


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (
            "ruff format --check . 2>&1 | tee out.log",
            [["ruff", "format", "--check", "."], ["tee", "out.log"]],
        ),
        ("black --check src > report.txt", [["black", "--check", "src"]]),
        ("isort -c . &>/dev/null || exit 1", [["isort", "-c", "."], ["exit", "1"]]),
        ('echo "a && b > c"; ruff check', [["echo", "a && b > c"], ["ruff", "check"]]),
        ("ruff check . # lint", [["ruff", "check", "."]]),
        ("black --check 'unterminated", []),
    ],
)
def test_simple_commands_split_operators_and_drop_redirections(command: str, words: list[list[str]]) -> None:
    assert list(simple_commands(command)) == words
