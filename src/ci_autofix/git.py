"""Git, always as an argv list, never with a token in argv or in a URL.

Our git never reads a file that code run for the repository could have written. Every call
runs with no system config (`GIT_CONFIG_NOSYSTEM`), a global config we wrote ourselves
(`GIT_CONFIG_GLOBAL`, in a private directory that is also git's HOME and XDG_CONFIG_HOME), no
system attributes, no attributes or excludes file, hooks and fsmonitor off, no pager, no
external diff or textconv, and no credential helper; the fix's tree is taken with a git
directory of our own (`Git(..., git_dir=...)`), never with the work tree's `.git`. Paths stay
unquoted and git never prompts. Credentials reach git for one push or fetch only, through
`GIT_CONFIG_*` environment variables that set an HTTP Authorization header, the way
actions/checkout does in its config file. This module is the one place that builds git's
environment.
"""

from __future__ import annotations

import atexit
import base64
import functools
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_autofix import shell
from ci_autofix.errors import UserError

BOT_NAME = "github-actions[bot]"
BOT_EMAIL = "41898282+github-actions[bot]@users.noreply.github.com"


@dataclass(frozen=True)
class Identity:
    """Who a commit is by: its author and its committer."""

    name: str
    email: str


BOT = Identity(BOT_NAME, BOT_EMAIL)  # the Action's commits, and local ones when git names no one
_SAFE_CONFIG = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.quotePath=false",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "submodule.recurse=false",
    "-c",
    "diff.noprefix=false",
    "-c",
    "diff.mnemonicPrefix=false",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "core.excludesFile=/dev/null",
    "-c",
    "core.pager=cat",
    "-c",
    "core.sshCommand=ssh",
    "-c",
    "credential.helper=",
)
# Our global config: only our own settings. `safe.directory` lets root use the runner-owned
# checkout; code run for the repository can write neither it nor the private git directory.
_GLOBAL_CONFIG = """\
[safe]
\tdirectory = *
[core]
\thooksPath = /dev/null
\tfsmonitor = false
\tattributesFile = /dev/null
\texcludesFile = /dev/null
\tpager = cat
[credential]
\thelper =
[protocol "ext"]
\tallow = never
[gc]
\tauto = 0
[maintenance]
\tauto = false
"""
# `diff.noprefix`/`diff.mnemonicPrefix` are pinned in _SAFE_CONFIG: after the subcommand, `-c` means --cc.
DIFF_OPTIONS = ("--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/")


class GitError(Exception):
    def __init__(self, args: Sequence[str], result: shell.Completed) -> None:
        super().__init__(f"git {' '.join(args)} failed ({result.describe()}):\n{result.tail(20)}")
        self.result = result


@dataclass(frozen=True)
class PushResult:
    ok: bool
    output: str


def auth_env(server_url: str, token: str) -> dict[str, str]:
    """Environment that makes git send `token` to `server_url` as actions/checkout does."""
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    key = f"http.{server_url.rstrip('/')}/.extraheader"
    return {
        "GIT_CONFIG_COUNT": "3",
        "GIT_CONFIG_KEY_0": key,
        "GIT_CONFIG_VALUE_0": "",  # an empty value drops headers persisted by a checkout
        "GIT_CONFIG_KEY_1": key,
        "GIT_CONFIG_VALUE_1": f"AUTHORIZATION: basic {basic}",
        "GIT_CONFIG_KEY_2": "credential.helper",
        "GIT_CONFIG_VALUE_2": "",
    }


@functools.cache
def private_home() -> Path:
    """A directory only we can read (0700), holding our global config; git's HOME. Removed at exit."""
    home = Path(tempfile.mkdtemp(prefix="ci-autofix-git-home-"))
    atexit.register(shutil.rmtree, home, True)
    (home / ".config").mkdir()
    (home / "gitconfig").write_text(_GLOBAL_CONFIG, encoding="utf-8")
    return home


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every git we run: ours, minus `GIT_*`, with only our own configuration."""
    home = private_home()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(home / "gitconfig"),
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
        }
    )
    for name in ("EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE"):
        env.pop(name, None)
    if extra:
        env.update(extra)
    return env


class Git:
    """Git on `repo` (its own `.git`), or with `git_dir` (a git directory of ours) on `work_tree`."""

    def __init__(
        self, repo: Path, *, timeout: float = 300, git_dir: Path | None = None, work_tree: Path | None = None
    ) -> None:
        self.repo = repo
        self.timeout = timeout
        self.git_dir = git_dir
        self.work_tree = work_tree

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        return git_env(extra)

    def run(
        self, *args: str, env: Mapping[str, str] | None = None, check: bool = True, stdin: bytes | None = None
    ) -> shell.Completed:
        location = []
        if self.git_dir is not None:
            location.append(f"--git-dir={self.git_dir}")
        if self.work_tree is not None:
            location.append(f"--work-tree={self.work_tree}")
        argv = ("git", *location, *_SAFE_CONFIG, *args)
        result = shell.run(
            argv,
            cwd=self.work_tree or self.repo,
            env=self._env(env),
            timeout=self.timeout,
            max_output=64 * 1024 * 1024,
            stdin=stdin,
        )
        if result.not_found:
            raise UserError("git is not installed.", "Install git (the action's image has it).")
        if check and not result.ok:
            raise GitError(args, result)
        return result

    def out(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        return self.run(*args, env=env).output.strip()

    # ---- reading -------------------------------------------------------------------------------
    def rev_parse(self, rev: str) -> str:
        return self.out("rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}")

    def is_dirty(self) -> bool:
        return bool(self.out("status", "--porcelain", "--untracked-files=normal"))

    def diff(self, base: str, target: str) -> str:
        """The unified diff between two commits, in a fixed form the patch policy can parse."""
        return self.run("diff", *DIFF_OPTIONS, "-M", "--full-index", base, target, "--").output

    def changed_paths(self, base: str, target: str) -> list[str]:
        out = self.run("diff", "--name-only", "-z", "--no-renames", base, target, "--").output
        return [p for p in out.split("\0") if p]

    # ---- writing objects (never moves HEAD, a branch, or the index) ------------------------------
    def snapshot_tree(self, base: str, new_files: Iterable[str] = ()) -> str:
        """A tree of `base` with the working directory's changes to tracked files, plus `new_files`.

        Untracked files appear only when named: whatever commands leave behind (build
        artefacts, caches, an egg-info) never slips into a fix.
        """
        with tempfile.TemporaryDirectory(prefix="ci-autofix-index-") as tmp:
            index_env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.run("read-tree", base, env=index_env)
            self.run("add", "--update", "--", ".", env=index_env)
            root = self.work_tree or self.repo
            present = [p for p in sorted(set(new_files)) if (root / p).is_file()]
            if present:
                self.run("add", "--", *present, env={**index_env, "GIT_LITERAL_PATHSPECS": "1"})
            return self.out("write-tree", env=index_env)

    def tree_with(self, tree: str, source: str, paths: Iterable[str]) -> str:
        """`tree` with `paths` as they are in `source`: restored when changed or deleted, removed
        when `source` does not have them."""
        with tempfile.TemporaryDirectory(prefix="ci-autofix-index-") as tmp:
            index_env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_LITERAL_PATHSPECS": "1"}
            self.run("read-tree", tree, env=index_env)
            for path in sorted(set(paths)):
                # whatever the fix has at `path` goes first (a file, or a directory made there)
                self.run("rm", "--cached", "-r", "-f", "-q", "--ignore-unmatch", "--", path, env=index_env)
                listed = self.run("ls-tree", "-z", "--full-tree", source, "--", path).output.rstrip("\0")
                if listed and not listed.split(None, 1)[0].startswith("04"):  # a file, not a directory
                    meta, _, _ = listed.partition("\t")
                    mode, _kind, blob = meta.split()
                    self.run("update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=index_env)
            return self.out("write-tree", env=index_env)

    def commit_tree(self, tree: str, parent: str, message: str, *, by: Identity = BOT) -> str:
        identity = {
            "GIT_AUTHOR_NAME": by.name,
            "GIT_AUTHOR_EMAIL": by.email,
            "GIT_COMMITTER_NAME": by.name,
            "GIT_COMMITTER_EMAIL": by.email,
        }
        result = self.run("commit-tree", tree, "-p", parent, "-F", "-", env=identity, stdin=message.encode())
        return result.output.strip()

    def tree_of(self, sha: str) -> str:
        return self.out("rev-parse", f"{sha}^{{tree}}")

    # ---- talking to the remote -----------------------------------------------------------------
    def push(
        self,
        remote_url: str,
        refspec: str,
        *,
        token: str,
        server_url: str,
        lease: tuple[str, str] | None = None,
    ) -> PushResult:
        """Push `refspec`; with `lease=(ref, sha)` the remote ref must still be `sha` (empty: absent)."""
        args = ["push", "--porcelain", "--no-verify"]
        if lease is not None:
            args.append(f"--force-with-lease={lease[0]}:{lease[1]}")
        args += ["--", remote_url, refspec]
        result = self.run(*args, env=auth_env(server_url, token), check=False)
        stale = "stale info" in result.output or "fetch first" in result.output
        if not result.ok and not stale and "non-fast-forward" not in result.output:
            raise GitError(args, result)
        return PushResult(ok=result.ok, output=result.output)


# Variables that would point git at another repository than the one in `cwd`.
_LOCATION_VARIABLES = frozenset(
    {"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX"}
)


def configured_identity(repo: Path) -> Identity | None:
    """The `user.name` and `user.email` your own git commits with in the checkout `repo` (its
    config, your global and the system config, as your environment points git to them), or None
    when either is unset or not one line.

    The one git here that reads your configuration, for the local flow's commit: `git config
    --get` only reads config files, it runs nothing they name.
    """
    env = {k: v for k, v in os.environ.items() if k not in _LOCATION_VARIABLES}
    env.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    values: list[str] = []
    for key in ("user.name", "user.email"):
        result = shell.run(("git", "config", "--get", key), cwd=repo, env=env, timeout=30)
        value = result.output.strip()
        if not result.ok or not value or "\n" in value:
            return None
        values.append(value)
    return Identity(*values)


def remote_url(server_url: str, repository: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+", repository):
        raise UserError(
            f"GITHUB_REPOSITORY {repository!r} is not of the form owner/name.",
            "Run inside GitHub Actions, or set GITHUB_REPOSITORY=owner/name.",
        )
    return f"{server_url.rstrip('/')}/{repository}.git"
