#!/usr/bin/env python3
"""The real-history benchmark: maintainers' own lint and format fixes, replayed through `ci-autofix fix`.

Usage:
    python bench/real_history.py [--cases FILE] [--repos DIR] [--ci-autofix PATH] [--only ID,ID]
        [--with-model] [--verify-cases] [--out DIR] [--timeout SECONDS]

Each case in `bench/real_history.toml` names a public repository, a failing commit (the parent of a
maintainer's lint or format fix), the fixing commit, the workflow step that failed, the tool and the
version CI ran that day, and where that version was read. Only those facts are kept here: the
repositories' code is fetched, never committed.

For each case the harness

1. finds the repository in `--repos` (`owner+name`, `owner+name/repo`, `owner/name` or a bare
   `owner+name.git`), or clones it from GitHub into `bench/out/repos/` when no directory has it;
2. checks the failing commit out into a temporary directory on a local branch;
3. produces the failed step's log by running the case's tool command at CI's version (installed once
   into `bench/out/venvs/<package>-<version>/`), written as the GitHub runner writes a failed step
   (the step's `run:` as the group header, the output, the exit code);
4. runs `ci-autofix fix` on that checkout and log, without a model unless `--with-model` (and then only
   when the environment holds a key);
5. judges the result: **fixed** (a fix commit was made), **lint-green** (the tool command passes at
   CI's version on the fix), **matches** (on the files the step reported, the fix is byte-equal to the
   human fix after the repository's formatter at CI's version), **verified** (ci-autofix's own
   verdict), **agrees** (verified exactly when the failed step passes at CI's version: when lint-green,
   unless the case records that the step as a whole cannot pass on a machine like this one, whatever
   the fix, in `step_here`), **agrees on the tool** (verified exactly when lint-green, the narrower
   reading) and the files the fix touched outside the human fix.

Per case and in total it prints a Markdown table, and writes the whole record as JSON under
`bench/out/`. `--verify-cases` checks the case list itself instead: the failing commit must fail the
tool command at CI's version and the fixing commit must pass it (on the files the step reported).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
CASES = HERE / "real_history.toml"
OUT = HERE / "out"

PYPI_TOOLS = frozenset({"ruff", "black", "isort", "flake8"})
# From the npm registry at the case's version, as the repository's lockfile resolves it.
NODE_TOOLS = frozenset({"prettier", "eslint", "@biomejs/biome"})
# From the Go installation on this machine (`--go-bin`): its version is recorded beside CI's.
GO_TOOLS = frozenset({"gofmt", "goimports"})
TOOLS = PYPI_TOOLS | NODE_TOOLS | GO_TOOLS
# The program each tool is run as (the first word of `command`), where it differs from the tool.
PROGRAMS = {"@biomejs/biome": "biome"}
SETUPS = frozenset(
    {
        "pre-commit",
        "make",
        "tox",
        "nox",
        "uv",
        "poetry",
        "setup.py",
        "pip",
        "just",
        "hatch",
        "npm",
        "yarn",
        "go",
        "script",
    }
)
SOURCES = frozenset({"lockfile", "pin", "pre-commit-rev", "newest-release", "setup-go", "go.mod"})
_SHA = re.compile(r"^[0-9a-f]{40}$")
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_VERSION = re.compile(r"^\d+(\.\d+){0,3}((a|b|rc)\d+)?$")
_PATHS = re.compile(r"[\w./-]+\.(?:pyi?|ipynb|[cm]?[jt]sx?|json|md|ya?ml|go|css|scss|html|vue)\b")
_INSTALLING = threading.Lock()  # one clone or tool installation at a time, so parallel cases share them


class CaseError(ValueError):
    """The case file says something the harness cannot use; the message names the case and the field."""


@dataclass(frozen=True)
class Case:
    """One maintainer's fix: the commit CI failed on, the commit that fixed it, and how CI ran the tool."""

    id: str
    repo: str  # owner/name on GitHub
    failing: str  # the parent: the commit the lint step failed on
    fixing: str  # the maintainer's fix
    workflow: str  # the workflow file, in the failing commit
    step: str  # the failed step's `run:`, as written (the log's header)
    command: str  # the tool invocation inside the step, run to produce the log and to judge lint-green
    setup: str  # how the repository installs its tools: one of SETUPS
    tool: str  # one of TOOLS: the PyPI package that runs `command`
    version: str  # the version CI ran that day
    version_source: str  # one of SOURCES: where `version` was read
    version_where: str  # the file and line, or the release date, that says so
    fixable: bool  # a deterministic fixer in `fixers/catalog.py` can produce this fix
    formatter: str = ""  # the repository's formatter command, run on both sides before comparing
    formatter_version: str = ""  # its version (default: `version` when the formatter is `tool`)
    extra: tuple[str, ...] = ()  # further pinned packages the command needs (flake8 plugins)
    ran: str = ""  # when CI ran the step (ISO 8601), when known to be later than the failing commit
    hook: str = ""  # the pre-commit hook whose check `command` is, when the step runs pre-commit
    note: str = ""  # why it is not fixable, or what else to know
    # why the failed step as a whole cannot pass on a machine like this one (only PyPI, npm and
    # Debian reachable), whatever the fix: a command of the step that needs a host this machine
    # cannot reach, or fails on the human fix too; observed by running each of the step's commands
    # on the human fix at CI's versions. Empty when the step passes wherever the tool command does.
    step_here: str = ""

    @property
    def packages(self) -> tuple[str, ...]:
        return (f"{self.tool}=={self.version}", *self.extra)

    @property
    def program(self) -> str:
        """The executable `command` starts with (`biome` for @biomejs/biome)."""
        return PROGRAMS.get(self.tool, self.tool)

    def formatter_packages(self) -> tuple[str, ...]:
        """What runs `formatter`: its first word as the package, at `formatter_version` or `version`."""
        package = shlex.split(self.formatter)[0]
        package = next((t for t, p in PROGRAMS.items() if p == package), package)
        return (f"{package}=={self.formatter_version or self.version}",)


_REQUIRED: dict[str, type] = {
    "id": str,
    "repo": str,
    "failing": str,
    "fixing": str,
    "workflow": str,
    "step": str,
    "command": str,
    "setup": str,
    "tool": str,
    "version": str,
    "version_source": str,
    "version_where": str,
    "fixable": bool,
}
_OPTIONAL: dict[str, type] = {
    "formatter": str,
    "formatter_version": str,
    "extra": list,
    "note": str,
    "ran": str,
    "hook": str,
    "step_here": str,
}


def parse_cases(text: str) -> list[Case]:
    """The `[[case]]` tables of a case file, each checked field by field; a `CaseError` names the first
    case and field that is missing, of the wrong type, or outside what the harness knows."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(f"the case file is not TOML: {exc}") from None
    cases: list[Case] = []
    seen: set[str] = set()
    for n, raw in enumerate(data.get("case", []), 1):
        where = f"case {n} ({raw.get('id', 'no id')})"
        unknown = set(raw) - set(_REQUIRED) - set(_OPTIONAL)
        if unknown:
            raise CaseError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        for name, kind in {**_REQUIRED, **_OPTIONAL}.items():
            if name in _REQUIRED and name not in raw:
                raise CaseError(f"{where}: the field `{name}` is missing")
            if name in raw and not isinstance(raw[name], kind):
                raise CaseError(f"{where}: `{name}` must be a {kind.__name__}")
        case = Case(**{**raw, "extra": tuple(raw.get("extra", []))})
        _check(case, where)
        if case.id in seen:
            raise CaseError(f"{where}: the id {case.id!r} is used twice")
        seen.add(case.id)
        cases.append(case)
    if not cases:
        raise CaseError("the case file has no [[case]] table")
    return cases


def _check(case: Case, where: str) -> None:
    problems = []
    if not _REPO.match(case.repo):
        problems.append(f"`repo` {case.repo!r} is not owner/name")
    for name in ("failing", "fixing"):
        if not _SHA.match(getattr(case, name)):
            problems.append(f"`{name}` must be a full 40-hex commit id")
    if case.failing == case.fixing:
        problems.append("`failing` and `fixing` are the same commit")
    if case.tool not in TOOLS:
        problems.append(f"`tool` {case.tool!r} is not one of {', '.join(sorted(TOOLS))}")
    if case.setup not in SETUPS:
        problems.append(f"`setup` {case.setup!r} is not one of {', '.join(sorted(SETUPS))}")
    if case.version_source not in SOURCES:
        problems.append(
            f"`version_source` {case.version_source!r} is not one of {', '.join(sorted(SOURCES))}"
        )
    for name in ("version", "formatter_version"):
        value = getattr(case, name)
        if value and not _VERSION.match(value):
            problems.append(f"`{name}` {value!r} is not a release version")
    if not case.command or shlex.split(case.command)[0] != case.program:
        problems.append(f"`command` {case.command!r} must start with the tool it runs")
    if case.formatter and shlex.split(case.formatter)[0] not in {PROGRAMS.get(t, t) for t in TOOLS}:
        problems.append(f"`formatter` {case.formatter!r} must start with a tool the harness installs")
    for item in case.extra:
        if not re.match(r"^[A-Za-z0-9_.-]+==[\w.]+$", item):
            problems.append(f"`extra` item {item!r} is not name==version")
    if case.ran:
        try:
            datetime.fromisoformat(case.ran)
        except ValueError:
            problems.append(f"`ran` {case.ran!r} is not an ISO 8601 date and time")
    if case.hook and not re.match(r"^[\w.-]+$", case.hook):
        problems.append(f"`hook` {case.hook!r} is not a pre-commit hook id")
    if case.setup == "pre-commit" and not case.hook:
        problems.append("a pre-commit case names the hook that failed in `hook`")
    if not case.fixable and not case.note:
        problems.append("a case no fixer can fix says why in `note`")
    if problems:
        raise CaseError(f"{where}: " + "; ".join(problems))


# ---------------------------------------------------------------- results and their arithmetic


@dataclass
class Result:
    """What happened to one case; every judgement is False when the step before it did not happen."""

    id: str
    repo: str
    tool: str
    version: str
    fixable: bool
    fixed: bool = False
    lint_green: bool = False
    matches: bool = False
    verified: bool = False
    outcome: str = ""  # ci-autofix's verification outcome, or the halt it printed
    step_here: str = ""  # the case's `step_here`: why the whole step cannot pass here, whatever the fix
    reported: list[str] = field(default_factory=list)  # files the failed step's output names
    touched: list[str] = field(default_factory=list)  # files the fix changed
    outside: list[str] = field(default_factory=list)  # of those, files the human fix did not change
    error: str = ""  # why the case could not be run (setup of the harness, not ci-autofix)
    ran: str = ""  # the Go release the harness ran gofmt/goimports from, where it is not CI's
    tail: str = ""  # the last lines ci-autofix printed
    seconds: float = 0.0

    @classmethod
    def of(cls, case: Case) -> Result:
        """The result of `case` before it runs: its facts, no judgement yet."""
        return cls(case.id, case.repo, case.tool, case.version, case.fixable, step_here=case.step_here)

    @property
    def agrees(self) -> bool | None:
        """Verified exactly when the failed step passes at CI's version: lint-green and not a step
        that cannot pass here (`step_here`); None when there is no fix to judge."""
        return self.verified == (self.lint_green and not self.step_here) if self.fixed else None

    @property
    def agrees_on_tool(self) -> bool | None:
        """Verified exactly when lint-green (the tool command alone); None when there is no fix."""
        return self.verified == self.lint_green if self.fixed else None


def totals(results: Sequence[Result]) -> dict[str, dict[str, int]]:
    """Counts over every case and over the cases a deterministic fixer can fix: each judgement, and
    the cases whose fix touched a file outside the human fix. A case that could not be run counts in
    `cases` and `errors`, and as a miss everywhere (its judgements are all False). `agrees` counts
    among the fixed cases only: without a fix there is no verdict to agree or disagree."""

    def count(rs: Sequence[Result]) -> dict[str, int]:
        return {
            "cases": len(rs),
            "errors": sum(bool(r.error) for r in rs),
            "fixed": sum(r.fixed for r in rs),
            "lint_green": sum(r.lint_green for r in rs),
            "matches": sum(r.matches for r in rs),
            "verified": sum(r.verified for r in rs),
            "agrees": sum(r.agrees is True for r in rs),
            "agrees_on_tool": sum(r.agrees_on_tool is True for r in rs),
            "touched_outside": sum(bool(r.outside) for r in rs),
        }

    return {"all": count(results), "fixable": count([r for r in results if r.fixable])}


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


def table(results: Sequence[Result]) -> str:
    """The per-case Markdown table and the totals below it."""
    yes = {True: "yes", False: "no"}
    lines = [
        "| case | tool | fixable | fixed | lint-green | matches | verified | agrees | outside | outcome |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        outcome = (r.error or r.outcome).replace("|", "/")[:80]
        lines.append(
            f"| {r.id} | {r.tool} {r.version}{f' (ran {r.ran})' if r.ran and r.ran != r.version else ''} | {yes[r.fixable]} | {yes[r.fixed]} | {yes[r.lint_green]} | "
            f"{yes[r.matches]} | {yes[r.verified]} | {'-' if r.agrees is None else yes[r.agrees]} | "
            f"{len(r.outside)} | {outcome} |"
        )
    lines += [
        "",
        "| cases | n | fixed | lint-green | matches | verified | agrees | agrees on the tool | touched outside |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, t in totals(results).items():
        n = t["cases"]
        cells = [f"{t[k]} ({percent(t[k], n)})" for k in ("fixed", "lint_green", "matches", "verified")]
        for key in ("agrees", "agrees_on_tool"):
            cells.append(f"{t[key]}/{t['fixed']} ({percent(t[key], t['fixed'])})")
        lines.append(f"| {name} | {n} | {' | '.join(cells)} | {t['touched_outside']} |")
    return "\n".join(lines)


def reported_files(output: str, root: Path) -> list[str]:
    """The files of the checkout at `root` that the tool's output names, relative to `root`."""
    found: dict[str, None] = {}
    for match in _PATHS.finditer(output):
        text = match.group(0).removeprefix("./")
        path = Path(text)
        rel = path.relative_to(root) if path.is_absolute() and path.is_relative_to(root) else path
        if not rel.is_absolute() and (root / rel).is_file():
            found[rel.as_posix()] = None
    return sorted(found)


# The `run:` of an action's composite step that runs the tool, as the action's action.yml has it with
# the inputs left at their defaults (pre-commit/action v3: `extra_args` is `--all-files`).
COMPOSITE_RUNS = {"pre-commit/action": "pre-commit run --show-diff-on-failure --color=always --all-files"}
_USES = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+)@[\w.-]+$")
_NOX = re.compile(r"\bnox\b.*\s(?:-s|--session|-e)\s+(?P<session>[\w.-]+)")


def step_output(case: Case, output: str, exit_code: int) -> str:
    """The tool's output as the step printed it: inside pre-commit's report of the failed hook when
    the step runs pre-commit (`hook`), inside nox's session lines when it runs `nox -s`."""
    if case.hook:
        title = f"{case.hook}{'.' * max(3, 73 - len(case.hook))}Failed"
        output = "\n".join([title, f"- hook id: {case.hook}", f"- exit code: {exit_code}", "", output])
    session = _NOX.search(case.step)
    if session:
        name = session.group("session")
        output = "\n".join(
            [f"nox > Running session {name}", output.rstrip("\n"), f"nox > Session {name} failed."]
        )
    return output


def github_log(step: str, output: str, exit_code: int, ran: str) -> str:
    """A failed step as the GitHub runner logs it: header, script echo, output, exit line, each line
    stamped with `ran` (when the job ran, UTC) as the runner stamps it. A `uses:` step (`step` is
    `owner/action@ref`) is its header, then the group of its composite step that failed."""
    uses = _USES.match(step.strip())
    inner = COMPOSITE_RUNS.get(uses.group("action")) if uses else None
    lines = [f"##[group]Run {step.splitlines()[0]}"]
    if inner:
        lines += ["##[endgroup]", f"##[group]Run {inner}", f"\x1b[36;1m{inner}\x1b[0m"]
        lines += ["shell: /usr/bin/bash --noprofile --norc -e -o pipefail {0}"]
    else:
        lines += [f"\x1b[36;1m{line}\x1b[0m" for line in step.splitlines()]
        lines += ["shell: /usr/bin/bash -e {0}"]
    lines += ["##[endgroup]", *output.splitlines()]
    lines.append(f"##[error]Process completed with exit code {exit_code}.")
    stamp = datetime.fromisoformat(ran).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.0000000Z ")
    return "".join(f"{stamp}{line}\n" for line in lines)


_VERIFICATION = re.compile(r"^Verification: (?P<outcome>[\w-]+(?: run)?)(?P<reason>.*)$", re.M)


# `ci-autofix fix` exits 0 with a fix committed, 1 with a partial fix committed (a failing check
# still fails after it), 2 on a wrong input, 3 halted without a fix.
FIX_COMMITTED = (0, 1)


def outcome_of(stdout: str, stderr: str, code: int) -> tuple[bool, str]:
    """(verified, the outcome with its reason) from what `ci-autofix fix` printed and its exit code."""
    match = _VERIFICATION.search(stdout)
    if code in FIX_COMMITTED and match:
        return match.group("outcome") == "verified", (match.group("outcome") + match.group("reason")).strip()
    if code in FIX_COMMITTED:
        return False, "fixed, verification not printed"
    halt = [line.strip() for line in (stderr + stdout).splitlines() if line.strip()]
    reason = next((line for line in reversed(halt) if "halt" in line.lower()), halt[-1] if halt else "")
    return False, f"exit {code}: {reason}"


# ---------------------------------------------------------------- running it


def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL
    ).stdout


def find_repo(repos: Path | None, name: str, cache: Path, network: bool) -> Path:
    """The repository's git directory: in `repos` under one of its usual names, else a clone from GitHub."""
    with _INSTALLING:
        return _find_repo(repos, name, cache, network)


def _find_repo(repos: Path | None, name: str, cache: Path, network: bool) -> Path:
    owner_name = name.replace("/", "+")
    if repos is not None:
        for candidate in (
            repos / owner_name / "repo",
            repos / owner_name,
            repos / f"{owner_name}.git",
            repos / name,
            repos / name.split("/")[1],
        ):
            if candidate.is_dir() and ((candidate / "HEAD").is_file() or (candidate / ".git").exists()):
                return candidate
    target = cache / owner_name
    if (target / "HEAD").is_file():
        return target
    if not network:
        raise FileNotFoundError(f"{name} is not in --repos and --no-network was given")
    cache.mkdir(parents=True, exist_ok=True)
    _git("clone", "--quiet", "--bare", f"https://github.com/{name}.git", str(target))
    return target


def tool_env(packages: Sequence[str], venvs: Path) -> Path:
    """A virtual environment holding exactly `packages` (name==version), made once and reused."""
    with _INSTALLING:
        return _tool_env(packages, venvs)


def _tool_env(packages: Sequence[str], venvs: Path) -> Path:
    home = venvs / "+".join(p.replace("==", "-") for p in packages)
    ready = home / ".ready"
    if ready.is_file():
        return home
    shutil.rmtree(home, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(home)], check=True, capture_output=True)
    pip = [str(home / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    done = subprocess.run([*pip, *packages], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"pip could not install {' '.join(packages)}: {done.stderr.strip()[-400:]}")
    ready.touch()
    return home


def node_env(packages: Sequence[str], home: Path) -> Path:
    """A directory whose `node_modules` holds exactly `packages` (name==version) from the npm
    registry, installed once (without install scripts) and reused; its `bin` is `node_modules/.bin`."""
    with _INSTALLING:
        target = home / "+".join(p.replace("==", "-").replace("/", "_") for p in packages)
        if (target / ".ready").is_file():
            return target
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        (target / "package.json").write_text('{"name": "bench-tools", "private": true}\n')
        specs = [p.replace("==", "@") for p in packages]
        npm = shutil.which("npm") or "npm"
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--save-exact", *specs],
            cwd=target,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise RuntimeError(f"npm could not install {' '.join(specs)}: {done.stderr.strip()[-400:]}")
        (target / "bin").symlink_to("node_modules/.bin")
        (target / ".ready").touch()
        return target


def go_env(tool: str, go_bin: Path | None) -> Path:
    """The directory holding the Go tool `tool`: `go_bin/..` (laid out as a venv: `bin/<tool>`)."""
    found = go_bin / tool if go_bin is not None else Path(shutil.which(tool) or tool)
    if not found.is_file():
        raise RuntimeError(f"`{tool}` is not installed here (pass --go-bin DIR)")
    return found.parent.parent if found.parent.name == "bin" else found.parent


def go_version(env_dir: Path) -> str:
    """The Go release next to the tools in `env_dir` (`go version`), or "" when there is none."""
    go = env_dir / "bin" / "go"
    if not go.is_file():
        go = Path(shutil.which("go") or "go")
    try:
        done = subprocess.run([str(go), "version"], capture_output=True, text=True, check=False)
    except OSError:
        return ""
    match = re.search(r"\bgo(\d+\.\d+(?:\.\d+)?)\b", done.stdout)
    return match.group(1) if match else ""


def tools_for(tool: str, packages: Sequence[str], args: argparse.Namespace) -> Path:
    """Where the tool of a case (or of its formatter) runs from: a directory with `bin/`."""
    if tool in NODE_TOOLS:
        return node_env(packages, args.out / "node")
    if tool in GO_TOOLS:
        return go_env(tool, args.go_bin)
    return tool_env(packages, args.out / "venvs")


def step_failed(command: str, code: int, output: str) -> bool:
    """Whether the step fails: the exit code, or for `gofmt -l`/`-d` and `goimports -l`/`-d` (which exit
    0) any output, as `test -z "$(gofmt -l .)"` in a workflow judges it."""
    argv = shlex.split(command)
    if argv[0] in GO_TOOLS and {"-l", "-d"} & set(argv[1:]):
        return code != 0 or bool(output.strip())
    return code != 0


def run_tool(command: str, cwd: Path, env_dir: Path, timeout: float) -> tuple[int, str]:
    """The tool command as argv (no shell), in `cwd`, with the environment's bin first on PATH."""
    env = {
        "PATH": f"{env_dir / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(cwd.parent),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
    }
    argv = shlex.split(command)
    argv[0] = str(env_dir / "bin" / argv[0])
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    return done.returncode, done.stdout + done.stderr


def checkout(git_dir: Path, sha: str, dest: Path, branch: str = "bench") -> Path:
    """A working clone of `git_dir` at `sha`, on a local branch (ci-autofix names its fix branch after it)."""
    _git("clone", "--quiet", "--shared", "--no-checkout", str(git_dir), str(dest))
    _git("-c", "advice.detachedHead=false", "checkout", "--quiet", "-B", branch, sha, cwd=dest)
    _git("config", "user.name", "bench", cwd=dest)
    _git("config", "user.email", "bench@example.invalid", cwd=dest)
    return dest


def changed(repo: Path, a: str, b: str) -> list[str]:
    return sorted(line for line in _git("diff", "--name-only", a, b, cwd=repo).splitlines() if line)


def formatted(
    case: Case, args: argparse.Namespace, tree: Path, files: Sequence[str], timeout: float
) -> dict[str, bytes]:
    """The bytes of `files` in `tree` after the repository's formatter (files missing there are b"")."""
    if case.formatter and files:
        package = case.formatter_packages()[0].split("==")[0]
        env_dir = tools_for(package, case.formatter_packages(), args)
        present = [f for f in files if (tree / f).is_file()]
        if present:
            run_tool(f"{case.formatter} {shlex.join(present)}", tree, env_dir, timeout)
    return {f: (tree / f).read_bytes() if (tree / f).is_file() else b"" for f in files}


def run_case(case: Case, args: argparse.Namespace) -> Result:
    result = Result.of(case)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="real-history-") as tmp:
        work = Path(tmp)
        try:
            git_dir = find_repo(args.repos, case.repo, args.out / "repos", not args.no_network)
            env_dir = tools_for(case.tool, case.packages, args)
            if case.tool in GO_TOOLS:
                result.ran = go_version(env_dir)
            repo = checkout(git_dir, case.failing, work / "repo")
            code, output = run_tool(case.command, repo, env_dir, args.timeout)
            result.reported = reported_files(output, repo)
            if not step_failed(case.command, code, output):
                raise RuntimeError(
                    f"`{case.command}` passes on the failing commit at {case.tool} {case.version}"
                )
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            result.error = f"harness: {exc}"[:300]
            result.seconds = time.monotonic() - start
            return result
        log = work / "failed.log"
        ran = case.ran or _git("log", "-1", "--format=%cI", case.failing, cwd=repo).strip()
        log.write_text(github_log(case.step, step_output(case, output, code or 1), code or 1, ran))
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC", "AWS_", "GOOGLE", "CI_AUTOFIX"))
        }
        env["HOME"] = str(work)
        if args.with_model:
            env.update({k: v for k, v in os.environ.items() if k.startswith("ANTHROPIC")})
        if args.toolchain_mirror:
            env["CI_AUTOFIX_TOOLCHAIN_MIRROR"] = args.toolchain_mirror
        try:
            done = subprocess.run(
                [args.ci_autofix, "fix", "--repo", str(repo), "--branch", "bench-fix", str(log)],
                capture_output=True,
                text=True,
                env=env,
                timeout=args.timeout * 4,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            result.error = f"ci-autofix ran longer than {args.timeout * 4:.0f}s"
            result.seconds = time.monotonic() - start
            return result
        result.tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        result.verified, result.outcome = outcome_of(done.stdout, done.stderr, done.returncode)
        result.fixed = done.returncode in FIX_COMMITTED
        if result.fixed:
            try:
                _judge_fix(case, result, repo, env_dir, work, git_dir, args)
            except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                result.error = f"harness: judging the fix: {exc}"[:300]
    result.seconds = time.monotonic() - start
    return result


def _judge_fix(
    case: Case, result: Result, repo: Path, env_dir: Path, work: Path, git_dir: Path, args: argparse.Namespace
) -> None:
    """Lint-green, matches and files outside, for the fix on the branch `bench-fix` of `repo`."""
    fix = _git("rev-parse", "bench-fix", cwd=repo).strip()
    _git("fetch", "--quiet", str(git_dir), case.fixing, cwd=repo)
    result.touched = changed(repo, case.failing, fix)
    human = changed(repo, case.failing, case.fixing)
    result.outside = [f for f in result.touched if f not in human]
    _git("checkout", "--quiet", fix, cwd=repo)
    code, output = run_tool(case.command, repo, env_dir, args.timeout)
    result.lint_green = not step_failed(case.command, code, output)
    theirs = checkout(git_dir, case.fixing, work / "human")
    files = result.reported or human
    ours_text = formatted(case, args, repo, files, args.timeout)
    theirs_text = formatted(case, args, theirs, files, args.timeout)
    result.matches = ours_text == theirs_text


def verify_case(case: Case, args: argparse.Namespace) -> str:
    """'ok' when the failing commit fails the command at CI's version and the fixing commit passes it on
    the files the failing run reported; otherwise what is wrong."""
    with tempfile.TemporaryDirectory(prefix="real-history-") as tmp:
        git_dir = find_repo(args.repos, case.repo, args.out / "repos", not args.no_network)
        env_dir = tools_for(case.tool, case.packages, args)
        parent = checkout(git_dir, case.failing, Path(tmp) / "parent")
        code, output = run_tool(case.command, parent, env_dir, args.timeout)
        if not step_failed(case.command, code, output):
            return "the failing commit passes"
        reported = reported_files(output, parent)
        child = checkout(git_dir, case.fixing, Path(tmp) / "child")
        code2, output2 = run_tool(case.command, child, env_dir, args.timeout)
        code2 = int(step_failed(case.command, code2, output2))
        still = [f for f in reported_files(output2, child) if f in reported]
        if code2 != 0 and (still or not reported):
            return (
                f"the fixing commit still fails on {', '.join(still) or 'the step'}: {output2.strip()[-300:]}"
            )
        clears = "no fixer"
        writing = fix_command(case.command)
        if writing:
            run_tool(writing, parent, env_dir, args.timeout)
            clears = (
                "the fixer does not clear it"
                if step_failed(case.command, *run_tool(case.command, parent, env_dir, args.timeout))
                else "the fixer clears it"
            )
        other = "; the fixing commit fails on other files" if code2 else ""
        return f"ok ({len(reported)} file(s) reported{other}; {clears})"


_CHECK_ONLY = frozenset({"--check", "--diff", "--check-only", "-c", "--df"})
_PRETTIER_CHECK = frozenset({"--check", "-c", "--list-different", "-l"})


def fix_command(command: str) -> str | None:
    """The tool's write mode for a check command (what a deterministic fixer runs), or None for flake8."""
    argv = shlex.split(command)
    if argv[0] == "flake8":
        return None
    if argv[0] == "ruff" and len(argv) > 1 and argv[1] == "check":
        return shlex.join([*argv[:2], "--fix", *argv[2:]])
    if argv[0] == "eslint":
        return shlex.join([argv[0], "--fix", *argv[1:]])
    if argv[0] == "prettier":
        return shlex.join([argv[0], "--write", *(a for a in argv[1:] if a not in _PRETTIER_CHECK)])
    if argv[0] in GO_TOOLS:
        return shlex.join([argv[0], "-w", *(a for a in argv[1:] if a not in ("-l", "-d"))])
    if argv[0] == "biome" and len(argv) > 1 and argv[1] in ("check", "ci", "format", "lint"):
        sub = "check" if argv[1] == "ci" else argv[1]
        return shlex.join(["biome", sub, "--write", *argv[2:]])
    return shlex.join(a for a in argv if a not in _CHECK_ONLY)


# A uid that owns nothing, as the sandbox's: what ci-autofix, run as root, runs the tools it installs as.
STRANGER = 65534
_PROBE = "import sys, tarfile; print(*sys.version_info[:3], hasattr(tarfile, 'data_filter'))"
# pip's console script for an interpreter path too long for `#!`: `#!/bin/sh`, then this line
_PIP_EXEC = re.compile(r"""^'{3}exec' (?P<python>\S+) "\$0" "\$@"$""", re.M)


def interpreter_of(executable: Path) -> Path | None:
    """The Python a console script (pip's `ci-autofix`) runs with: its `#!` line (through `env`), or
    the `exec` line pip writes under `#!/bin/sh` for a long path; None for anything else."""
    try:
        with executable.open("rb") as script:
            head = script.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    words = head.partition("\n")[0].removeprefix("#!").split() if head.startswith("#!") else []
    if words[:1] in (["/bin/sh"], ["/usr/bin/sh"]):
        found = _PIP_EXEC.search(head)
        return Path(found["python"]) if found else None
    if words[:1] and Path(words[0]).name == "env":
        located = shutil.which(words[1]) if len(words) > 1 else None
        return Path(located) if located else None
    return Path(words[0]) if words else None


def tarfile_problem(python: Path) -> str | None:
    """Why `python` cannot run the measured ci-autofix's toolchain installs, or None: ci-autofix unpacks
    Node, Go and Rust only with tarfile's data filter (Python 3.11.4 and later)."""
    try:
        done = subprocess.run(
            [str(python), "-I", "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the Python that runs ci-autofix ({python}) does not run ({exc})"
    words = done.stdout.split()
    if done.returncode != 0 or len(words) != 4:
        output = (done.stderr.strip() or done.stdout.strip())[-300:]
        return f"the Python that runs ci-autofix ({python}) does not run: {output}"
    if words[3] != "True":
        return (
            f"the Python that runs ci-autofix ({python}, {'.'.join(words[:3])}) has no tarfile data filter, "
            "so ci-autofix refuses to unpack any toolchain and no job that declares Node, Go or Rust is "
            "verified. Install the measured ci-autofix with Python 3.11.4 or later"
        )
    return None


def stranger_problem(python: Path) -> str | None:
    """Why the sandbox's uid cannot run `python`, or None. Run as root, ci-autofix makes the Python
    tools' environments from its own interpreter and runs them as another uid: an interpreter that
    uid cannot run (under root's home, or loading its library from there, as a pyenv build does)
    leaves every tool "not installed here", which measures the machine, not ci-autofix."""
    try:
        done = subprocess.run(
            [str(python), "-I", "-c", "pass"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            cwd="/",
            user=STRANGER,
            group=STRANGER,
            extra_groups=[],
        )
    except (OSError, subprocess.SubprocessError) as exc:
        reason = str(exc)
    else:
        if done.returncode == 0:
            return None
        reason = done.stderr.strip()[-300:] or f"exit {done.returncode}"
    return (
        f"the Python that runs ci-autofix ({python}) cannot be run by another uid ({reason}), and run as "
        "root ci-autofix runs the Python tools it installs as the sandbox's uid. Install the measured "
        "ci-autofix with a Python every uid can run and load (not one under root's home)"
    )


def ci_autofix_problem(executable: str, *, python_tools: bool) -> str | None:
    """Why the ci-autofix at `executable` would measure this machine rather than ci-autofix, or None:
    it is not there, its Python has no tarfile data filter, or (run as root, with cases whose tool is a
    Python tool) the sandbox's uid cannot run its Python."""
    found = shutil.which(executable)
    if found is None:
        return f"{executable} is not an executable; pass the ci-autofix to measure as --ci-autofix PATH"
    python = interpreter_of(Path(found))
    if python is None:
        return None  # not a console script: nothing to look through
    problem = tarfile_problem(python)
    if problem is None and python_tools and os.geteuid() == 0:
        problem = stranger_problem(python)
    return problem


def served_indexes(tree: Path) -> dict[str, bytes]:
    """The mirror's Node and Go indexes cut to the releases it serves (the tests' mirror lists others
    that have no archive): a version a job declares and this machine cannot serve then falls back to
    the nearest one it can, as ci-autofix does on a runner, instead of failing on a missing file.
    Entries are kept whole (nodejs.org's `lts` names too), so an alias resolves among what is served:
    `lts/*` is the newest LTS release the mirror has, not the one nodejs.org listed when CI ran."""
    node = [
        entry
        for entry in json.loads((tree / "node" / "index.json").read_text())
        if (tree / "node" / entry["version"] / f"node-{entry['version']}-linux-x64.tar.xz").is_file()
    ]
    go = [
        release
        for release in json.loads((tree / "go" / "index.json").read_text())
        if (tree / "go" / f"{release['version']}.linux-amd64.tar.gz").is_file()
    ]
    return {"node/index.json": json.dumps(node).encode(), "go/index.json": json.dumps(go).encode()}


def mirror_module() -> ModuleType:
    """The tests' toolchain mirror (`tests/testing/toolchain_mirror.py`), imported as the tests import
    it: `tests` is a package of the repository root, which a script in `bench/` does not have on its path."""
    sys.path.insert(0, str(HERE.parent))
    from tests.testing import toolchain_mirror

    return toolchain_mirror


@contextmanager
def _mirror(args: argparse.Namespace) -> Iterator[None]:
    """With `--local-mirror`, the tests' toolchain mirror served for the run (its URL in `args`)."""
    if not args.local_mirror:
        yield
        return
    mirrors = mirror_module()
    available, build, MirrorServer = mirrors.available, mirrors.build, mirrors.MirrorServer
    missing = available()
    if missing:
        raise SystemExit(f"real_history: the toolchain mirror cannot be built here: {missing}")
    (args.out / "mirror").mkdir(parents=True, exist_ok=True)
    built = build(args.out / "mirror")
    with MirrorServer(built.tree, overrides=served_indexes(built.tree)).running() as mirror:
        args.toolchain_mirror = mirror.url
        print(f"toolchain mirror: {mirror.url} (Node {built.node}, Go {built.go})", file=sys.stderr)
        yield


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--cases", type=Path, default=CASES, help="the case file (default: %(default)s)")
    parser.add_argument("--repos", type=Path, default=None, help="a directory of clones or bare repositories")
    parser.add_argument(
        "--no-network", action="store_true", help="never clone; every repository is in --repos"
    )
    parser.add_argument(
        "--ci-autofix", default=shutil.which("ci-autofix") or "ci-autofix", help="the executable to measure"
    )
    parser.add_argument(
        "--with-model", action="store_true", help="let ci-autofix use the agent (needs a key)"
    )
    parser.add_argument("--only", default="", help="comma-separated case ids or repositories to run")
    parser.add_argument("--verify-cases", action="store_true", help="check the case list, run no ci-autofix")
    parser.add_argument("--out", type=Path, default=OUT, help="results and caches (default: %(default)s)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per tool run")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (default: %(default)s)")
    parser.add_argument(
        "--go-bin", type=Path, default=None, help="where gofmt and goimports are (default: found on PATH)"
    )
    parser.add_argument(
        "--toolchain-mirror",
        default="",
        help="a base URL ci-autofix provisions Node and Go from (its CI_AUTOFIX_TOOLCHAIN_MIRROR)",
    )
    parser.add_argument(
        "--local-mirror",
        action="store_true",
        help="serve the tests' toolchain mirror (this machine's Node and Go, with their checksums) on "
        "127.0.0.1 and pass it as --toolchain-mirror",
    )
    args = parser.parse_args(argv)
    try:
        cases = parse_cases(args.cases.read_text(encoding="utf-8"))
    except (OSError, CaseError) as exc:
        print(f"real_history: {exc}", file=sys.stderr)
        return 2
    wanted = {w for w in args.only.split(",") if w}
    if wanted:
        cases = [c for c in cases if c.id in wanted or c.repo in wanted]
    if args.with_model and not os.environ.get("ANTHROPIC_API_KEY"):
        print("real_history: --with-model needs ANTHROPIC_API_KEY in the environment", file=sys.stderr)
        return 2
    if not args.verify_cases:
        problem = ci_autofix_problem(args.ci_autofix, python_tools=any(c.tool in PYPI_TOOLS for c in cases))
        if problem:
            print(f"real_history: {problem}.", file=sys.stderr)
            return 2
    args.out.mkdir(parents=True, exist_ok=True)
    if args.verify_cases:
        bad = 0
        for case in cases:
            try:
                verdict = verify_case(case, args)
            except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                verdict = f"error: {exc}"
            bad += not verdict.startswith("ok")
            print(f"{case.id}: {verdict}", flush=True)
        return 1 if bad else 0

    def one(case: Case) -> Result:
        result = run_case(case, args)
        print(
            f"{case.id}: fixed={result.fixed} green={result.lint_green} matches={result.matches} "
            f"verified={result.verified} outside={len(result.outside)} ({result.error or result.outcome}) "
            f"[{result.seconds:.0f}s]",
            file=sys.stderr,
            flush=True,
        )
        return result

    with _mirror(args), ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, cases))
    print(table(results))
    record: dict[str, Any] = {
        "ci_autofix": args.ci_autofix,
        "with_model": args.with_model,
        "totals": totals(results),
        "cases": [{**asdict(r), "agrees": r.agrees, "agrees_on_tool": r.agrees_on_tool} for r in results],
    }
    path = args.out / f"real-history-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"\nWritten: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
