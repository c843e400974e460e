"""Where the repository's code runs: a copy of the checkout, without our secrets.

Fixers, the agent's tools and verification all run the repository's own code (formatters
read its config, tests execute it). Everything they run goes through one `Sandbox`:

- paths are resolved inside the workspace: no `..` escape, no absolute path outside it,
  no symlink leading out, no writes under `.git/`, protected paths read-only;
- commands get a scrubbed environment (no token, no `INPUT_*`, no `ACTIONS_*`, no path of the
  runner's: workspace, temp dir, file-command files), a HOME, XDG directories and TMPDIR of
  their own (thrown away), their own process group, a timeout and capped output, and nothing
  they start outlives them (`reap`);
- with `user`/`group` (the work area's dedicated uid when we run as root), commands run as
  that uid with no supplementary groups, and while they run the `sealed` paths (the real
  checkout's git data and the credentials file it includes) are closed to others (`o-rwx`),
  then restored;
- without a user (not root), commands run as our own user; persisted credentials in the
  checkout's `.git/config` (an `extraheader`, an `includeIf` of a credentials file) are taken
  out of it while they run and put back afterwards, byte for byte.

`git_dir` is our own git directory for the work tree (the sandbox cannot reach it); `git()`
is the git we use to look at what commands changed, never the work tree's `.git`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ci_autofix import reap, shell
from ci_autofix.git import Git
from ci_autofix.paths import DEFAULT_PROTECTED, path_matches, protected_globs

_SHELL_SYNTAX = re.compile(r"[|&;<>()$`\\\"'*?~{}\[\]#\n]")
# The runner's variables that commands may see; the others name its paths (workspace, temp
# dir, event and file-command files) or its internals.
_RUNNER_VARIABLES = frozenset(
    {
        "GITHUB_ACTIONS",
        "GITHUB_REPOSITORY",
        "GITHUB_REPOSITORY_OWNER",
        "GITHUB_SERVER_URL",
        "GITHUB_API_URL",
        "GITHUB_GRAPHQL_URL",
        "GITHUB_REF",
        "GITHUB_REF_NAME",
        "GITHUB_REF_TYPE",
        "GITHUB_SHA",
        "GITHUB_RUN_ID",
        "GITHUB_RUN_NUMBER",
        "GITHUB_RUN_ATTEMPT",
        "GITHUB_JOB",
        "GITHUB_WORKFLOW",
        "GITHUB_EVENT_NAME",
        "GITHUB_ACTOR",
        "RUNNER_OS",
        "RUNNER_ARCH",
        "RUNNER_NAME",
        "RUNNER_ENVIRONMENT",
    }
)


class SandboxViolation(Exception):
    """A path or command the sandbox refuses; the message is meant for the agent to read."""


@dataclass
class Sandbox:
    root: Path
    protected: Sequence[str] = DEFAULT_PROTECTED
    timeout: float = 600
    max_output: int = shell.DEFAULT_MAX_OUTPUT
    extra_env: Mapping[str, str] = field(default_factory=dict)
    user: int | None = None  # run commands as this uid (and `group`), no supplementary groups
    group: int | None = None
    home: Path | None = None  # HOME (with XDG dirs inside) for commands; default: a temp dir path
    tmpdir: Path | None = None
    git_dir: Path | None = None  # our own git directory for `root` (None: `root/.git`)
    sealed: Sequence[Path] = ()  # closed to others while commands run (with `user`)
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
        anything inside a `.git` directory (read or write: it holds persisted credentials), a
        file with more than one link (code we ran could have hard-linked a file of ours into the
        copy, and we read and write with our own rights), and, for writes, protected paths. Checks
        apply to the path after symlinks are followed; nothing of the commands runs meanwhile.
        """
        rel = self.relative(path)
        if ".git" in rel.parts:
            raise SandboxViolation(f"{rel} is inside .git/; the repository's git data is off limits")
        with contextlib.suppress(OSError):
            st = (self.root / rel).stat()
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                raise SandboxViolation(
                    f"{rel} is a hard link to a file elsewhere; it cannot be read or changed"
                )
        if write and (pattern := self.protected_by(str(rel))):
            raise SandboxViolation(f"{rel} is protected ({pattern}) and cannot be changed by a fix")
        if write:
            self.written.add(str(rel))
        return self.root / rel

    def protected_by(self, rel: str) -> str | None:
        return next((p for p in self.protected if path_matches(rel, p)), None)

    # ---- commands --------------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        base = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("GITHUB_", "RUNNER_")) or name in _RUNNER_VARIABLES
        }
        home = self.home or Path(tempfile.gettempdir()) / "ci-autofix-home"
        own = {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "CI": "true",
        }
        if self.tmpdir is not None:
            own["TMPDIR"] = str(self.tmpdir)
        return shell.scrubbed_env(base, extra={**own, **self.extra_env})

    def run(self, argv: Sequence[str], *, timeout: float | None = None) -> shell.Completed:
        guard = self.seal() if self.user is not None else self.quarantine()
        with guard:
            return shell.run(
                argv,
                cwd=self.root,
                env=self.env(),
                timeout=timeout or self.timeout,
                max_output=self.max_output,
                user=self.user,
                group=self.group,
                # the work area's uid is ours alone: every process of it is swept after each command
                dedicated_user=self.user is not None,
            )

    def run_command_line(self, command: str, *, timeout: float | None = None) -> shell.Completed:
        """A command line from the workflow or the configuration, run as the runner runs `run:` steps."""
        return self.run(command_argv(command), timeout=timeout)

    def git(self) -> Git:
        """Our git on the work tree: with our own git directory. Without one, only when commands run
        as ourselves (a local run on the user's own checkout): a tree another uid writes has a `.git`
        that uid wrote, which our git never reads."""
        if self.git_dir is None:
            if self.user is not None:
                raise SandboxViolation("our git never reads the .git of a tree the sandbox's user writes")
            return Git(self.root)
        return Git(self.root, git_dir=self.git_dir, work_tree=self.root)

    @contextlib.contextmanager
    def seal(self) -> Iterator[None]:
        """Close the `sealed` paths to group and others while the block runs, then restore their modes.

        When the command left a process that could not be killed (`reap.Survivors`), they stay
        closed: their owner (the runner's uid) keeps its access, the survivor gets none.
        """
        saved: list[tuple[Path, int]] = []
        try:
            for path in self.sealed:
                with contextlib.suppress(OSError):
                    st = path.lstat()
                    if not stat.S_ISLNK(st.st_mode):
                        saved.append((path, stat.S_IMODE(st.st_mode)))
                        os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o077)
            yield
        except reap.Survivors:
            saved.clear()
            raise
        finally:
            for path, mode in reversed(saved):
                with contextlib.suppress(OSError):
                    os.chmod(path, mode)

    @contextlib.contextmanager
    def quarantine(self) -> Iterator[None]:
        """Keep persisted git credentials and our git config out of reach of code we run.

        While the block runs, `.git/config` has no `http.*.extraheader`, no credentials in
        remote URLs and no include of a file holding credentials, and such included files
        are moved out of the way; afterwards both are restored byte for byte (with their
        modes), which also undoes anything the code wrote into `.git/config`. When the command
        left a process that could not be killed (`reap.Survivors`), the credentials are not put
        back: `.git/config` is restored without them.
        """
        git_dir = next((p for p in self.sealed if (p / "config").is_file()), None) or _git_dir(self.root)
        config = git_dir / "config" if git_dir else None
        if config is None or not config.is_file():
            yield
            return
        original = config.read_bytes()
        config_mode = config.stat().st_mode & 0o7777
        held: dict[Path, tuple[bytes, int]] = {}
        survivors = False
        try:
            for target in credential_files(original.decode("utf-8", "replace"), config.parent):
                with contextlib.suppress(OSError):
                    held[target] = (target.read_bytes(), target.stat().st_mode & 0o7777)
                    target.unlink()
            config.write_bytes(_without_credentials(original, set(held), config.parent))
            yield
        except reap.Survivors:
            survivors = True  # a process of the command still runs: the credentials stay away
            raise
        finally:
            with contextlib.suppress(FileNotFoundError):
                config.unlink()  # the code may have replaced it with a symlink
            config.write_bytes(
                _without_credentials(original, set(held), config.parent) if survivors else original
            )
            os.chmod(config, config_mode)
            for target, (content, mode) in ({} if survivors else held).items():
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
                target.write_bytes(content)
                os.chmod(target, mode)


def chown_tree(top: Path, uid: int, gid: int) -> None:
    """Give `top` and everything under it to `uid`:`gid`; symlinks themselves, never followed."""
    os.lchown(top, uid, gid)
    for directory, dirs, names in os.walk(top):
        for name in (*dirs, *names):
            os.lchown(os.path.join(directory, name), uid, gid)


def others_can_run(path: str | Path) -> bool:
    """Whether a uid that owns nothing (the work area's) can execute `path`: the file and every
    directory on the way to it (after symlinks) are open to others. Our own interpreter may sit
    in a home only we can enter; the sandbox must then use another one."""
    try:
        real = Path(path).resolve(strict=True)
        if not (real.is_file() and real.stat().st_mode & stat.S_IXOTH and real.stat().st_mode & stat.S_IROTH):
            return False
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in real.parents)
    except OSError:
        return False


def command_argv(command: str) -> list[str]:
    """Plain commands become argv directly; anything with shell syntax runs under bash -e -o pipefail."""
    if not _SHELL_SYNTAX.search(command):
        return shlex.split(command)
    return ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", command]


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


def credential_files(config: str, base: Path) -> list[Path]:
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
