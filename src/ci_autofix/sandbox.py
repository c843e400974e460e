"""Where the repository's code runs: the checkout, without our secrets.

Fixers, the agent's tools and verification all run the repository's own code (formatters
read its config, tests execute it). Everything they run goes through one `Sandbox`:

- paths are resolved inside the workspace: no `..` escape, no absolute path outside it,
  no symlink leading out, no writes under `.git/`, protected paths read-only;
- commands get a scrubbed environment (no token, no `INPUT_*`, no `ACTIONS_*`), their own
  process group, a timeout and capped output;
- when we run as root and the checkout belongs to another user (the runner's uid 1001),
  commands run as that user, so they cannot read our process's environment;
- while commands run, credentials that actions/checkout persisted (an `extraheader` in
  `.git/config`, or an `includeIf` pointing at a credentials file) are taken out of reach and
  put back afterwards, and `.git/config` is restored as it was, so code we ran cannot plant
  hooks or filters for our own git calls.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ci_autofix import shell

DEFAULT_PROTECTED = (".github/workflows/**",)
_SHELL_SYNTAX = re.compile(r"[|&;<>()$`\\\"'*?~{}\[\]#\n]")


class SandboxViolation(Exception):
    """A path or command the sandbox refuses; the message is meant for the agent to read."""


@dataclass
class Sandbox:
    root: Path
    protected: Sequence[str] = DEFAULT_PROTECTED
    timeout: float = 600
    max_output: int = shell.DEFAULT_MAX_OUTPUT
    extra_env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.protected = tuple(dict.fromkeys((*DEFAULT_PROTECTED, *self.protected)))

    # ---- paths -----------------------------------------------------------------------------------
    def relative(self, path: str | Path) -> PurePosixPath:
        """The workspace-relative form of `path`, refusing anything that leaves the workspace."""
        raw = str(path)
        if "\0" in raw:
            raise SandboxViolation("path contains a NUL byte")
        candidate = Path(raw)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = candidate.resolve()
        if resolved != self.root and self.root not in resolved.parents:
            raise SandboxViolation(f"{raw} is outside the repository; paths must stay inside it")
        return PurePosixPath(resolved.relative_to(self.root).as_posix())

    def resolve(self, path: str | Path, *, write: bool = False) -> Path:
        rel = self.relative(path)
        if write:
            if rel.parts and rel.parts[0] == ".git":
                raise SandboxViolation(f"{rel} is inside .git/; the repository's git data is read-only")
            if pattern := self.protected_by(str(rel)):
                raise SandboxViolation(f"{rel} is protected ({pattern}) and cannot be changed by a fix")
        return self.root / rel

    def protected_by(self, rel: str) -> str | None:
        return next((p for p in self.protected if path_matches(rel, p)), None)

    # ---- commands --------------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        home = self.root / ".git" / "ci-autofix-home"
        return shell.scrubbed_env(extra={"HOME": str(home) if home.is_dir() else os.environ.get("HOME", "/tmp"),
                                         "CI": "true", **self.extra_env})

    def run(self, argv: Sequence[str], *, timeout: float | None = None) -> shell.Completed:
        with self.quarantine():
            return shell.run(argv, cwd=self.root, env=self.env(), timeout=timeout or self.timeout,
                             max_output=self.max_output, user=self._uid(), group=self._gid())

    def run_command_line(self, command: str, *, timeout: float | None = None) -> shell.Completed:
        """A command line from the workflow or the configuration, run as the runner runs `run:` steps."""
        return self.run(command_argv(command), timeout=timeout)

    def _owner(self) -> os.stat_result | None:
        if os.geteuid() != 0:
            return None
        st = self.root.stat()
        return st if st.st_uid != 0 else None

    def _uid(self) -> int | None:
        st = self._owner()
        return st.st_uid if st else None

    def _gid(self) -> int | None:
        st = self._owner()
        return st.st_gid if st else None

    @contextlib.contextmanager
    def quarantine(self) -> Iterator[None]:
        """Keep persisted git credentials and our git config out of reach of code we run."""
        config = self.root / ".git" / "config"
        if not config.is_file():
            yield
            return
        original = config.read_bytes()
        held: dict[Path, bytes] = {}
        try:
            for target in _credential_files(original.decode("utf-8", "replace"), self.root):
                with contextlib.suppress(OSError):
                    held[target] = target.read_bytes()
                    target.unlink()
            config.write_bytes(_without_credentials(original))
            yield
        finally:
            config.write_bytes(original)
            for target, content in held.items():
                target.write_bytes(content)


def command_argv(command: str) -> list[str]:
    """Plain commands become argv directly; anything with shell syntax runs under bash -e -o pipefail."""
    if not _SHELL_SYNTAX.search(command):
        return shlex.split(command)
    return ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", command]


def path_matches(rel: str, pattern: str) -> bool:
    """Glob match where `**` spans directories and a trailing `/**` covers the directory itself."""
    pattern = pattern.strip().lstrip("/")
    if pattern.endswith("/**") and (rel == pattern[:-3] or rel.startswith(pattern[:-2])):
        return True
    regex = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
    regex = regex.replace(r"\?", "[^/]")
    return re.fullmatch(regex, rel) is not None or fnmatch.fnmatchcase(rel, pattern)


_CRED_LINE = re.compile(rb"^\s*(extraheader|path)\s*=.*$", re.I | re.M)


def _without_credentials(config: bytes) -> bytes:
    """`.git/config` minus persisted Authorization headers and includeIf'd credential files."""
    kept: list[bytes] = []
    section = b""
    for line in config.splitlines(keepends=True):
        stripped = line.strip().lower()
        if stripped.startswith(b"["):
            section = stripped
        if _CRED_LINE.match(line) and (
            (b"extraheader" in stripped and section.startswith(b'[http'))
            or (section.startswith(b"[includeif") and b"credentials" in stripped)
        ):
            continue
        kept.append(line)
    return b"".join(kept)


def _credential_files(config: str, root: Path) -> list[Path]:
    files = []
    for match in re.finditer(r"(?im)^\s*path\s*=\s*(.+)$", config):
        value = match.group(1).strip().strip('"')
        if "credentials" in value:
            target = Path(value) if Path(value).is_absolute() else root / ".git" / value
            if target.is_file():
                files.append(target)
    return files
