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
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.redact import redact

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
    "status.submoduleSummary=false",
    "-c",
    "fetch.recurseSubmodules=false",
    "-c",
    "push.recurseSubmodules=no",
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
# Our global config: only our own settings; code run for the repository can write neither it nor
# the private git directory. No `safe.directory` here: a `Git` on a checkout it was given trusts
# that one path (`-c safe.directory=<path>`), never `*`, so a git started anywhere else (inside a
# copy's subdirectory) refuses a repository another uid owns.
_GLOBAL_CONFIG = """\
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


def refuse_nested_repositories(root: Path) -> None:
    """Halt when a git repository, or a `.git` file pointing at one, is anywhere below `root` (its
    own `.git` aside): a git asked about that directory (a submodule's status, a snapshot of its
    HEAD) would read the configuration there, which code run for the repository wrote. Links are
    not followed, so a link named `.git` counts as one."""
    found: list[str] = []
    for directory, dirs, names in os.walk(root):
        here = Path(directory)
        for name in (*dirs, *names):
            if name == ".git" and here != root:
                found.append((here / name).relative_to(root).as_posix())
        dirs[:] = [d for d in dirs if not (d == ".git" and here == root)]
    if found:
        shown = ", ".join(f"`{path}`" for path in sorted(found)[:5])
        raise Halt(
            HaltReason.UNSAFE_COPY,
            f"The copy the fix is made in holds a git repository below its root ({shown}): code run for "
            "the repository (a test, a setup script, a command of the agent) made it, and ci-autofix's git "
            "never works on a tree holding one, since a git started there would run what that repository's "
            "configuration says. Nothing was proposed.",
            details={"nested_repositories": sorted(found)[:20]},
        )


class GitError(Exception):
    def __init__(self, args: Sequence[str], result: shell.Completed) -> None:
        super().__init__(f"git {' '.join(args)} failed ({result.describe()}):\n{result.tail(20)}")
        self.result = result


@dataclass(frozen=True)
class PushResult:
    """What one `git push` did. `stale`: the lease refused (the remote ref was not what the lease
    said), and nothing else went wrong; any other failure is described by `push_error`."""

    ok: bool
    output: str
    stale: bool = False
    timed_out: bool = False
    duration_s: float = 0.0


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


def fetch_bare(
    root: Path, url: str, refspec: str, *more: str, token: str, server_url: str, depth: int | None
) -> Git:
    """A fresh bare repository at `root` (an empty directory of ours) holding what `refspec` (and
    `more`) fetch from `url`, `depth` commits deep (None: the whole history), without tags or
    submodules; raises `GitError`."""
    git = Git(root)
    git.run("init", "--bare", "-q", ".")
    git.run(
        "fetch",
        "--no-tags",
        "--no-recurse-submodules",
        *([f"--depth={depth}"] if depth is not None else []),
        "--",
        url,
        refspec,
        *more,
        env=auth_env(server_url, token),
    )
    return git


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
        if self.git_dir is None:  # the repository is found from `repo`: trust exactly that one
            location += ["-c", f"safe.directory={self.repo.resolve()}"]
        else:
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
        return bool(self.out("status", "--porcelain", "--untracked-files=normal", "--ignore-submodules=all"))

    def status(self) -> list[str]:
        """Every path of the work tree that differs from the index: changed, untracked, ignored
        (submodules' directories are never looked into). Empty: the tree is exactly the index's."""
        refuse_nested_repositories(self.work_tree or self.repo)
        out = self.run(
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignored=traditional",
            "--ignore-submodules=all",
            "--no-renames",
        ).output
        return [entry[3:] for entry in out.split("\0") if len(entry) > 3]

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
        artefacts, caches, an egg-info) never slips into a fix. A submodule's entry stays as in
        `base`: git is never asked about, or started in, a submodule's directory, and a tree with a
        git repository anywhere below its root is refused (`refuse_nested_repositories`).
        """
        root = self.work_tree or self.repo
        refuse_nested_repositories(root)
        with tempfile.TemporaryDirectory(prefix="ci-autofix-index-") as tmp:
            index_env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.run("read-tree", base, env=index_env)
            listed = self.run(
                "diff-files", "--name-only", "-z", "--ignore-submodules=all", "--no-renames", env=index_env
            ).output
            changed = [path for path in listed.split("\0") if path]
            if changed:
                self.run(
                    "add",
                    "--update",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                    env={**index_env, "GIT_LITERAL_PATHSPECS": "1"},
                    stdin="\0".join(changed).encode(),
                )
            submodules = self._gitlinks(base)
            present = [
                p
                for p in sorted(set(new_files))
                if (root / p).is_file() and not any(p == s or p.startswith(s + "/") for s in submodules)
            ]
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

    def _gitlinks(self, rev: str) -> list[str]:
        """The submodules' paths in `rev` (gitlinks): a file written below one is never part of a tree."""
        out = self.run("ls-tree", "-r", "-z", "--full-tree", rev).output
        return [entry.split("\t", 1)[1] for entry in out.split("\0") if entry.startswith("160000 ")]

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
        """Push `refspec`; with `lease=(ref, sha)` the remote ref must still be `sha` (empty: absent).

        Never raises for what the remote or the network did: a refused, failed or timed-out push
        is a `PushResult` that is not `ok` (`push_error` says why and what to do)."""
        args = ["push", "--porcelain", "--no-verify"]
        if lease is not None:
            args.append(f"--force-with-lease={lease[0]}:{lease[1]}")
        args += ["--", remote_url, refspec]
        result = self.run(*args, env=auth_env(server_url, token), check=False)
        return PushResult(
            ok=result.ok,
            output=result.output,
            stale=not result.ok and _STALE in result.output and _REJECTED_BY_REMOTE not in result.output,
            timed_out=result.timed_out,
            duration_s=result.duration_s,
        )


_STALE = "(stale info)"  # git's words when the lease, and only it, refused
_REJECTED_BY_REMOTE = "[remote rejected]"
_GITHUB_STATUS = "https://www.githubstatus.com"


def push_error(push: PushResult, *, doing: str, again: str, note: str = "") -> UserError:
    """Why a push that is not `ok` failed, in GitHub's own words (redacted), and what to do.

    `doing` completes "git could not …" (for example "push the fix onto `main`"); `again` says
    how to retry ("dispatch apply again"); `note` says what was done about it (a branch deleted).
    """
    said = _remote_said(push.output)
    why, remedy = _push_failure(push, again)
    cause = f"git could not {doing}: {why}."
    if said:
        cause += "\n" + said
    if note:
        cause += f"\n{note}"
    return UserError(cause, remedy)


def _push_failure(push: PushResult, again: str) -> tuple[str, str]:
    """Why a push failed and what to do (`again` says how to retry), from git's and GitHub's words:
    a timeout, a rule or the token (`_refusal`), GitHub failing, the network, or none of these."""
    lowered = push.output.lower()
    if push.timed_out:
        why = f"git timed out after {push.duration_s:.0f}s and was stopped: the server did not finish the push in time"
        return why, f"GitHub may be slow or having an incident ({_GITHUB_STATUS}); {again} later."
    if refusal := _refusal(push.output, lowered, again):
        return refusal
    if code := re.search(r"returned error: (5\d\d)", lowered):
        return f"GitHub's git service failed (HTTP {code.group(1)})", (
            f"GitHub may be having an incident ({_GITHUB_STATUS}); {again} in a few minutes. "
            "The push may have landed even so: a re-run finds it."
        )
    if any(
        words in lowered
        for words in (
            "could not resolve host",
            "failed to connect",
            "connection refused",
            "connection timed out",
            "connection reset",
            "operation timed out",
            "the remote end hung up",
            "unable to access",
        )
    ):
        return "the git server could not be reached", (
            f"Check the runner's network access to GitHub and `GITHUB_SERVER_URL`; then {again}."
        )
    return "git gave no reason this recognises", f"Read git's message above; {again} once its cause is fixed."


def _refusal(output: str, lowered: str, again: str) -> tuple[str, str] | None:
    """Why GitHub refused the push (a protection rule, push protection, a ruleset, a workflow file,
    a hook, the token) and what to do, when its words say so (`lowered`: `output` in lower case)."""
    if "gh006" in lowered or "protected branch" in lowered:
        return "a branch protection rule refused it (GH006)", (
            "Allow the token's identity to push to the branch in its protection rule (Settings → "
            "Branches; `github-actions[bot]` for the GITHUB_TOKEN, the `ci-token`'s owner when it "
            f"is given), or merge the fix by hand; then {again}."
        )
    if "push protection" in lowered or "cannot contain secrets" in lowered:
        return "GitHub's push protection found what looks like a secret in the commit", (
            "Read the commit's diff for the secret GitHub names: a fix must not carry one, so do not "
            f"bypass the protection; if it is a false positive, mark it so on GitHub, then {again}."
        )
    if "gh013" in lowered or "rule violations" in lowered:
        return "a repository ruleset refused it (GH013)", (
            "Add the token's identity to the ruleset's bypass list (Settings → Rules → Rulesets), or "
            f"change the rule the message names; then {again}."
        )
    if "to create or update workflow" in lowered:
        # GitHub's words for an App without `workflows` and for an OAuth token without `workflow`
        return "the change touches a workflow file, which the token may not change", (
            "Pass a `ci-token` that may change workflows (a PAT with the `workflow` scope, or an App "
            f"token with `workflows: write`); the GITHUB_TOKEN never can. Then {again}."
        )
    if _REJECTED_BY_REMOTE in output or "hook declined" in lowered:
        return "a hook on the server refused it", (
            f"Read the server's message above; ask the repository's admins what it requires; then {again}."
        )
    if "returned error: 403" in lowered or ("permission to" in lowered and "denied" in lowered):
        return "GitHub refused the token (403)", (
            "Give the job `contents: write` in its `permissions:`; a `ci-token`, when given, is used "
            f"to push and must be allowed to push to the repository. Then {again}."
        )
    if (
        "returned error: 401" in lowered
        or "authentication failed" in lowered
        or "could not read username" in lowered
    ):
        return "GitHub rejected the token (401)", (
            "Pass a valid token (`github-token`, and `ci-token` when given): an expired token, or "
            f"one for another repository or GitHub host, does not work. Then {again}."
        )
    return None


def _remote_said(output: str, limit: int = 12) -> str:
    """The server's and git's own lines about a failed push (the `remote:` text, the rejected
    ref, `fatal:`), redacted and capped; the porcelain's bookkeeping is left out."""
    lines = []
    for raw in output.splitlines():
        line = raw.rstrip()
        if line.startswith("remote:"):
            line = line.removeprefix("remote:").strip()
            if not line:
                continue
        elif line.startswith("!") or line.startswith(("fatal:", "error:")):
            if "failed to push some refs" in line:
                continue
        else:
            continue
        lines.append("    " + line.replace("\t", " ")[:300])
    return redact("\n".join(lines[:limit]))


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
