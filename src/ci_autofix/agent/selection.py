"""The test-selection grammar: an allowed test runner, run on a part of the tests.

Beyond the exact allowed commands, the agent's `run` tool accepts a command line that starts
with the program of an allowed test runner and continues with test-selection arguments only,
so the agent can run one failing test instead of the whole suite. What counts:

- A runner comes only from an allowed command, and keeps that command's program word for
  word: allowed `.venv/bin/python -m pytest tests/` gives `.venv/bin/python -m pytest …`, never
  another interpreter or program. The runners: `pytest`/`py.test`, `PYTHON -m pytest`; `npm`,
  `pnpm` or `yarn` with `test` or `run test` (selection arguments after `--`), `jest`, `vitest`
  (`vitest run`), and those through `npx`; `go test`; `cargo test` (`cargo +TOOLCHAIN test`).
  An allowed command with shell syntax is no runner.
- The line is split like a POSIX shell word list (`shlex`), but nothing a shell would expand or
  interpret is accepted: operators (`; | & < > ( )`), redirections, `` ` ``, `$` expansions,
  newlines, unquoted glob characters (`* ? [`), braces, `~` and `#` at the start of a word.
  We never run a shell; refusing them tells the agent so.
- After the runner, each argument must be one of that runner's selection options (an
  allow-list, below); options that load code or configuration are refused with the reason,
  anything else with the list of what is allowed. Paths (pytest node ids' file part, jest and
  vitest test files, go packages) must resolve inside the repository (`inside`, the sandbox's
  check: no `..` escape, no absolute path outside, no symlink out) and not into `.git`.

Decisions: pytest `@FILE` is refused (pytest would read more arguments from the file), and
`--basetemp` wherever it points (pytest empties that directory); npm, pnpm and yarn run the
script through `sh`, so an argument after their `--` may hold no shell character at all, quoted
or not; go `-args` is refused (the rest of the line would go to the test binary unchecked); cargo
`--manifest-path`, `--target-dir`, `--config` and `-Z` are refused (`-p CRATE` selects a
workspace member); after cargo's `--` only libtest's selection and output flags are accepted.
"""

from __future__ import annotations

import re
import shlex
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePosixPath


class Refused(Exception):
    """A command line outside the grammar; the message says why and what is allowed."""


class NotARunner(Refused):
    """The command does not start with the program of an allowed test runner."""


class Kind(Enum):
    PYTEST = "pytest"
    JS = "jest/vitest"
    GO = "go test"
    CARGO = "cargo test"


@dataclass(frozen=True)
class TestRunner:
    """A test runner from an allowed command, and the program words it must keep."""

    __test__ = False  # a test runner we run, not a test class for pytest to collect

    kind: Kind
    prefix: tuple[str, ...]  # the allowed command's program words, e.g. ("python3", "-m", "pytest")
    separator: bool = False  # a package manager's script: the selection arguments follow `--`

    @property
    def line(self) -> str:
        return shlex.join(self.prefix) + (" --" if self.separator else "")


# ---- which allowed commands are runners ------------------------------------------------------------
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_PLAIN = re.compile(r"[\w./+:=@%,-]+")  # an allowed command's word with nothing a shell would change


def runners(allowed: Iterable[str]) -> list[TestRunner]:
    """The test runners among the allowed commands (each program once)."""
    found: dict[tuple[str, ...], TestRunner] = {}
    for command in allowed:
        runner = _runner(command)
        if runner is not None:
            found.setdefault(runner.prefix, runner)
    return list(found.values())


def _runner(command: str) -> TestRunner | None:
    words = command.split()
    if not words or not all(_PLAIN.fullmatch(w) for w in words):
        return None
    program = PurePosixPath(words[0]).name
    second = words[1] if len(words) > 1 else ""
    if program in ("pytest", "py.test"):
        return TestRunner(Kind.PYTEST, (words[0],))
    if _PYTHON.fullmatch(program) and words[1:3] == ["-m", "pytest"]:
        return TestRunner(Kind.PYTEST, tuple(words[:3]))
    if program in ("jest", "vitest"):
        return TestRunner(
            Kind.JS, tuple(words[:2]) if (program, second) == ("vitest", "run") else (words[0],)
        )
    if program == "npx" and PurePosixPath(second).name in ("jest", "vitest"):
        run = words[2:3] == ["run"] and second == "vitest"
        return TestRunner(Kind.JS, tuple(words[: 3 if run else 2]))
    if program in ("npm", "pnpm", "yarn"):
        if second in ("test", "t"):
            return TestRunner(Kind.JS, tuple(words[:2]), separator=True)
        if words[1:3] == ["run", "test"]:
            return TestRunner(Kind.JS, tuple(words[:3]), separator=True)
    if program == "go" and second == "test":
        return TestRunner(Kind.GO, tuple(words[:2]))
    if program == "cargo":
        toolchain = 1 if second.startswith("+") else 0
        if words[1 + toolchain : 2 + toolchain] == ["test"]:
            return TestRunner(Kind.CARGO, tuple(words[: 2 + toolchain]))
    return None


# ---- shell syntax ----------------------------------------------------------------------------------
_OPERATORS = frozenset(";|&<>()`")
_GLOB = frozenset("*?[")
_SCRIPT_SHELL = re.compile(
    r"[;|&<>()$`\\\"'*?\[\]{}~#!]"
)  # what sh could read in a package script's argument


def shell_syntax(command: str) -> str | None:
    """Why `command` needs a shell (what a shell would interpret or expand), or None."""
    if "\n" in command or "\r" in command or "\0" in command:
        return "a newline or NUL (one command per call)"
    quote = ""
    word_start = True
    i = 0
    while i < len(command):
        c = command[i]
        nxt = command[i + 1] if i + 1 < len(command) else ""
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\" and quote != "'":
            i += 2  # an escaped character is literal
            word_start = False
            continue
        elif (
            c == "$"
            and nxt
            and (nxt.isalnum() or nxt in "_{(['\"@*#?!$-")
            and not (quote == '"' and nxt == '"')
        ):
            return f"`${nxt}`: a shell expansion (no variables or command substitution)"
        elif c == "`":
            return "`` ` ``: command substitution"
        elif quote == '"':
            quote = "" if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif c in _OPERATORS:
            return f"`{c}`: shell operators and redirections are not supported (one plain command)"
        elif c in _GLOB:
            return f"`{c}` unquoted: a shell would expand it as a glob; quote it, or name the files"
        elif c in "{}":
            return f"`{c}` unquoted: a shell would expand braces; name each argument"
        elif word_start and c in "~#":
            return f"`{c}` at the start of a word: a shell would expand or drop it"
        word_start = quote == "" and c in " \t"
        i += 1
    return None


# ---- per-runner options ----------------------------------------------------------------------------
_ANY = r".+"
_NUM = r"\d{1,6}"


@dataclass(frozen=True)
class _Option:
    names: tuple[str, ...]  # spellings, e.g. ("-k",) or ("--tb",)
    value: str | None = None  # the value's pattern; None: a flag
    shown: str = ""  # how the description and refusals show it

    def label(self) -> str:
        return self.shown or self.names[0] + (" X" if self.value else "")


@dataclass(frozen=True)
class _Grammar:
    options: tuple[_Option, ...]
    denied: dict[str, str]  # option -> why it is refused (it loads code or configuration, ...)
    positional: str  # "path", "package" or "name"
    flags: str = ""  # short flags that may be combined in one word (pytest's -xvs)
    attached: bool = False  # a short option's value may follow it in the same word (pytest's -rA)

    def allowed(self) -> str:
        return " ".join(o.label() for o in self.options)


_LOADS_PLUGIN = "loads a plugin (code from outside the tests)"
_CONFIG = "reads another configuration"
_PYTEST = _Grammar(
    options=(
        _Option(("-x", "--exitfirst")),
        _Option(("-q", "--quiet")),
        _Option(("-v", "--verbose")),
        _Option(("-s",)),
        _Option(("-l", "--showlocals")),
        _Option(("-k",), _ANY, "-k EXPR"),
        _Option(("-m",), _ANY, "-m EXPR"),
        _Option(("-r",), r"[fEsxXpPaAwN]+", "-rCHARS"),
        _Option(("--tb",), r"auto|long|short|line|native|no", "--tb=STYLE"),
        _Option(("--maxfail",), _NUM, "--maxfail=N"),
        _Option(("--lf", "--last-failed")),
        _Option(("--ff", "--failed-first")),
        _Option(("--co", "--collect-only")),
        _Option(("--no-header",)),
        _Option(("--durations",), _NUM, "--durations=N"),
        _Option(("-n",), r"\d{1,3}|auto", "-n N"),
        _Option(("-p",), r"no:[\w.-]+", "-p no:NAME"),
    ),
    denied={
        "-p": _LOADS_PLUGIN + "; only `-p no:NAME` (disabling one) is allowed",
        "--plugins": _LOADS_PLUGIN,
        "-c": _CONFIG,
        "--config-file": _CONFIG,
        "--inifile": _CONFIG,
        "-o": "overrides the configuration",
        "--override-ini": "overrides the configuration",
        "--rootdir": "changes the root, so which configuration and conftest.py files load",
        "--confcutdir": "changes which conftest.py files load",
        "--noconftest": "changes which conftest.py files load",
        "--import-mode": "changes how test modules are imported",
        "--pyargs": "imports packages by name, from anywhere on the path",
        "--basetemp": "pytest empties the base temporary directory, wherever it points",
    },
    positional="path",
    flags="xqvsl",
    attached=True,
)
_JS = _Grammar(
    options=(
        _Option(("-t", "--testNamePattern"), _ANY, "-t NAME"),
        _Option(("-i", "--runInBand")),
        _Option(("--bail",)),
        _Option(("--verbose",)),
        _Option(("--silent",)),
        _Option(("--ci",)),
        _Option(("--no-coverage",)),
        _Option(("--run",)),
    ),
    denied={
        **{name: "loads code before the tests" for name in ("--require", "-r", "--loader", "--import")},
        **{name: "loads code before the tests" for name in ("--experimental-loader", "--setupFiles")},
        **{name: "loads code before the tests" for name in ("--setupFilesAfterEnv", "--globalSetup")},
        **{name: "loads code" for name in ("--globalTeardown", "--reporters", "--reporter", "--testRunner")},
        **{
            name: "loads code" for name in ("--transform", "--testEnvironment", "--environment", "--resolver")
        },
        **{name: _CONFIG for name in ("--config", "-c", "--preset", "--rootDir", "--roots", "--dir")},
        **{name: _CONFIG for name in ("--prefix", "--userconfig", "--globalconfig", "--workspace", "-w")},
    },
    positional="path",
)
_GO = _Grammar(
    options=(
        _Option(("-run",), _ANY, "-run REGEX"),
        _Option(("-skip",), _ANY, "-skip REGEX"),
        _Option(("-v",)),
        _Option(("-count",), _NUM, "-count=N"),
        _Option(("-failfast",)),
        _Option(("-short",)),
        _Option(("-timeout",), r"\d{1,6}(ns|us|ms|s|m|h)", "-timeout=D"),
    ),
    denied={
        "-exec": "runs the test binary through another program",
        "-toolexec": "runs the compiler tools through another program",
        "-overlay": "replaces source files with others",
        "-modfile": _CONFIG + " (another go.mod)",
        "-ldflags": "passes flags to the linker",
        "-gcflags": "passes flags to the compiler",
        "-asmflags": "passes flags to the assembler",
        "-C": "changes to another directory first",
        "-args": "passes the rest of the line to the test binary unchecked",
    },
    positional="package",
)
_CARGO = _Grammar(
    options=(
        _Option(("-p", "--package"), r"[\w-]+", "-p CRATE"),
        _Option(("--test",), r"[\w-]+", "--test NAME"),
        _Option(("--lib",)),
        _Option(("--doc",)),
        _Option(("-q", "--quiet")),
        _Option(("-v", "--verbose")),
        _Option(("--no-fail-fast",)),
    ),
    denied={
        "--config": "overrides cargo's configuration",
        "-Z": "enables unstable cargo features",
        "--manifest-path": "builds another manifest (select a workspace member with -p CRATE)",
        "--target-dir": "writes the build elsewhere",
    },
    positional="name",
)
# libtest's options, after cargo test's `--`
_LIBTEST = _Grammar(
    options=(
        _Option(("--exact",)),
        _Option(("--nocapture",)),
        _Option(("--show-output",)),
        _Option(("--ignored",)),
        _Option(("--include-ignored",)),
        _Option(("--test-threads",), _NUM, "--test-threads=N"),
        _Option(("--skip",), r"[\w:]+", "--skip NAME"),
        _Option(("-q", "--quiet")),
    ),
    denied={
        "--logfile": "writes a file outside the test's control",
        "-Z": "enables unstable libtest options",
    },
    positional="name",
)
_GRAMMARS = {Kind.PYTEST: _PYTEST, Kind.JS: _JS, Kind.GO: _GO, Kind.CARGO: _CARGO}
_NAME = re.compile(r"[\w:]+")


def grammar_text(found: Sequence[TestRunner]) -> str:
    """The grammar for the tool description: one line per runner."""
    lines = []
    for runner in found:
        grammar = _GRAMMARS[runner.kind]
        args = {"path": "PATHS", "package": "./PKG/...", "name": "NAME"}[grammar.positional]
        tail = f" -- {_LIBTEST.allowed()} NAME" if runner.kind is Kind.CARGO else ""
        lines.append(f"- `{runner.line} [{args}] {grammar.allowed()}{tail}`")
    return (
        "Also allowed: an allowed test runner with only these arguments (no shell syntax; paths "
        "inside the repository; pytest node ids `path::test`):\n" + "\n".join(lines)
    )


# ---- checking one command line ---------------------------------------------------------------------
def check(command: str, found: Sequence[TestRunner], inside: Callable[[str], object]) -> list[str]:
    """The argv for `command` when it is an allowed runner with selection arguments only.

    `inside(path)` raises (any exception; its message is the reason) when `path` leaves the
    repository. Raises `Refused` with the reason and what is allowed.
    """
    words = " ".join(command.split())
    if not any(words.startswith(" ".join(r.prefix)) for r in found):
        raise NotARunner("it does not start with an allowed test runner")
    if reason := shell_syntax(command):
        raise Refused(f"shell syntax is not accepted: {reason}")
    try:
        argv = shlex.split(command, posix=True)
    except ValueError as exc:
        raise Refused(f"the command line does not parse ({exc})") from None
    runner = _matching(argv, found)
    if runner is None:
        raise NotARunner("it does not start with an allowed test runner")
    rest = argv[len(runner.prefix) :]
    if runner.separator:
        if rest and rest[0] != "--":
            raise Refused(
                f"`{runner.line}` passes arguments to the tests only after `--`: `{runner.line} -t NAME`"
            )
        if quoted := next((a for a in rest[1:] if _SCRIPT_SHELL.search(a)), None):
            raise Refused(
                f"`{quoted}`: `{runner.prefix[0]}` runs the script through a shell; arguments after `--` "
                "may not hold shell characters, even quoted"
            )
        _arguments(runner, _JS, rest[1:], inside)
    elif runner.kind is Kind.CARGO and "--" in rest:
        split = rest.index("--")
        _arguments(runner, _CARGO, rest[:split], inside)
        _arguments(runner, _LIBTEST, rest[split + 1 :], inside)
    else:
        _arguments(runner, _GRAMMARS[runner.kind], rest, inside)
    return argv


def _matching(argv: list[str], found: Sequence[TestRunner]) -> TestRunner | None:
    candidates = [r for r in found if tuple(argv[: len(r.prefix)]) == r.prefix]
    return max(candidates, key=lambda r: len(r.prefix), default=None)


def _arguments(
    runner: TestRunner, grammar: _Grammar, args: list[str], inside: Callable[[str], object]
) -> None:
    names = 0
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and arg != "-":
            i += _option(runner, grammar, args, i)
            continue
        if grammar.positional == "name":
            names += 1
            if not _NAME.fullmatch(arg):
                raise Refused(f"`{arg}`: a test name filter is letters, digits, `_` and `::` only")
            if names > 1 and grammar is _CARGO:
                raise Refused(f"`{arg}`: cargo test takes one name filter (more go after `--`)")
        else:
            _path(arg, grammar, inside)
        i += 1


def _option(runner: TestRunner, grammar: _Grammar, args: list[str], i: int) -> int:
    """How many words the option at `args[i]` takes (1 or 2); refuses an option outside the grammar."""
    arg = args[i]
    name, eq, attached = arg.partition("=")
    for option in grammar.options:
        for spelling in option.names:
            if option.value is None and arg == spelling:
                return 1
            if option.value is None:
                continue
            if name == spelling and eq:
                _value(runner, grammar, option, spelling, attached)
                return 1
            if arg == spelling:
                if i + 1 >= len(args):
                    raise Refused(f"`{spelling}` needs a value ({option.label()})")
                _value(runner, grammar, option, spelling, args[i + 1])
                return 2
            attached_short = (
                grammar.attached and len(spelling) == 2 and arg.startswith(spelling) and len(arg) > 2
            )
            if attached_short and re.fullmatch(option.value, arg[2:]):  # e.g. -rA, -kname
                return 1
    if grammar.flags and re.fullmatch(rf"-[{grammar.flags}]+", arg):
        return 1  # combined flags, e.g. -xvs
    _refuse(runner, grammar, arg, _denied(grammar, arg))


def _refuse(runner: TestRunner, grammar: _Grammar, arg: str, reason: str | None) -> typing.NoReturn:
    where = "after `--` " if grammar is _LIBTEST else ""
    allowed = f"Allowed {where}for `{runner.line}`: {grammar.allowed()}"
    if reason:
        raise Refused(f"`{arg}` is refused: it {reason}. {allowed}")
    raise Refused(f"`{arg}` is not a test-selection option. {allowed}")


def _denied(grammar: _Grammar, arg: str) -> str | None:
    name = arg.partition("=")[0]
    if name in grammar.denied:
        return grammar.denied[name]
    for denied, reason in grammar.denied.items():  # an attached short value: -pevil, -rfoo
        if len(denied) == 2 and denied[1] != "-" and arg.startswith(denied):
            return reason
    if grammar.flags and re.fullmatch(r"-[a-zA-Z]{2,}", arg):  # combined flags hiding one: -xpevil
        for char in arg[1:]:
            if f"-{char}" in grammar.denied:
                return grammar.denied[f"-{char}"]
    return None


def _value(runner: TestRunner, grammar: _Grammar, option: _Option, spelling: str, value: str) -> None:
    if value.startswith("-") or not value:
        raise Refused(f"`{spelling}` needs a value ({option.label()}), got `{value}`")
    if option.value and not re.fullmatch(option.value, value):
        if spelling in grammar.denied:  # e.g. `-p evil`: only `-p no:NAME` is allowed
            _refuse(runner, grammar, f"{spelling} {value}", grammar.denied[spelling])
        raise Refused(f"`{spelling} {value}`: the value must be {option.label()}")


def _path(arg: str, grammar: _Grammar, inside: Callable[[str], object]) -> None:
    if grammar is _PYTEST and arg.startswith("@"):
        raise Refused(f"`{arg}` is refused: pytest would read more arguments from that file, unchecked")
    path = arg.split("::", 1)[0] if grammar is _PYTEST else arg
    if grammar.positional == "package":
        if not (path == "." or path.startswith(("./", "../"))):
            raise Refused(f"`{arg}`: name packages by a relative path, e.g. `./pkg` or `./pkg/...`")
        path = path.removesuffix("...").removesuffix("/") or "."
    if not path:
        raise Refused(f"`{arg}`: a node id starts with a file path (`path::test`)")
    if ".git" in PurePosixPath(path).parts:
        raise Refused(f"`{arg}` is inside .git/; the repository's git data is off limits")
    try:
        inside(path)
    except Exception as exc:  # the sandbox's own reason: outside, a symlink out, a NUL byte
        raise Refused(f"`{arg}`: {exc}") from None
