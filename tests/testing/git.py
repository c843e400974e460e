"""Real git for tests, in one place: repositories made, committed to and cloned in temporary
directories, never with this machine's configuration.

Every git here runs with the environment of `git_env`: the test process's, minus `GIT_*`, with
no system config (`GIT_CONFIG_NOSYSTEM`), no global config (`GIT_CONFIG_GLOBAL`: `home/.gitconfig`
when a test gives a `home`, else the null device), HOME and XDG_CONFIG_HOME at `home` or at the
null device (so no attributes or excludes file of this machine is read, and nothing is written
there), no prompt, and the C locale. Identities are given per commit (`-c user.name=...`).

    sha = init_repo(tmp_path / "repo", {"app.py": "x = 1\\n"})
    fix = commit(tmp_path / "repo", {"app.py": "x = 2\\n", "old.py": None}, "Fix x")
    assert git(tmp_path / "repo", "rev-parse", "HEAD^") == sha
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple


class Author(NamedTuple):
    """Who a test commit is by (author and committer)."""

    name: str
    email: str


ALICE = Author("Alice Example", "alice@example.com")
DEV = Author("Dev", "dev@example.com")

Files = Mapping[str, str | bytes | None]  # path → text or bytes to write, None to delete


def git_env(extra: Mapping[str, str] | None = None, *, home: Path | None = None) -> dict[str, str]:
    """The environment of every git these helpers run (see the module docstring), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig") if home else os.devnull,
            "HOME": str(home) if home else os.devnull,
            "XDG_CONFIG_HOME": str(home / ".config") if home else os.devnull,
            "LC_ALL": "C",
        }
    )
    env.update(extra or {})
    return env


def run(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    stdin: bytes | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """`git ARGS` in `cwd`, its output as bytes; with `check`, a failure raises with git's stderr."""
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=git_env(env, home=home),
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )
    if check and result.returncode != 0:
        stderr = result.stderr.decode(errors="replace")
        raise RuntimeError(f"git {' '.join(args)} failed ({result.returncode}) in {cwd}: {stderr}")
    return result


def try_git(
    cwd: Path, *args: str, env: Mapping[str, str] | None = None, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`git ARGS` in `cwd` that may fail: the completed process, output as text, for tests that
    assert on a refusal."""
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=git_env(env, home=home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def git(
    cwd: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    author: Author | None = None,
    strip: bool = True,
) -> str:
    """What `git ARGS` printed in `cwd` (stripped unless `strip=False`); a failure raises.
    `author` sets `user.name` and `user.email` for this one command."""
    identity = ("-c", f"user.name={author.name}", "-c", f"user.email={author.email}") if author else ()
    out = run(cwd, *identity, *args, env=env, home=home).stdout.decode()
    return out.strip() if strip else out


def write_files(root: Path, files: Files) -> None:
    """Write each path's text or bytes under `root` (making directories), or delete it for None."""
    for name, content in files.items():
        target = root / name
        if content is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def commit(
    repo: Path, files: Files, message: str, author: Author = ALICE, *, allow_empty: bool = False
) -> str:
    """Write `files` (see `write_files`), commit everything in the work tree, return the new sha."""
    write_files(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", *(["--allow-empty"] if allow_empty else []), "-m", message, author=author)
    return git(repo, "rev-parse", "HEAD")


def init(path: Path, *, branch: str = "main", bare: bool = False) -> Path:
    """A new, empty repository at `path` (made with its parents) on `branch`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", *(["--bare"] if bare else []), f"--initial-branch={branch}")
    return path


def init_repo(
    path: Path,
    files: Files,
    *,
    branch: str = "main",
    message: str = "Initial commit",
    author: Author = ALICE,
) -> str:
    """A new repository at `path` with one commit of `files` on `branch`; returns its sha."""
    init(path, branch=branch)
    return commit(path, files, message, author)


def clone(source: Path | str, dest: Path, *, detach: str | None = None, bare: bool = False) -> Path:
    """`git clone` of `source` (a path or URL) to `dest`; with `detach`, checked out at that commit."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    git(dest.parent, "clone", "-q", *(["--bare"] if bare else []), str(source), str(dest))
    if detach is not None:
        git(dest, "checkout", "-q", "--detach", detach)
    return dest
