"""The fixer's executable, at the version the repository pins.

A tool already installed beside our interpreter (or on PATH) is used when it satisfies the pin, or
when there is none. Otherwise the tool is installed once into its own virtual environment under
`tools_dir` (outside the workspace), `<package>-<version>/`, with pip from the index this
environment is configured to use, binary wheels only (no build step runs code from an sdist), and
an environment without our tokens. The default version (used when the repository pins none, or a
pin it satisfies, and no installed tool does) comes from `defaults/<package>.txt`, which pins it
and its dependencies with hashes, so pip installs exactly the files locked at release; the image
ships no fixer tool and installs one the first time a run needs it. A failed installation is an
`Unavailable` with the reason.

An old release of a tool is installed with what its era needs (`ERA_NEEDS`): the newest release of a
dependency it set no upper bound on can break it (black before 22.3 imports what click 8.1 removed,
so `black --version` itself fails), as it did not when CI ran it.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ci_autofix import shell
from ci_autofix.fixers.catalog import FIXERS
from ci_autofix.redact import redact
from ci_autofix.sandbox import others_can_run
from ci_autofix.tooling.versions import VERSION, Requirement, newest

_READY = ".ci-autofix-ready"
_VERSION_RE = re.compile(rf"\b({VERSION})\b")
DEFAULTS = Path(__file__).with_name("defaults")  # <package>.txt, written by ci/container/lock
# package -> (the first release that works with today's dependencies, what the releases before it need)
ERA_NEEDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "black": ("22.3.0", ("click<8.1",)),  # click 8.1 removed `_unicodefun`, which black < 22.3 imports
}


def era_needs(package: str, version: str | None) -> tuple[str, ...]:
    """The dependency pins `package` at `version` needs to run today (empty: none, or not known)."""
    first, needs = ERA_NEEDS.get(package, ("", ()))
    if version is None or not needs or newest([version, first]) == version:
        return ()
    return needs


@dataclass(frozen=True)
class Default:
    """The version a fixer tool runs at when the repository pins none, and its hash-pinned requirements."""

    version: str
    requirements: Path


def default(package: str, defaults: Path = DEFAULTS) -> Default | None:
    path = defaults / f"{package}.txt"
    if not path.is_file():
        return None
    match = re.search(rf"^{re.escape(package)}==({VERSION})\b", path.read_text(encoding="utf-8"), re.M)
    return Default(match.group(1), path) if match else None


@dataclass(frozen=True)
class Installed:
    executable: Path
    version: str
    installed: bool  # installed by us for this run (a pin, or the default version), not found already there


@dataclass(frozen=True)
class Unavailable:
    version: str | None
    reason: str


class Installer:
    """Finds or installs tools; an installation is reused by later calls (same `tools_dir`)."""

    def __init__(
        self,
        tools_dir: Path,
        *,
        timeout: float,
        python: Path | None = None,
        search: list[Path] | None = None,
        defaults: Path = DEFAULTS,
    ) -> None:
        self.tools_dir = tools_dir
        self.timeout = timeout
        self.python = python or Path(sys.executable)  # makes the environments (and runs pip, if it has it)
        self._default_python = python is None
        # where a tool already installed is looked for: beside our interpreter, then PATH
        self.search = search if search is not None else _search_path()
        self.defaults = defaults
        self._own: dict[str, Installed | Unavailable] = {}
        self._pip: list[Path] | None = None  # the interpreter with pip (empty: none), once looked for

    def tool(self, package: str, requirement: Requirement | None) -> Installed | Unavailable:
        try:
            return self._tool(package, requirement)
        except OSError as exc:  # tools_dir not writable, disk full, ...
            version = requirement.exact if requirement else None
            return Unavailable(
                version, f"preparing {package} failed: {exc.strerror or exc} ({self.tools_dir})"
            )

    def _tool(self, package: str, requirement: Requirement | None) -> Installed | Unavailable:
        own = self.own(package)
        if isinstance(own, Installed) and (requirement is None or requirement.allows(own.version)):
            return own
        locked = default(package, self.defaults)
        if locked and (requirement is None or requirement.allows(locked.version)):
            return self.install(package, Requirement(f"=={locked.version}"), locked=locked.requirements)
        if requirement is None:
            return own
        return self.install(package, requirement)

    def own(self, package: str) -> Installed | Unavailable:
        """The tool already installed where `search` looks; as root, one the sandbox's uid can run
        (ours may sit in a home it cannot enter)."""
        if package not in self._own:
            found = next((c for c in (d / package for d in self.search) if _usable(c)), None)
            if found is None:
                self._own[package] = Unavailable(
                    None, f"{package} is not installed in the action's environment and has no default version"
                )
            else:
                self._own[package] = self._probe(package, found, installed=False)
        return self._own[package]

    def install(
        self, package: str, requirement: Requirement, *, locked: Path | None = None
    ) -> Installed | Unavailable:
        """Install `requirement` of `package`; with `locked`, exactly the files that requirements
        file pins by hash (pip refuses any other)."""
        label = requirement.exact or _label(requirement.spec)
        target = self.tools_dir / f"{package}-{label}"
        executable = target / "bin" / package
        if (target / _READY).is_file() and executable.is_file():
            return self._probe(package, executable, installed=True)
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        self.tools_dir.mkdir(parents=True, exist_ok=True)
        spec = f"{package}{requirement.spec}"
        pip_options = [
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--only-binary=:all:",
            "--quiet",
            *(
                ["--require-hashes", "-r", str(locked)]
                if locked
                else [spec, *era_needs(package, requirement.exact)]
            ),
        ]
        venv_python = str(target / "bin" / "python")
        pip = self._pip_python()
        if pip is not None:  # no pip inside the environment: an outside one installs into it (seconds faster)
            steps = [
                [str(self.python), "-m", "venv", "--without-pip", str(target)],
                [str(pip), "-m", "pip", "--python", venv_python, *pip_options],
            ]
        else:
            steps = [[str(self.python), "-m", "venv", str(target)], [venv_python, "-m", "pip", *pip_options]]
        for argv in steps:
            result = shell.run(argv, cwd=self.tools_dir, env=_pip_env(), timeout=self.timeout)
            if not result.ok:
                shutil.rmtree(target, ignore_errors=True)
                return Unavailable(
                    requirement.exact,
                    f"installing {spec} failed ({result.describe()}): {_last_words(result)}",
                )
        if not executable.is_file():
            shutil.rmtree(target, ignore_errors=True)
            return Unavailable(requirement.exact, f"installing {spec} gave no `{package}` executable")
        tool = self._probe(package, executable, installed=True)
        if isinstance(tool, Installed):
            (target / _READY).write_text(tool.version + "\n")
        return tool

    def _pip_python(self) -> Path | None:
        """The interpreter whose pip installs into another environment (`--python`, pip 22.3+): ours,
        else, when ours is the default, the one our virtualenv was made from (the image's venv has no
        pip; its base Python has); None when neither has one."""
        if self._pip is None:
            candidates = [self.python]
            base = Path(getattr(sys, "_base_executable", sys.executable))
            if self._default_python and base != self.python:
                candidates.append(base)
            found = next((c for c in candidates if _has_pip(c)), None)
            self._pip = [found] if found else []
        return self._pip[0] if self._pip else None

    def _probe(self, package: str, executable: Path, *, installed: bool) -> Installed | Unavailable:
        fixer = next(f for f in FIXERS if f.package == package)
        result = shell.run(
            [str(executable), *fixer.version_args],
            cwd=executable.parent,
            env=shell.scrubbed_env(),
            timeout=60,
        )
        match = _VERSION_RE.search(result.output)
        if not result.ok or not match:
            return Unavailable(
                None,
                f"`{executable.name} {' '.join(fixer.version_args)}` failed "
                f"({result.describe()}): {_last_words(result)}",
            )
        return Installed(executable, match.group(1), installed)


_OPERATORS = (
    ("===", "is"),
    ("==", "eq"),
    ("!=", "ne"),
    ("~=", "compat"),
    (">=", "ge"),
    ("<=", "le"),
    (">", "gt"),
    ("<", "lt"),
    (".*", "x"),
    (",", "-"),
)


def _label(spec: str) -> str:
    """A directory name for a range: `>=24,<25` -> `ge24-lt25`."""
    for operator, word in _OPERATORS:
        spec = spec.replace(operator, word)
    return re.sub(r"[^A-Za-z0-9.-]", "_", spec)


def _has_pip(python: Path) -> bool:
    result = shell.run([str(python), "-m", "pip", "--version"], cwd=python.parent, env=_pip_env(), timeout=60)
    match = re.match(r"pip (\d+)\.(\d+)", result.output)
    return bool(result.ok and match and (int(match.group(1)), int(match.group(2))) >= (22, 3))


def _search_path() -> list[Path]:
    path = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return [Path(sys.executable).parent, *(Path(d) for d in path if d)]


def _usable(candidate: Path) -> bool:
    return (
        candidate.is_file()
        and os.access(candidate, os.X_OK)
        and (os.geteuid() != 0 or others_can_run(candidate))
    )


def _pip_env() -> dict[str, str]:
    """Our environment without tokens, plus pip's own settings (the index the environment uses)."""
    env = shell.scrubbed_env()
    for name, value in os.environ.items():
        if name.startswith("PIP_") and name not in ("PIP_TARGET", "PIP_PREFIX", "PIP_USER"):
            env[name] = value
    env["PIP_NO_INPUT"] = "1"
    env.pop("PYTHONPATH", None)
    return env


def _last_words(result: shell.Completed, lines: int = 3, width: int = 300) -> str:
    """The end of a command's output, each line cut short (pip lists every version it saw on one line)."""
    tail = [line if len(line) <= width else line[:width] + " ..." for line in result.tail(lines).splitlines()]
    return redact(" | ".join(line.strip() for line in tail if line.strip()))
