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
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ci_autofix import shell
from ci_autofix.protected import DEFAULT_PROTECTED, protected_globs

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
    # Paths handed out for writing: the only new files a fix may add (build artefacts and caches
    # that commands leave behind are not part of it).
    written: set[str] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.protected = protected_globs(self.protected)

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
        """The real path of `path` inside the workspace, for reading or (`write=True`) changing it.

        Refused: anything outside the workspace (`..`, absolute paths, symlinks leading out),
        anything inside a `.git` directory (read or write: it holds persisted credentials), and,
        for writes, protected paths. Checks apply to the path after symlinks are followed.
        """
        rel = self.relative(path)
        if ".git" in rel.parts:
            raise SandboxViolation(f"{rel} is inside .git/; the repository's git data is off limits")
        if write and (pattern := self.protected_by(str(rel))):
            raise SandboxViolation(f"{rel} is protected ({pattern}) and cannot be changed by a fix")
        if write:
            self.written.add(str(rel))
        return self.root / rel

    def protected_by(self, rel: str) -> str | None:
        return next((p for p in self.protected if path_matches(rel, p)), None)

    # ---- commands --------------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        home = self.root / ".git" / "ci-autofix-home"
        return shell.scrubbed_env(
            extra={
                "HOME": str(home) if home.is_dir() else os.environ.get("HOME") or tempfile.gettempdir(),
                "CI": "true",
                **self.extra_env,
            }
        )

    def run(self, argv: Sequence[str], *, timeout: float | None = None) -> shell.Completed:
        with self.quarantine():
            return shell.run(
                argv,
                cwd=self.root,
                env=self.env(),
                timeout=timeout or self.timeout,
                max_output=self.max_output,
                user=self._uid(),
                group=self._gid(),
            )

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
        """Keep persisted git credentials and our git config out of reach of code we run.

        While the block runs, `.git/config` has no `http.*.extraheader`, no credentials in
        remote URLs and no include of a file holding credentials, and such included files
        are moved out of the way; afterwards both are restored byte for byte (with their
        modes), which also undoes anything the code wrote into `.git/config`.
        """
        git_dir = _git_dir(self.root)
        config = git_dir / "config" if git_dir else None
        if config is None or not config.is_file():
            yield
            return
        original = config.read_bytes()
        config_mode = config.stat().st_mode & 0o7777
        held: dict[Path, tuple[bytes, int]] = {}
        try:
            for target in _credential_files(original.decode("utf-8", "replace"), config.parent):
                with contextlib.suppress(OSError):
                    held[target] = (target.read_bytes(), target.stat().st_mode & 0o7777)
                    target.unlink()
            config.write_bytes(_without_credentials(original, set(held), config.parent))
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                config.unlink()  # the code may have replaced it with a symlink
            config.write_bytes(original)
            os.chmod(config, config_mode)
            for target, (content, mode) in held.items():
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
                target.write_bytes(content)
                os.chmod(target, mode)


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


_CREDENTIAL_TEXT = re.compile(rb"extraheader|authorization|credential|password|token|://[^/\s@]+@", re.I)
_URL_USERINFO = re.compile(rb"(?i)^(\s*(?:push)?url\s*=\s*\"?[a-z][a-z0-9+.\-]*://)[^/\s@\"]+@")


def _git_dir(root: Path) -> Path | None:
    """The checkout's git directory: `.git`, or where a `.git` file (`gitdir: ...`) points."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():
        text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else (root / target).resolve()
    return None


def _include_target(value: bytes, base: Path) -> Path:
    raw = value.strip().strip(b'"').decode("utf-8", "replace")
    path = Path(os.path.expanduser(raw))
    return path if path.is_absolute() else base / path


def _sections(config: bytes) -> Iterator[tuple[bytes, bytes]]:
    section = b""
    for line in config.splitlines(keepends=True):
        stripped = line.strip().lower()
        if stripped.startswith(b"["):
            section = stripped
        yield section, line


def _without_credentials(config: bytes, held: set[Path], base: Path) -> bytes:
    """`.git/config` minus persisted Authorization headers, URL credentials and includes of held files."""
    kept: list[bytes] = []
    for section, line in _sections(config):
        stripped = line.strip().lower()
        key = stripped.split(b"=", 1)[0].strip()
        if section.startswith(b"[http") and key == b"extraheader":
            continue
        if (
            section.startswith((b"[include", b"[includeif"))
            and key == b"path"
            and _include_target(line.split(b"=", 1)[1], base) in held
        ):
            continue
        kept.append(_URL_USERINFO.sub(rb"\1", line))
    return b"".join(kept)


def _credential_files(config: str, base: Path) -> list[Path]:
    """Files included by the config (`[include]`, `[includeIf ...]`) that hold credentials."""
    files = []
    for section, line in _sections(config.encode()):
        if not section.startswith((b"[include", b"[includeif")) or b"=" not in line:
            continue
        key, value = line.split(b"=", 1)
        if key.strip().lower() != b"path":
            continue
        target = _include_target(value, base)
        with contextlib.suppress(OSError):
            if target.is_file() and _CREDENTIAL_TEXT.search(target.read_bytes()):
                files.append(target)
    return files
