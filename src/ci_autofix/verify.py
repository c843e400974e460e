"""Proof that a fix works: the failing commands re-run before and after it, in the sandbox.

`reproduce` runs the failing commands on the unfixed checkout (does the failure happen here?),
`verify` runs them again with the fix applied, then `test-command`, then `ruff check` and
`ruff format --check` on the changed Python files when the repository uses ruff. Every command
goes through the `Sandbox` (scrubbed environment, own process group, timeout, capped output).

The environment of a Python repository is a virtualenv outside the workspace (under
`RUNNER_TEMP`, or the system temp dir), created with the interpreter that runs ci-autofix and
put first on `PATH` (with `VIRTUAL_ENV`) for every command. `setup-command` runs in it; when
empty, the project is installed there with its test extras (`pip install -e .[test,...]`, the
`test`/`dev` dependency groups, and the requirements files). The setup runs once per content of
the dependency files: `reproduce` and each `verify` of the same checkout reuse it.

Outcomes: **verified** (every failing command now passes, `test-command` passes, and ruff
reports nothing new), **failed** (a command still fails: the tail of its output goes back to the
agent), **unverified** (it cannot be decided here: a missing tool, a service that is not running,
a timeout, a setup that failed, or a failure that did not happen here before the fix).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import sys
import tempfile
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ci_autofix import shell
from ci_autofix.git import Git
from ci_autofix.redact import redact
from ci_autofix.sandbox import Sandbox, command_argv

Outcome = Literal["verified", "unverified", "failed"]
Role = Literal["failing", "test", "lint"]

TAIL_LINES = 40
TAIL_CHARS = 4000
_NOT_FOUND_EXIT = 127
_STAMP = ".ci-autofix-setup"
_TEST_EXTRAS = ("test", "tests", "testing", "dev", "develop")
_REQUIREMENTS = re.compile(
    r"^(?:requirements|(?:test|dev)-requirements|requirements[-_](?:test|tests|dev))\.txt$"
)
_SERVICE = re.compile(
    r"Connection refused|ECONNREFUSED|could not connect to server|Can't connect to (?:local )?MySQL"
    r"|Cannot connect to the Docker daemon|Is the docker daemon running|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)"
    r"|Name or service not known|Temporary failure in name resolution|No route to host"
    r"|redis\.exceptions\.ConnectionError|OperationalError: (?:connection|could not connect)",
    re.I,
)


@dataclass(frozen=True)
class Evidence:
    """One run of one command: what it was, how it ended, and the last lines it printed."""

    command: str
    exit_code: int | None
    timed_out: bool
    tail: str
    not_found: bool = False
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    @property
    def missing_tool(self) -> bool:
        return self.not_found or self.exit_code == _NOT_FOUND_EXIT

    def describe(self) -> str:
        if self.missing_tool:
            return "not found"
        if self.timed_out:
            return f"timed out ({self.duration_s:.0f}s)"
        return f"exit {self.exit_code}"

    @classmethod
    def of(cls, command: str, result: shell.Completed) -> Evidence:
        return cls(
            command,
            result.exit_code,
            result.timed_out,
            _tail(result.output),
            result.not_found,
            round(result.duration_s, 2),
        )


@dataclass(frozen=True)
class EvidencePair:
    command: str
    role: Role
    before: Evidence | None
    after: Evidence


@dataclass(frozen=True)
class Verification:
    outcome: Outcome
    reason: str
    evidence: list[EvidencePair] = field(default_factory=list)
    setup: Evidence | None = None

    def to_markdown(self) -> str:
        title = {"verified": "verified ✅", "unverified": "unverified ⚠️", "failed": "failed ❌"}[self.outcome]
        parts = [f"### Verification: {title}", _escape(self.reason)]
        rows = ["| command | before the fix | after the fix |", "|---|---|---|"]
        if self.setup is not None:
            rows.append(f"| {_code(self.setup.command)} (setup) | | {self.setup.describe()} |")
        for pair in self.evidence:
            before = pair.before.describe() if pair.before else "not run"
            label = {"failing": "", "test": " (test-command)", "lint": " (lint)"}[pair.role]
            rows.append(f"| {_code(pair.command)}{label} | {before} | {pair.after.describe()} |")
        if len(rows) > 2:
            parts.append("\n".join(rows))
        shown = [(p.command, p.after) for p in self.evidence if not p.after.ok]
        if self.setup is not None and not self.setup.ok:
            shown.insert(0, (self.setup.command, self.setup))
        if self.outcome == "verified":
            shown = [(p.command, p.after) for p in self.evidence if p.role == "failing"][:1]
        for command, evidence in shown[:4]:
            if evidence.tail:
                parts.append(
                    f"<details><summary>Output after the fix: {_code(command, table=False)}</summary>\n\n"
                    f"{_fence(evidence.tail)}\n\n</details>"
                )
        return "\n\n".join(parts)


# ---- the environment ----------------------------------------------------------------------------


def is_python_project(root: Path) -> bool:
    return any((root / name).is_file() for name in ("pyproject.toml", "setup.py", "setup.cfg")) or bool(
        _requirement_files(root)
    )


def default_env_dir(root: Path) -> Path:
    base = Path(os.environ.get("RUNNER_TEMP") or tempfile.gettempdir())
    return base / "ci-autofix-env" / hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]


def default_setup(root: Path, python: Path) -> list[str] | None:
    """The pip command that installs the project and its test extras, or None when there is nothing to install."""
    targets: list[str] = []
    pyproject = _pyproject(root)
    installable = (
        (root / "setup.py").is_file()
        or (root / "setup.cfg").is_file()
        or ("project" in pyproject or "build-system" in pyproject)
    )
    if installable:
        project = pyproject.get("project", {})
        optional = project.get("optional-dependencies", {}) if isinstance(project, dict) else {}
        extras = [name for name in optional if name in _TEST_EXTRAS] if isinstance(optional, dict) else []
        targets += ["-e", "." + (f"[{','.join(extras)}]" if extras else "")]
    groups = pyproject.get("dependency-groups", {})
    if isinstance(groups, dict):
        for name in _TEST_EXTRAS:
            targets += [req for req in groups.get(name, []) if isinstance(req, str)]
    for path in _requirement_files(root):
        targets += ["-r", path.relative_to(root).as_posix()]
    if not targets:
        return None
    return [
        str(python),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        *targets,
    ]


def _requirement_files(root: Path) -> list[Path]:
    found = [p for p in sorted(root.glob("*.txt")) if _REQUIREMENTS.match(p.name)]
    found += [p for p in sorted(root.glob("requirements/*.txt")) if re.search(r"test|dev", p.name)]
    return [p for p in found if p.is_file()]


def _pyproject(root: Path) -> dict[str, object]:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def uses_ruff(root: Path) -> bool:
    """Ruff configured (pyproject, ruff.toml, .ruff.toml) or listed in the dev dependencies or pre-commit."""
    if (root / "ruff.toml").is_file() or (root / ".ruff.toml").is_file():
        return True
    pyproject = _pyproject(root)
    tool = pyproject.get("tool")
    if isinstance(tool, dict) and "ruff" in tool:
        return True
    texts = [str(pyproject.get("project", {})), str(pyproject.get("dependency-groups", {}))]
    texts += [p.read_text(errors="replace") for p in _requirement_files(root)]
    pre_commit = root / ".pre-commit-config.yaml"
    if pre_commit.is_file():
        texts.append(pre_commit.read_text(errors="replace"))
    return any(re.search(r"\bruff\b", text) for text in texts)


@dataclass(frozen=True)
class _Prepared:
    sandbox: Sandbox
    setup: Evidence | None


def _stamp(root: Path, setup_command: str) -> str:
    digest = hashlib.sha256(setup_command.encode() + b"\0")
    for name in ("pyproject.toml", "setup.py", "setup.cfg"):
        path = root / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    for path in _requirement_files(root):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


# Tools that check files without importing the project: no environment to prepare for them.
STANDALONE_TOOLS = frozenset(
    {
        "ruff",
        "black",
        "isort",
        "flake8",
        "codespell",
        "yamllint",
        "shellcheck",
        "prettier",
        "eslint",
        "markdownlint",
        "actionlint",
        "hadolint",
        "typos",
    }
)


def needs_environment(commands: Sequence[str]) -> bool:
    """Whether any command runs the project's code (tests, type checks) rather than a standalone linter."""
    for command in commands:
        words = command.split()
        if not words:
            continue
        tool = Path(words[0]).name
        if tool in ("python", "python3") and len(words) > 2 and words[1] == "-m":
            tool = words[2]
        if tool not in STANDALONE_TOOLS:
            return True
    return False


def prepare(
    sandbox: Sandbox,
    setup_command: str,
    *,
    env_dir: Path | None,
    timeout: float,
    commands: Sequence[str] = ("",),
) -> _Prepared:
    """The sandbox the commands run in, after the setup (run at most once per dependency content).

    Without a configured setup, commands that only run standalone linters need no environment.
    """
    root = sandbox.root
    if not setup_command and commands is not None and not needs_environment(commands):
        return _Prepared(sandbox, None)
    if not is_python_project(root):
        if not setup_command:
            return _Prepared(sandbox, None)
        return _Prepared(
            sandbox, Evidence.of(setup_command, sandbox.run_command_line(setup_command, timeout=timeout))
        )
    env_dir = env_dir or default_env_dir(root)
    bin_dir = env_dir / "bin"
    inner = dataclasses.replace(
        sandbox,
        extra_env={
            **sandbox.extra_env,
            "VIRTUAL_ENV": str(env_dir),
            "PATH": f"{bin_dir}{os.pathsep}{sandbox.env().get('PATH', os.defpath)}",
        },
    )
    stamp = _stamp(root, setup_command)
    stamp_file = env_dir / _STAMP
    if (bin_dir / "python").exists() and stamp_file.is_file() and stamp_file.read_text() == stamp:
        return _Prepared(inner, None)
    if not (bin_dir / "python").exists():
        # Created by the sandbox's user (the checkout's owner when we run as root), who must write there.
        sandbox.run(["mkdir", "-p", "--", str(env_dir.parent)], timeout=timeout)
        created = sandbox.run([sys.executable, "-m", "venv", str(env_dir)], timeout=timeout)
        if not created.ok:
            return _Prepared(inner, Evidence.of(f"python -m venv {env_dir.name}", created))
    if setup_command:
        setup = Evidence.of(setup_command, inner.run_command_line(setup_command, timeout=timeout))
    else:
        argv = default_setup(root, bin_dir / "python")
        if argv is None:
            setup = None
        else:
            shown = "pip install " + " ".join(argv[argv.index("--quiet") + 1 :])
            setup = Evidence.of(shown, inner.run(argv, timeout=timeout))
    if setup is None or setup.ok:
        stamp_file.write_text(stamp)
    return _Prepared(inner, setup)


def _untracked(root: Path) -> set[str] | None:
    """Untracked, not ignored files: what would end up in the fix's snapshot. None outside a git checkout."""
    if not (root / ".git").exists():
        return None
    listed = Git(root).run("ls-files", "--others", "--exclude-standard", "-z", check=False)
    return {p for p in listed.output.split("\0") if p} if listed.ok else None


@contextlib.contextmanager
def _leave_no_files(root: Path) -> Iterator[None]:
    """Remove the untracked files that appear meanwhile (egg-info, build/, test outputs), so that
    preparing and running commands never adds files to the fix."""
    before = _untracked(root)
    try:
        yield
    finally:
        after = _untracked(root) if before is not None else None
        for rel in sorted((after or set()) - (before or set()), reverse=True):
            path = root / rel
            with contextlib.suppress(OSError):
                path.unlink()
            parent = path.parent
            while parent != root and root in parent.parents:
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent


# ---- before and after ---------------------------------------------------------------------------


def reproduce(
    sandbox: Sandbox,
    commands: Sequence[str],
    *,
    timeout: float,
    setup_command: str = "",
    env_dir: Path | None = None,
) -> list[Evidence]:
    """Run the failing commands on the unfixed checkout, in the same environment `verify` will use."""
    with _leave_no_files(sandbox.root):
        return _reproduce(sandbox, commands, timeout=timeout, setup_command=setup_command, env_dir=env_dir)


def _reproduce(
    sandbox: Sandbox, commands: Sequence[str], *, timeout: float, setup_command: str, env_dir: Path | None
) -> list[Evidence]:
    prepared = prepare(sandbox, setup_command, env_dir=env_dir, timeout=timeout, commands=commands)
    if prepared.setup is not None and not prepared.setup.ok:
        return [prepared.setup]
    return [
        Evidence.of(command, prepared.sandbox.run_command_line(command, timeout=timeout))
        for command in commands
    ]


def verify(
    sandbox: Sandbox,
    commands: Sequence[str],
    *,
    setup_command: str = "",
    test_command: str = "",
    changed_files: Sequence[str] = (),
    before: Sequence[Evidence] = (),
    timeout: float,
    env_dir: Path | None = None,
) -> Verification:
    """Run the failing commands (then `test_command`, then ruff) with the fix applied, and judge.

    Files the setup and the commands create (and git would not ignore) are removed afterwards.
    """
    with _leave_no_files(sandbox.root):
        return _verify(
            sandbox,
            commands,
            setup_command=setup_command,
            test_command=test_command,
            changed_files=changed_files,
            before=before,
            timeout=timeout,
            env_dir=env_dir,
        )


def _verify(
    sandbox: Sandbox,
    commands: Sequence[str],
    *,
    setup_command: str,
    test_command: str,
    changed_files: Sequence[str],
    before: Sequence[Evidence],
    timeout: float,
    env_dir: Path | None,
) -> Verification:
    prepared = prepare(
        sandbox, setup_command, env_dir=env_dir, timeout=timeout, commands=[*commands, test_command]
    )
    setup = prepared.setup
    if setup is not None and not setup.ok:
        what = (
            "is not installed here"
            if setup.missing_tool
            else ("timed out" if setup.timed_out else f"failed with exit code {setup.exit_code}")
        )
        return Verification(
            "unverified",
            f"The environment could not be prepared: the setup "
            f"{_code(setup.command, table=False)} {what}, so the failing command could not be "
            "re-run.",
            [],
            setup,
        )
    run = prepared.sandbox
    earlier = {e.command: e for e in before}
    pairs = [
        EvidencePair(c, "failing", earlier.get(c), Evidence.of(c, run.run_command_line(c, timeout=timeout)))
        for c in dict.fromkeys(commands)
    ]
    if test_command:
        pairs.append(
            EvidencePair(
                test_command,
                "test",
                earlier.get(test_command),
                Evidence.of(test_command, run.run_command_line(test_command, timeout=timeout)),
            )
        )
    python_files = [f for f in changed_files if f.endswith((".py", ".pyi")) and (run.root / f).is_file()]
    if python_files and uses_ruff(run.root):
        pairs += _ruff(run, python_files, timeout)
    outcome, reason = _judge(pairs, timeout)
    return Verification(outcome, reason, pairs, setup)


def _ruff(run: Sandbox, files: list[str], timeout: float) -> list[EvidencePair]:
    """`ruff check` and `ruff format --check` on the changed files, before (from HEAD) and after the fix."""
    pairs = []
    for tool in (["ruff", "check", "--no-fix"], ["ruff", "format", "--check"]):
        for path in files:
            command = " ".join([*tool, path])
            after = Evidence.of(command, run.run([*tool, "--", path], timeout=timeout))
            script = (
                'content=$(git show "HEAD:$1" 2>/dev/null) || exit 0; printf "%s\\n" "$content" | '
                + " ".join(tool)
                + ' --stdin-filename "$1" -'
            )
            before = Evidence.of(
                command,
                run.run(["bash", "--noprofile", "--norc", "-c", script, "ci-autofix", path], timeout=timeout),
            )
            pairs.append(EvidencePair(command, "lint", before, after))
    return pairs


def _judge(pairs: list[EvidencePair], timeout: float) -> tuple[Outcome, str]:
    failed: list[str] = []
    unverified: list[str] = []
    for pair in pairs:
        after, name = pair.after, _code(pair.command, table=False)
        if pair.role == "lint":
            if after.missing_tool:
                continue  # ruff is not installed here: nothing to compare, and not the fix's fault
            if not after.ok and pair.before is not None and pair.before.ok:
                failed.append(f"{name} reports new problems in a file the fix changed")
            continue
        if after.missing_tool:
            program = command_argv(pair.command)[0]
            missing = "a program it calls is" if program == "bash" else f"{_code(program, table=False)} is"
            unverified.append(
                f"{name} cannot run here: {missing} not installed in this environment (a toolchain "
                "the image lacks); CI on the fix is the proof"
            )
        elif after.timed_out:
            unverified.append(f"{name} did not finish within {timeout:.0f}s here and was stopped")
        elif after.ok:
            if pair.role == "failing" and pair.before is not None and pair.before.ok:
                unverified.append(
                    f"{name} passed here before the fix too, so the failure did not reproduce here "
                    "(flaky, or it depends on the CI environment)"
                )
        elif match := _SERVICE.search(after.tail):
            unverified.append(
                f"{name} needs a service or network access that is not available here ({match.group(0)})"
            )
        elif pair.role == "test":
            failed.append(f"the test-command {name} fails after the fix (exit {after.exit_code})")
        else:
            failed.append(f"{name} still fails after the fix (exit {after.exit_code})")
    if failed:
        return "failed", _sentence(failed)
    if unverified:
        return "unverified", _sentence(unverified)
    count = sum(1 for p in pairs if p.role == "failing")
    what = (
        f"The failing command{'s' if count != 1 else ''} now pass{'es' if count == 1 else ''}"
        if count
        else ("The test-command passes")
    )
    return "verified", f"{what} here and nothing newly fails."


def _sentence(reasons: list[str]) -> str:
    text = "; ".join(reasons)
    return text[0].upper() + text[1:] + "."


def _tail(output: str) -> str:
    lines = redact(output).rstrip("\n").splitlines()[-TAIL_LINES:]
    text = "\n".join(lines)
    return text if len(text) <= TAIL_CHARS else "…" + text[-TAIL_CHARS:]


def _escape(text: str) -> str:
    """One paragraph; HTML tags outside code spans shown, not rendered."""
    text = " ".join(text.split())
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text)


def _code(text: str, *, table: bool = True) -> str:
    text = " ".join(text.split())
    if table:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"`{text}`"


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}text\n{text}\n{fence}"
