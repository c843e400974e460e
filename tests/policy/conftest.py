"""Real git repositories for policy tests: commit `before`, commit `after`, diff them with `Git.diff`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from ci_autofix.git import Git
from ci_autofix.policy import Verdict, check_diff
from tests.testing.git import DEV, git


@dataclass(frozen=True)
class Symlink:
    target: str


@dataclass(frozen=True)
class Executable:
    content: str


@dataclass(frozen=True)
class Gitlink:
    sha: str


Content = str | bytes | Symlink | Executable | Gitlink | None
Files = Mapping[str, Content]


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.git = Git(root)
        root.mkdir(parents=True, exist_ok=True)
        self._run("init", "-q", "-b", "main")

    def _run(self, *args: str) -> str:
        return git(self.root, "-c", "core.autocrlf=false", *args, author=DEV)

    def commit(self, files: Files, message: str = "change") -> str:
        gitlinks = {rel: c.sha for rel, c in files.items() if isinstance(c, Gitlink)}
        for rel, content in files.items():
            path = self.root / rel
            if path.is_symlink() or path.is_file():
                path.unlink()
            if content is None or isinstance(content, Gitlink):
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Symlink):
                os.symlink(content.target, path)
            elif isinstance(content, Executable):
                path.write_text(content.content)
                path.chmod(0o755)
            elif isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_bytes(content.encode())
        self._run("add", "-A")
        for rel, sha in gitlinks.items():
            self._run("update-index", "--add", "--cacheinfo", f"160000,{sha},{rel}")
        self._run("commit", "-q", "--allow-empty", "-m", message)
        return self._run("rev-parse", "HEAD")


ChangeFn = Callable[..., Verdict]


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "repo")


@pytest.fixture
def diff_of(repo: Repo) -> Callable[[Files, Files], str]:
    """The diff `Git.diff` produces between a commit of `before` and one of `after` applied on top."""

    def make(before: Files, after: Files) -> str:
        base = repo.commit(before, "before")
        head = repo.commit(after, "after")
        return repo.git.diff(base, head)

    return make


@pytest.fixture
def change(diff_of: Callable[[Files, Files], str]) -> ChangeFn:
    def verdict(before: Files, after: Files, **options: object) -> Verdict:
        return check_diff(diff_of(before, after), **options)  # type: ignore[arg-type]

    return verdict


@dataclass(frozen=True)
class Kinds:
    symlink: type[Symlink] = Symlink
    executable: type[Executable] = Executable
    gitlink: type[Gitlink] = Gitlink


@pytest.fixture
def kinds() -> Kinds:
    """File contents other than text: a symlink, an executable, a submodule commit."""
    return Kinds()


Mode = str  # "hunks": the bare diff; "contents": the diff plus the blobs it names, read from git


@pytest.fixture
def check_in(repo: Repo) -> Callable[..., Verdict]:
    """`check_in(mode, before, after, **options)`: the verdict on the diff of two commits.

    In "contents" mode the policy may read the whole before and after files through the blob
    ids that `git diff --full-index` prints; in "hunks" mode it has only the diff.
    """

    def verdict(mode: Mode, before: Files, after: Files, **options: object) -> Verdict:
        base = repo.commit(before, "before")
        head = repo.commit(after, "after")
        diff = repo.git.diff(base, head)
        if mode == "contents":
            options["read_blob"] = lambda oid: repo.git.run("cat-file", "blob", oid, check=False).output
        return check_diff(diff, **options)  # type: ignore[arg-type]

    return verdict
