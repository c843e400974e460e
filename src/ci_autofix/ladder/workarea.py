"""Where code run for the repository runs: a copy of the failing commit, owned by a uid of its own.

`workarea(checkout, sha)` makes, under the system temp dir (TMPDIR respected), a root-owned
directory (0711) holding:

- `git/`: our private git directory (0700, ours only): its objects come from the checkout's
  object store (`objects/info/alternates`), its config is the one git wrote at `init`. The fix's
  tree and commit are made here, and the push goes from here; the sandbox can neither read nor
  write it.
- `work/`: the copy of the commit's tree, checked out by our git directory, with a `.git` of
  its own (one shallow commit, so tools such as `git show HEAD:path` work) that the sandbox owns
  and our git never reads.
- `home/` (HOME and the XDG directories) and `tmp/` (TMPDIR): the sandbox's, for the fixers
  and the agent's commands in `work/`.
- `clean/`, with `clean-home/` and `clean-tmp/`: where every judged run happens (reproducing the
  failure, verifying a fix). `clean_copy(tree)` throws the last one away and checks out exactly
  `tree` there, with a fresh HOME and TMPDIR: nothing the agent's commands left in `work/` or in
  its HOME reaches a verification. Always the same path, so an editable install made by the
  setup stays valid from one clean copy to the next. Judged runs run as a second uid of their
  own (the judge's), and `work/`, `home/` and `tmp/` are closed to it while they run: code run
  to reproduce or verify the failure can neither edit the copy the fix is made in nor leave
  anything in it (`pristine` checks that the copy is still exactly the failing commit's tree
  before the fixers and the agent start).
- `env/` (the virtualenv the judged runs use): the sandbox's while the setup runs, ours
  (read-only to it) otherwise, so no command run for the repository can change it.
- `tools/`: fixer tools we install (ours; the sandbox may run them, not change them).
- `logs/` (`logs_dir`): the failed jobs' logs for the agent's `logs` tool, made by
  `agent.joblogs` before any command runs (0700, ours only: the sandbox can neither read nor
  write them, and they are outside the copy the agent edits).

When we are root, everything the sandbox gets belongs to a dedicated uid and gid picked at
random in 60000-64999 (two of them: the fixers' and the agent's, and the judge's) (inside rootless podman's 65536-uid namespaces) that no account, group
or running process uses and no other work area on the host has reserved (`sandbox_ids`): it
owns nothing else, so it cannot read our process's environment, write the runner's file-command
files (uid 1001's), or reach the checkout's `.git` (which `Sandbox` closes to others while
commands run). Not root (local `fix`, a non-root self-hosted
runner): commands run as our own user. Everything is removed at the end, success or halt.
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import os
import pwd
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.git import Git
from ci_autofix.sandbox import Sandbox, chown_tree, credential_files

SANDBOX_IDS = range(60000, 65000)
# root's; /run is a tmpfs on hosts and in containers, so no reservation outlives a reboot
LOCK_DIRS = (Path("/run/ci-autofix-uids"), Path(tempfile.gettempdir()) / "ci-autofix-uids")
_FIX_REF = "refs/ci-autofix/fix"


@dataclass(frozen=True)
class Workarea:
    base: Path
    work: Path
    home: Path
    tmp: Path
    env_dir: Path
    tools_dir: Path
    git_dir: Path
    head_sha: str
    uid: int | None  # None: commands run as our own user
    gid: int | None
    sealed: tuple[Path, ...]  # the checkout's git data, closed to others while commands run
    judge_uid: int | None = None  # judged runs' (reproduction, verification); None: as `uid`
    judge_gid: int | None = None

    @property
    def logs_dir(self) -> Path:
        """Where the failed jobs' logs are stored for the agent (made by `agent.joblogs`)."""
        return self.base / "logs"

    @property
    def git(self) -> Git:
        """Our git on the copy: our private git directory, the copy as the work tree."""
        return Git(self.work, git_dir=self.git_dir, work_tree=self.work)

    def sandbox(self, *, protected: Sequence[str], timeout: float) -> Sandbox:
        return Sandbox(
            self.work,
            protected=protected,
            timeout=timeout,
            user=self.uid,
            group=self.gid,
            home=self.home,
            tmpdir=self.tmp,
            git_dir=self.git_dir,
            sealed=self.sealed,
        )

    def clean_copy(self, tree: str, *, protected: Sequence[str], timeout: float) -> Sandbox:
        """A sandbox on a fresh checkout of exactly `tree` (and nothing else) at `clean/`.

        The previous clean copy, its HOME and TMPDIR are thrown away first. The copy's own `.git`
        holds the failing commit (so `git diff` there shows the fix); our git never reads it.
        """
        clean, home, tmp = self.base / "clean", self.base / "clean-home", self.base / "clean-tmp"
        self.sweep_ancestors()
        for old in (clean, home, tmp):
            if old.exists() or old.is_symlink():
                _discard(old, self.base)
        clean.mkdir()
        with tempfile.TemporaryDirectory(prefix="index-", dir=self.base) as scratch:
            index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            Git(clean, git_dir=self.git_dir, work_tree=clean).run(
                "read-tree", "--reset", "-u", tree, env=index
            )
        _own_git(self.git_dir, clean, self.head_sha)
        _homes(home)
        tmp.mkdir(mode=0o700)
        if self.judge_uid is not None and self.judge_gid is not None:
            for top in (clean, home, tmp):
                chown_tree(top, self.judge_uid, self.judge_gid)
        return Sandbox(
            clean,
            protected=protected,
            timeout=timeout,
            user=self.judge_uid,
            group=self.judge_gid,
            home=home,
            tmpdir=tmp,
            # the fixers' and the agent's copy, HOME and TMPDIR are out of the judged run's reach
            sealed=(*self.sealed, self.work, self.home, self.tmp),
        )

    def pristine(self) -> None:
        """Halt unless the work copy is exactly the failing commit's tree, nothing added, changed or
        left (ignored files included): checked before the fixers and the agent start from it."""
        if changed := self.git.status():
            shown = ", ".join(f"`{path}`" for path in changed[:5])
            raise Halt(
                HaltReason.UNSAFE_COPY,
                f"The copy the fix is made in is no longer the failing commit's tree ({shown} changed) "
                "although only the judged runs, which cannot write it, ran so far: nothing is attempted "
                "on a copy that something else changed.",
                details={"changed": changed[:20]},
            )

    def sweep_ancestors(self) -> list[Path]:
        """Remove what the sandbox's uid made in the directories above the work area (the system
        temp dir is writable by every uid): tools look for configuration in a checkout's parents
        (pytest's `pytest.ini` and `conftest.py`, cargo's `.cargo/config.toml`, `go.work`), so a
        file planted there by an earlier command would steer a judged run. The uid is ours alone:
        whatever it owns there, it planted."""
        uids = {uid for uid in (self.uid, self.judge_uid) if uid is not None}
        if not uids:
            return []
        removed: list[Path] = []
        for parent in self.base.parents:
            try:
                st = parent.stat()
                if not (st.st_mode & 0o022 or st.st_uid in uids):
                    continue  # only its owner can write there
                entries = list(os.scandir(parent))
            except OSError:
                continue
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid in uids:
                        path = Path(entry.path)
                        if entry.is_dir(follow_symlinks=False):
                            shutil.rmtree(path, ignore_errors=True)
                        else:
                            path.unlink()
                        removed.append(path)
        return removed

    def fix_ref(self, sha: str) -> str:
        """A ref in our git directory naming `sha`, to fetch it from there."""
        self.git.run("update-ref", _FIX_REF, sha)
        return _FIX_REF


@contextlib.contextmanager
def sandbox_ids() -> Iterator[tuple[int, int] | None]:
    """A uid and gid for the sandbox that nothing uses, reserved while the block runs (root only;
    None when we are not root). The reservation is a lock on a file named for the uid in a
    directory only root may write: two work areas on one host (parallel jobs on a self-hosted
    runner, parallel tests) never share a uid, so neither's sweep can touch the other's processes."""
    if os.geteuid() != 0:
        yield None
        return
    locks = _lock_dir()
    used = {entry.pw_uid for entry in pwd.getpwall()} | {entry.gr_gid for entry in grp.getgrall()}
    used |= _process_uids()
    free = [n for n in SANDBOX_IDS if n not in used]
    secrets.SystemRandom().shuffle(free)
    for uid in free:
        fd = os.open(locks / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue  # another work area holds it
        try:
            yield uid, uid
        finally:
            os.close(fd)  # the lock goes with the descriptor
        return
    raise UserError(
        "No uid in 60000-64999 is free for the sandbox: every one is an account, a group, runs a process "
        "or is reserved by another work area.",
        "Run ci-autofix in its container (the action does), or free one uid in that range on this host.",
    )


def _lock_dir() -> Path:
    """Where the reservations live: `/run/ci-autofix-uids`, else the same name in the temp dir;
    made when missing (0700, root's), refused when anyone else could have made or changed it."""
    for path in LOCK_DIRS:
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except OSError:
            continue  # no /run here, or it is read-only
        info = path.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o077:
            raise UserError(
                f"{path} is not a directory that only root may use (the sandbox's uid reservations live there).",
                f"Remove {path} so ci-autofix can create it again.",
            )
        return path
    raise UserError(
        "There is nowhere to reserve a uid for the sandbox: neither /run nor the temp dir is writable.",
        "Run ci-autofix in its container (the action does), or give it a writable /run or TMPDIR.",
    )


def _process_uids() -> set[int]:
    uids: set[int] = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in status.read_text().splitlines():
                if line.startswith(("Uid:", "Gid:")):
                    uids.update(int(n) for n in line.split()[1:])
    return uids


@contextlib.contextmanager
def workarea(checkout: Path, head_sha: str) -> Iterator[Workarea]:
    """A fresh work area for `head_sha` of `checkout`; removed when the block ends."""
    with sandbox_ids() as ids, sandbox_ids() as judge:
        base = Path(tempfile.mkdtemp(prefix="ci-autofix-run-")).resolve()
        try:
            base.chmod(0o711)
            yield _build(checkout, head_sha, base, ids, judge)
        finally:
            shutil.rmtree(base, ignore_errors=True)


def _build(
    checkout: Path, head_sha: str, base: Path, ids: tuple[int, int] | None, judge: tuple[int, int] | None
) -> Workarea:
    source = Git(checkout)
    objects = Path(source.out("rev-parse", "--path-format=absolute", "--git-common-dir")) / "objects"
    checkout_git = Path(source.out("rev-parse", "--path-format=absolute", "--absolute-git-dir"))
    git_dir, work = base / "git", base / "work"
    Git(base).run("init", "--quiet", "--bare", "--", str(git_dir))
    git_dir.chmod(0o700)
    (git_dir / "objects" / "info" / "alternates").write_text(f"{objects}\n", encoding="utf-8")
    work.mkdir()
    ours = Git(work, git_dir=git_dir, work_tree=work)
    ours.run("update-ref", "--no-deref", "HEAD", head_sha)
    ours.run("read-tree", "--reset", "-u", head_sha)
    _own_git(git_dir, work, head_sha)
    home, tmp, env_dir, tools = base / "home", base / "tmp", base / "env", base / "tools"
    _homes(home)
    for directory in (tmp, env_dir, tools):
        directory.mkdir(mode=0o700 if directory == tmp else 0o755)
    tools.chmod(0o755)
    if ids is not None:
        for top in (work, home, tmp):
            chown_tree(top, *ids)
    sealed = (checkout_git, *_credentials(checkout_git))
    uid, gid = ids if ids is not None else (None, None)
    judge_uid, judge_gid = judge if judge is not None else (uid, gid)
    return Workarea(
        base, work, home, tmp, env_dir, tools, git_dir, head_sha, uid, gid, sealed, judge_uid, judge_gid
    )


def _homes(home: Path) -> None:
    for directory in (
        home / ".config",
        home / ".cache",
        home / ".local" / "share",
        home / ".local" / "state",
    ):
        directory.mkdir(parents=True)


def _discard(path: Path, base: Path) -> None:
    """Move `path` out of the way at once, then remove it (what cannot be removed goes with `base`)."""
    aside = base / f"discarded-{secrets.token_hex(6)}"
    os.rename(path, aside)
    shutil.rmtree(aside, ignore_errors=True)


def _own_git(git_dir: Path, work: Path, head_sha: str) -> None:
    """A copy's own `.git`: the one commit, shallow, for the repository's own tools.

    Made by us in a directory nothing else has touched yet, before the sandbox owns it."""
    Git(work, git_dir=git_dir, work_tree=work).run("update-ref", _FIX_REF + "-base", head_sha)
    copy = Git(work)
    copy.run("init", "--quiet")
    copy.run(
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-recurse-submodules",
        "--depth=1",
        "--",
        f"file://{git_dir}",
        _FIX_REF + "-base",
    )
    copy.run("update-ref", "--no-deref", "HEAD", head_sha)
    copy.run("read-tree", "--reset", head_sha)
    copy.run("update-ref", "-d", "FETCH_HEAD", check=False)


def _credentials(checkout_git: Path) -> list[Path]:
    """Credential files the checkout's config includes (actions/checkout v6 puts one in RUNNER_TEMP)."""
    config = checkout_git / "config"
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = credential_files(text, checkout_git)
    runner_temp = os.environ.get("RUNNER_TEMP")
    if runner_temp:
        found += sorted(Path(runner_temp).glob("git-credentials-*"))
    return list(dict.fromkeys(found))
