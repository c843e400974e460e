"""A resolved release, downloaded, checked and installed where the sandbox can run it but not change it.

Each archive is streamed to a temporary file beside the installation (size-capped: exactly the
size the publisher lists when it lists one), and its SHA-256 compared with the publisher's before
anything is extracted. Extraction refuses absolute paths, `..`, anything outside the archive's one
top-level directory, links that leave it, and device files (and then still goes through tarfile's
`data` filter). The installation is `<dest>/<runtime>-<version>-<key>/`, where the key is taken from
the publisher's checksums: owned by us, directories 0755 and files 0644 or 0755, in a `dest` that
only we can write to. It is built beside its final place and renamed into it once complete, with a
stamp naming the checksums, so a repeat install of the same files is a lookup.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import posixpath
import shutil
import stat
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from ci_autofix.toolchains import http
from ci_autofix.toolchains.errors import ToolchainError
from ci_autofix.toolchains.sources import ARCHIVE_CAP, Artifact, Release

_READY = ".ci-autofix-ready"
_EXTRACTED_CAP = 4 * 1024 * 1024 * 1024
_MEMBERS_CAP = 200_000
_REMEDY = (
    "Re-run the job; if it happens again, check the network path to the publisher or the toolchain "
    "mirror (CI_AUTOFIX_TOOLCHAIN_MIRROR): what it serves is not the publisher's file."
)


@dataclass(frozen=True)
class Installed:
    """A runtime on disk: where, what was downloaded (URLs and their checked SHA-256s), and
    whether it was already there from an earlier install."""

    runtime: str
    version: str
    home: Path
    urls: tuple[str, ...]
    sha256: tuple[str, ...]
    cached: bool


def install(release: Release, dest: Path) -> Installed:
    prepare(dest)
    stamp = "\n".join(f"{a.sha256}  {a.url.rsplit('/', 1)[-1]}" for a in release.artifacts) + "\n"
    key = hashlib.sha256(stamp.encode()).hexdigest()[:16]
    home = dest / f"{release.runtime}-{release.version}-{key}"
    urls = tuple(a.url for a in release.artifacts)
    digests = tuple(a.sha256 for a in release.artifacts)
    with contextlib.suppress(OSError):
        if (home / _READY).read_text(encoding="ascii") == stamp and _ours(home):
            return Installed(release.runtime, release.version, home, urls, digests, cached=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=dest))
    try:
        built = staging / "home"
        built.mkdir()
        for artifact in release.artifacts:
            tree = staging / "tree"
            extract(fetch_checked(artifact, staging / "download"), tree, top=artifact.top)
            (staging / "download").unlink()
            if release.runtime == "rust":
                _merge_rust(tree / artifact.top, built)
            else:
                built.rmdir()
                (tree / artifact.top).rename(built)
            shutil.rmtree(tree)
        finish(built)
        (built / _READY).write_text(stamp, encoding="ascii")
        (built / _READY).chmod(0o644)
        if home.exists():
            shutil.rmtree(home)  # an earlier install that was not ours or not complete
        built.rename(home)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Installed(release.runtime, release.version, home, urls, digests, cached=False)


def prepare(dest: Path) -> None:
    """`dest` exists, is ours and only we can write to it, and no other uid can swap it (every
    directory above it is not writable by others, or sticky)."""
    dest.mkdir(parents=True, exist_ok=True, mode=0o755)
    st = dest.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise ToolchainError(
            f"the toolchain directory {dest} is not a directory owned by ci-autofix's user",
            "Point the toolchain directory at a fresh path under the runner's temporary directory.",
        )
    if stat.S_IMODE(st.st_mode) != 0o755:  # not writable by others, and enterable whatever the umask
        dest.chmod(0o755)
    for parent in dest.resolve().parents:
        mode = parent.stat().st_mode
        if mode & 0o002 and not mode & stat.S_ISVTX:
            raise ToolchainError(
                f"{parent}, above the toolchain directory, is writable by every user",
                "Use a toolchain directory whose parents other users cannot change.",
            )


def fetch_checked(artifact: Artifact, path: Path) -> Path:
    """`artifact` downloaded to `path`, refused unless its SHA-256 (and size, when listed) are the publisher's."""
    digest = http.download(artifact.url, path, cap=artifact.size or ARCHIVE_CAP)
    if artifact.size is not None and path.stat().st_size != artifact.size:
        raise ToolchainError(
            f"{artifact.url} is {path.stat().st_size} bytes, not the {artifact.size} the publisher lists; "
            "nothing was extracted",
            _REMEDY,
        )
    if digest != artifact.sha256:
        raise ToolchainError(
            f"{artifact.url} does not match the publisher's checksum (SHA-256 {digest}, expected "
            f"{artifact.sha256}): it was altered or damaged on the way, and nothing was extracted",
            _REMEDY,
        )
    return path


def extract(archive: Path, into: Path, *, top: str) -> None:
    """Unpack `archive` (tar, gzip or xz) into `into`, refusing any member that is not a plain file,
    directory or link inside `top/`."""
    if not safe_extraction():
        raise ToolchainError(
            f"this Python ({platform.python_version()}) cannot unpack the {top} archive safely: its "
            "tarfile has no data filter, which keeps an archive's files inside the toolchain directory "
            "and drops their owners and setuid bits; nothing was installed",
            "Run ci-autofix with Python 3.11.4 or later (the Action's image has 3.13).",
        )
    into.mkdir(mode=0o700)
    total = count = 0
    try:
        with tarfile.open(archive, "r|*") as tar:
            for member in tar:
                _check(member, top)
                count += 1
                total += max(member.size, 0)
                if count > _MEMBERS_CAP or total > _EXTRACTED_CAP:
                    _refuse(archive, top, "unpacks to more files or bytes than a toolchain has")
                tar.extract(member, into, filter="data")
    except _Refused as exc:
        _refuse(archive, top, str(exc))
    except tarfile.FilterError as exc:
        _refuse(archive, top, f"has a member the safe extraction refuses ({exc})")
    except (tarfile.TarError, EOFError, OSError) as exc:
        _refuse(archive, top, f"cannot be unpacked ({exc})")
    if not (into / top).is_dir():
        _refuse(archive, top, f"has no {top}/ directory")


def safe_extraction() -> bool:
    """Whether tarfile has the data filter (Python 3.11.4 and later): extraction relies on it."""
    return hasattr(tarfile, "data_filter")


def _check(member: tarfile.TarInfo, top: str) -> None:
    name = member.name
    if name.startswith("/"):
        raise _Refused(f"has an absolute path ({_shown(name)})")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _Refused(f"has a path leaving the tree ({_shown(name)})")
    if not parts or parts[0] != top:
        raise _Refused(f"has a member outside {top}/ ({_shown(name)})")
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        raise _Refused(f"has a device file or other special file ({_shown(name)})")
    if member.issym() or member.islnk():
        link = member.linkname
        base = posixpath.dirname("/".join(parts)) if member.issym() else ""
        target = posixpath.normpath(posixpath.join(base, link))
        if link.startswith("/") or not (target == top or target.startswith(top + "/")):
            raise _Refused(f"has a link leaving the tree ({_shown(name)} -> {_shown(link)})")


class _Refused(Exception):
    pass


def _refuse(archive: Path, top: str, why: str) -> NoReturn:
    raise ToolchainError(
        f"the {top} archive {why}; nothing of it was installed",
        "The archive is not a toolchain as its publisher ships it; check the toolchain mirror "
        "(CI_AUTOFIX_TOOLCHAIN_MIRROR), or re-run the job.",
    )


def _shown(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)[:120]


def finish(home: Path) -> None:
    """Make the tree read-only to everyone else: directories 0755, files 0755 or 0644; refuse a
    symbolic link whose target is outside the tree. (It is ours already: the `data` filter
    extracts without the archive's owners.)"""
    real = home.resolve()
    for directory, dirs, files in os.walk(home):
        for name in [*dirs, *files, ""] if directory == str(home) else [*dirs, *files]:
            path = Path(directory, name) if name else home
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                target = path.resolve()
                if target != real and real not in target.parents:
                    raise ToolchainError(
                        f"the installed {home.name} has a link leaving it ({path.relative_to(home)})",
                        "The archive is not the publisher's; check the toolchain mirror.",
                    )
            elif stat.S_ISDIR(st.st_mode):
                path.chmod(0o755)
            else:
                path.chmod(0o755 if st.st_mode & stat.S_IXUSR else 0o644)


def _ours(home: Path) -> bool:
    st = home.lstat()
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not stat.S_IMODE(st.st_mode) & 0o022


def _merge_rust(component_root: Path, home: Path) -> None:
    """A Rust dist component (`<name>/components` listing directories whose `manifest.in` names
    `file:` and `dir:` entries) laid into `home`, as its `install.sh` would, without running it."""
    listing = component_root / "components"
    names = listing.read_text(encoding="utf-8").split() if listing.is_file() else []
    if not names:
        raise ToolchainError(
            f"the Rust archive {component_root.name} lists no components", "Check the toolchain mirror."
        )
    for name in names:
        source = component_root / name
        manifest = source / "manifest.in"
        if "/" in name or name in ("..", ".") or not manifest.is_file():
            raise ToolchainError(
                f"the Rust archive {component_root.name} has no component {_shown(name)}",
                "Check the toolchain mirror.",
            )
        for line in manifest.read_text(encoding="utf-8").splitlines():
            kind, _, rel = line.partition(":")
            parts = rel.split("/")
            if kind not in ("file", "dir") or not rel or rel.startswith("/") or ".." in parts:
                raise ToolchainError(
                    f"the Rust component {_shown(name)} lists an unsafe path ({_shown(line)})",
                    "Check the toolchain mirror.",
                )
            try:
                _move(source / rel, home / rel)
            except OSError as exc:
                raise ToolchainError(
                    f"the Rust component {_shown(name)} lacks a file its manifest lists ({_shown(rel)}: "
                    f"{exc.strerror})",
                    "The archive is not the publisher's; check the toolchain mirror.",
                ) from None


def _move(source: Path, target: Path) -> None:
    if source.is_dir() and not source.is_symlink():
        for child in source.iterdir():
            _move(child, target / child.name)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() or target.is_symlink():
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
    source.rename(target)
