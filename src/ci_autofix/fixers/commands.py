"""What a failing step ran, read back from its command line: which tool, with which arguments.

The commands are the failed steps' scripts from the workflow (`ci_autofix.workflow.definition`: `ruff format --check .`,
`uv run black --check src tests`, `pre-commit run --all-files`). Each line is split into
simple commands at `&&`, `||`, `;` and `|`; wrappers (`python -m`, `uv run`, `uvx`,
`poetry run`, `pipx run`, ...) are peeled off, and the rest is matched against the fixers.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ci_autofix.fixers.catalog import (
    BIOME_CHECK,
    BIOME_FORMAT,
    BIOME_LINT,
    BLACK,
    CARGO_FMT,
    ESLINT,
    GOFMT,
    GOIMPORTS,
    ISORT,
    PRETTIER,
    RUFF_CHECK,
    RUFF_FORMAT,
    Fixer,
)
from ci_autofix.fixers.recipes import make_recipe, nox_commands, package_script, script_lines, tox_commands
from ci_autofix.tooling.tools import action_package
from ci_autofix.tooling.versions import is_version

_RUN_WRAPPERS = frozenset({"uv", "poetry", "pdm", "hatch", "pipenv", "rye", "pixi", "tox"})
_PREFIXES = frozenset({"time", "exec", "command", "nice", "xargs", "env"})
_PYTHON_RE = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
_ASSIGNMENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=(?!=)")
# A run that only reports about the tool itself (`black --version` before `black --check .` in
# one step): it checks no file, so it neither plans a fixer nor lends it its options.
_ABOUT_THE_TOOL = frozenset({"--version", "-V", "--version-number", "--help", "-h"})
_RUFF_SUBCOMMANDS = frozenset(
    {"check", "format", "rule", "config", "linter", "clean", "server", "analyze", "version", "help"}
)


@dataclass(frozen=True)
class Invocation:
    """One run of a fixer's tool in a failing command."""

    fixer: Fixer
    args: tuple[str, ...]  # the arguments after the tool (and its subcommand)
    checking: bool  # ran in check mode (`--check`, `--diff`, `ruff check`)
    pin: str | None = None  # a version named on the command line itself (`uvx ruff@0.8.6`)


@dataclass(frozen=True)
class PreCommitRun:
    """`pre-commit run [hook] ...`, or the pre-commit/action step."""

    hooks: tuple[str, ...] = ()  # hook ids named on the command line (empty: all hooks)


@dataclass
class CommandFacts:
    invocations: list[Invocation] = field(default_factory=list)
    pre_commit: list[PreCommitRun] = field(default_factory=list)
    # what a task runner's command resolved to, or why it could not be (for the report)
    notes: list[str] = field(default_factory=list)


def read_commands(commands: Sequence[str], root: Path | None = None) -> CommandFacts:
    """The tools the commands run; with `root` (the repository), `make`, `tox -e` and `nox -s`
    commands are read through to their recipes (`recipes`)."""
    facts = CommandFacts()
    for command in commands:
        if re.search(r"\bpre-commit/action@", command):
            facts.pre_commit.append(PreCommitRun())
        if package := action_package(command):  # a `uses:` step of the tool's own action
            fixer = {"ruff": RUFF_CHECK, "black": BLACK, "isort": ISORT}[package]
            facts.invocations.append(Invocation(fixer, (), checking=True))
            continue
        # the commands inside `$(...)` too: `test -z "$(gofmt -l .)"`
        for part in (command, *re.findall(r"\$\(([^()]*)\)", command)):
            for words in simple_commands(part):
                _read_one(words, facts, root)
    return facts


def line_tokens(line: str) -> list[str] | None:
    """One shell line as words and operators (`;`, `&&`, `|`, `(`, `>`... each a token of its own),
    as the shell would split it; None for a blank or comment line, or one that does not split."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer) or None
    except ValueError:
        return None


def simple_commands(command: str) -> Iterator[list[str]]:
    """The simple commands of a script, as word lists; lines that do not split are skipped."""
    script = re.sub(r"\\\r?\n", " ", command)
    for line in script.splitlines():
        tokens = line_tokens(line)
        if tokens is None:
            continue
        words: list[str] = []
        redirect = False
        for token in tokens:
            if set(token) & set("<>") and set(token) <= set("<>&"):  # `>`, `2>&1`, `&>`: drop with the target
                if words and words[-1].isdigit():
                    words.pop()
                redirect = True
            elif redirect:
                redirect = False
            elif set(token) <= set(";&|()"):
                if words:
                    yield words
                words = []
            else:
                words.append(token)
        if words:
            yield words


def _unwrap(words: list[str]) -> tuple[list[str], str | None]:
    """Strip env assignments, `python -m`, `uv run`, `uvx tool@1.2` and the like; return any pinned version."""
    pin = None
    while words:
        head = words[0].rsplit("/", 1)[-1]
        if _ASSIGNMENT_RE.match(words[0]) or head in _PREFIXES or head == "sudo":
            words = words[1:]
        elif _PYTHON_RE.match(head) and len(words) > 1 and words[1] == "-m":
            words = words[2:]
        elif head in _RUN_WRAPPERS and len(words) > 1 and words[1] == "run":
            words = skip_options(words[2:])
        elif head == "uv" and words[1:3] == ["tool", "run"]:
            words = skip_options(words[3:])
        elif (
            head == "yarn" and words[1:2] and words[1] not in ("exec", "run") and not words[1].startswith("-")
        ):
            words = words[1:]  # `yarn prettier --check .`: yarn runs a package's binary by its name
        elif head == "npx" or (head in ("npm", "pnpm", "yarn") and words[1:2] == ["exec"]):
            words = skip_options(words[1:] if head == "npx" else words[2:])
            words = words[1:] if words[:1] == ["--"] else words
        elif head in ("uvx", "pipx"):
            words = skip_options(words[2:] if head == "pipx" and words[1:2] == ["run"] else words[1:])
        else:
            break
    if words:
        name, sep, version = words[0].partition("@")
        if not sep:
            name, sep, version = words[0].partition("==")
        if sep and is_version(version):
            pin = version
            words = [name, *words[1:]]
    return words, pin


_VALUED = frozenset(
    {"--with", "--from", "--python", "-p", "--spec", "--group", "--extra", "-e", "--package", "--only-group"}
    | {"--with-editable", "--with-requirements", "--env-file", "--directory", "--project"}
)


def skip_options(words: list[str]) -> list[str]:
    """`words` without the options of a wrapper (`uv run --frozen --group lint ruff ...`) before
    the command it runs."""
    while words and words[0].startswith("-"):
        option = words[0]
        words = words[1:]
        if option in _VALUED and words:
            words = words[1:]
    return words


_RUNNERS = {"make": make_recipe, "gmake": make_recipe, "tox": tox_commands, "nox": nox_commands}
# a package manager running a `package.json` script; any other of its commands (`npm ci`, `yarn exec
# prettier`, `yarn prettier` for a binary) is read as a command
_PACKAGE_RUNNERS = frozenset({"npm", "yarn", "pnpm"})


def _read_one(raw: list[str], facts: CommandFacts, root: Path | None = None, depth: int = 0) -> None:
    runner = _task_runner(raw)
    script = _script(raw)
    if script is not None:
        numbered = script_lines(root, script) if root is not None and depth < _RUNNER_DEPTH else None
        if numbered is not None and root is not None:
            _read_lines(script, [line for _, line in numbered], facts, root, depth)
        elif root is not None:
            facts.notes.append(
                f"`{script}` could not be read through to the commands it runs (it is not there)."
            )
        return
    if runner is not None and runner[0] in _PACKAGE_RUNNERS:
        lines = (
            package_script(root, runner[1:], runner[0])
            if root is not None and depth < _RUNNER_DEPTH
            else None
        )
        if lines is not None and root is not None:
            _read_lines(" ".join(runner), lines, facts, root, depth)
            return
        runner = None
    if runner is not None:
        if root is not None and depth < _RUNNER_DEPTH:
            _read_through(runner, facts, root, depth)
        return
    words, pin = _unwrap(raw)
    if not words:
        return
    tool = words[0].rsplit("/", 1)[-1].lower()
    args = words[1:]
    if tool == "pre-commit":
        if args[:1] == ["run"]:
            facts.pre_commit.append(PreCommitRun(pre_commit_hooks_named(args[1:])))
        return
    fixer: Fixer
    if tool == "ruff":
        if args[:1] == ["format"]:
            fixer, args = RUFF_FORMAT, args[1:]
        elif args[:1] == ["check"]:
            fixer, args = RUFF_CHECK, args[1:]
        elif args and args[0] not in _RUFF_SUBCOMMANDS:  # `ruff .`: ruff before 0.5 checked by default
            fixer = RUFF_CHECK
        else:
            return
    elif tool == "black":
        fixer = BLACK
    elif tool == "isort":
        fixer = ISORT
    elif tool == "cargo" and args[:1] == ["fmt"]:
        fixer, args = CARGO_FMT, args[1:]
    elif tool == "biome" and args[:1] and args[0] in _BIOME:
        fixer, args = _BIOME[args[0]], args[1:]
    elif tool in _BY_PROGRAM:
        fixer = _BY_PROGRAM[tool]
    else:
        return
    if any(arg in _ABOUT_THE_TOOL for arg in args):
        return
    checking = fixer.always_checks or any(_flag(a) in fixer.check_flags for a in args)
    facts.invocations.append(Invocation(fixer, tuple(args), checking, pin))


_RUNNER_DEPTH = 4
_BY_PROGRAM = {"gofmt": GOFMT, "goimports": GOIMPORTS, "prettier": PRETTIER, "eslint": ESLINT}
# `biome ci` is `biome check` that never writes: its fix is `biome check --write`
_BIOME = {"check": BIOME_CHECK, "ci": BIOME_CHECK, "format": BIOME_FORMAT, "lint": BIOME_LINT}


_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})


def _script(raw: list[str]) -> str | None:
    """The repository script a command runs (`./.ci.gofmt.sh`, `bash scripts/lint.sh`), else None; a
    program run by its path (`./node_modules/.bin/prettier`, `./gradlew`) is read as a command."""
    words = raw
    while words and (_ASSIGNMENT_RE.match(words[0]) or words[0].rsplit("/", 1)[-1] in _PREFIXES):
        words = words[1:]
    if len(words) > 1 and words[0].rsplit("/", 1)[-1] in _SHELLS and not words[1].startswith("-"):
        return words[1]
    if words and words[0].startswith("./") and words[0].endswith((".sh", ".bash")):
        return words[0][2:]
    return None


def _task_runner(raw: list[str]) -> list[str] | None:
    """`make`, `tox`, `nox`, `npm`, `yarn` or `pnpm` with its arguments (after `uv run` and the like), else None."""
    words = raw
    while words and (_ASSIGNMENT_RE.match(words[0]) or words[0].rsplit("/", 1)[-1] in _PREFIXES):
        words = words[1:]
    head = words[0].rsplit("/", 1)[-1] if words else ""
    if head in _RUN_WRAPPERS and head != "tox" and words[1:2] == ["run"]:
        words = skip_options(words[2:])
        head = words[0].rsplit("/", 1)[-1] if words else ""
    if head not in _RUNNERS and head not in _PACKAGE_RUNNERS:
        return None
    args = words[1:]
    if head == "tox" and args[:1] == ["run"]:  # tox 4: `tox run -e lint`
        args = args[1:]
    return [head, *args]


def _read_through(runner: list[str], facts: CommandFacts, root: Path, depth: int) -> None:
    shown = " ".join(runner)
    lines = _RUNNERS[runner[0]](root, runner[1:])
    if lines is None:
        facts.notes.append(
            f"`{shown}` could not be read through to the commands it runs (its file or target is not there)."
        )
        return
    _read_lines(shown, lines, facts, root, depth)


def _read_lines(shown: str, lines: list[str], facts: CommandFacts, root: Path, depth: int) -> None:
    facts.notes.append(f"`{shown}` runs: " + "; ".join(f"`{line}`" for line in lines[:10]))
    for line in lines:
        # the commands inside `$(...)` too: `if [ -n "$(gofmt -l .)" ]; then`
        for words in (w for part in (line, *_SUBSTITUTION.findall(line)) for w in simple_commands(part)):
            _read_one(words, facts, root, depth + 1)


_PRE_COMMIT_VALUES = frozenset(
    {
        "--hook-stage",
        "--from-ref",
        "--to-ref",
        "-s",
        "-o",
        "--source",
        "--origin",
        "--config",
        "-c",
        "--remote-branch",
        "--local-branch",
        "--remote-name",
        "--remote-url",
        "--commit-msg-filename",
        "--checkout-type",
    }
)


def pre_commit_hooks_named(args: list[str]) -> tuple[str, ...]:
    """The hook ids `pre-commit run <args>` names (none: every hook)."""
    hooks: list[str] = []
    it = iter(args)
    for arg in it:
        if arg == "--files":
            break
        if arg in _PRE_COMMIT_VALUES:
            next(it, None)
        elif not arg.startswith("-"):
            hooks.append(arg)
    return tuple(hooks)


def _flag(arg: str) -> str:
    return arg.split("=", 1)[0] if arg.startswith("--") else arg


@dataclass(frozen=True)
class FixArguments:
    options: tuple[str, ...]  # options kept from the check command (config, line length, ...)
    paths: tuple[str, ...]  # the positional arguments: files and directories it targeted


def fix_arguments(fixer: Fixer, args: Sequence[str]) -> FixArguments:
    """Split a check command's arguments into options to keep (report-only ones dropped) and paths."""
    options: list[str] = []
    paths: list[str] = []
    it = iter(args)
    only_paths = False
    for arg in it:
        if only_paths or not arg.startswith("-") or arg == "-":
            paths.append(arg)
            continue
        if arg == "--":
            only_paths = True
            continue
        flag = _flag(arg)
        takes_value = "=" not in arg and flag in (fixer.value_options | fixer.drop_values)
        value = next(it, None) if takes_value else None
        if flag in fixer.drop_flags or flag in fixer.drop_values:
            continue
        options.append(arg)
        if value is not None:
            options.append(value)
    return FixArguments(tuple(options), tuple(paths))
