"""Installing a release: nothing is extracted before the checksum matches; an archive that would
write outside its tree, link out of it or create a device is refused; the result is ours, read-only
to others; a repeat install of the same files is found again."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from ci_autofix.toolchains.errors import ToolchainError
from ci_autofix.toolchains.install import install
from ci_autofix.toolchains.sources import Artifact, Platform, Release, Sources, resolve
from tests.testing.toolchain_mirror import Built, MirrorServer

pytestmark = pytest.mark.slow  # the mirror is built from real runtimes (about 30 s, once)

X64 = Platform("linux-x64", "linux-amd64", "x86_64-unknown-linux-gnu")


def _go(mirror: MirrorServer, built: Built) -> Release:
    return resolve("go", built.go, Sources.of(mirror.url), X64)


def test_go_installs_owned_by_us_and_read_only_to_others(
    mirror: MirrorServer, built: Built, tmp_path: Path
) -> None:
    installed = install(_go(mirror, built), tmp_path / "tc")
    assert not installed.cached
    assert (installed.home / "bin" / "go").is_file()
    assert (installed.home / "VERSION").read_text().startswith(f"go{built.go}")
    for path in [installed.home, *installed.home.rglob("*")]:
        st = path.lstat()
        assert (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid()), path  # the archive says uid 1001
        assert not st.st_mode & 0o022, path
        assert not st.st_mode & (stat.S_ISUID | stat.S_ISGID), path
    assert stat.S_IMODE((installed.home / "bin" / "go").stat().st_mode) == 0o755
    assert stat.S_IMODE((installed.home / "VERSION").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "tc").stat().st_mode) == 0o755
    assert [p.name for p in (tmp_path / "tc").iterdir()] == [installed.home.name]  # no download left over


def test_a_repeat_install_of_the_same_checksum_is_a_lookup(
    mirror: MirrorServer, built: Built, tmp_path: Path
) -> None:
    first = install(_go(mirror, built), tmp_path)
    asked = len(mirror.asked)
    again = install(_go(mirror, built), tmp_path)
    assert again.cached and again.home == first.home
    assert mirror.asked[asked:] == ["/go/index.json"]  # the index is read again, the archive is not


def test_a_half_made_or_altered_install_is_not_taken_for_the_cache(
    mirror: MirrorServer, built: Built, tmp_path: Path
) -> None:
    first = install(_go(mirror, built), tmp_path)
    first.home.chmod(0o777)  # someone else could have changed it
    again = install(_go(mirror, built), tmp_path)
    assert not again.cached and stat.S_IMODE(again.home.stat().st_mode) == 0o755


def test_a_tampered_archive_is_refused_before_extraction(
    mirror: MirrorServer, built: Built, tmp_path: Path
) -> None:
    path = f"go/go{built.go}.linux-amd64.tar.gz"
    original = mirror.read(path)
    mirror.override(path, original[:-1] + bytes([original[-1] ^ 1]))  # same size, one bit flipped
    with pytest.raises(ToolchainError) as raised:
        install(_go(mirror, built), tmp_path / "tc")
    assert "does not match the publisher's checksum" in raised.value.cause
    assert "nothing was extracted" in raised.value.cause
    assert "CI_AUTOFIX_TOOLCHAIN_MIRROR" in raised.value.remedy
    assert list((tmp_path / "tc").iterdir()) == []


def test_a_tampered_checksum_file_is_refused(mirror: MirrorServer, built: Built, tmp_path: Path) -> None:
    sums = mirror.read(f"node/v{built.node}/SHASUMS256.txt").decode()
    name = f"node-v{built.node}-linux-x64.tar.xz"
    forged = "".join(
        f"{'0' * 64}  {name}\n" if line.endswith(name) else line + "\n" for line in sums.splitlines()
    )
    mirror.override(f"node/v{built.node}/SHASUMS256.txt", forged.encode())
    release = resolve("node", built.node, Sources.of(mirror.url), X64)
    with pytest.raises(ToolchainError, match="does not match the publisher's checksum"):
        install(release, tmp_path / "tc")
    assert list((tmp_path / "tc").iterdir()) == []


def test_a_checksum_file_without_our_file_is_refused(mirror: MirrorServer, built: Built) -> None:
    mirror.override(f"node/v{built.node}/SHASUMS256.txt", b"not a checksum list\n")
    with pytest.raises(ToolchainError, match="has no valid SHA-256 line for node-v"):
        resolve("node", built.node, Sources.of(mirror.url), X64)


def test_a_go_archive_of_another_size_is_refused(mirror: MirrorServer, built: Built, tmp_path: Path) -> None:
    path = f"go/go{built.go}.linux-amd64.tar.gz"
    mirror.override(path, mirror.read(path) + b"\0" * 10)
    with pytest.raises(ToolchainError, match="larger than"):
        install(_go(mirror, built), tmp_path)


def _archive(members: list[tarfile.TarInfo], data: dict[str, bytes] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member in members:
            content = (data or {}).get(member.name)
            if content is not None:
                member.size = len(content)
            tar.addfile(member, io.BytesIO(content) if content is not None else None)
    return buffer.getvalue()


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, mode
    return info


@pytest.mark.parametrize(
    ("members", "why"),
    [
        ([_member("go/bin/go"), _member("/etc/cron.d/x")], "has an absolute path"),
        ([_member("go/../../x")], "has a path leaving the tree"),
        ([_member("go/bin/go"), _member("other/x")], "has a member outside go/"),
        ([_member("go/bin/evil", tarfile.SYMTYPE, "/bin/sh")], "has a link leaving the tree"),
        ([_member("go/bin/evil", tarfile.SYMTYPE, "../../../etc/passwd")], "has a link leaving the tree"),
        ([_member("go/x", tarfile.LNKTYPE, "etc/shadow")], "has a link leaving the tree"),
        ([_member("go/dev", tarfile.CHRTYPE)], "has a device file"),
        ([_member("go/fifo", tarfile.FIFOTYPE)], "has a device file"),
        (
            [_member("go/lib", tarfile.SYMTYPE, "."), _member("go/lib/../../escape")],
            "has a path leaving the tree",
        ),
    ],
)
def test_an_unsafe_archive_is_refused(
    mirror: MirrorServer, tmp_path: Path, members: list[tarfile.TarInfo], why: str
) -> None:
    body = _archive(members, {"go/bin/go": b"#!/bin/sh\n", "/etc/cron.d/x": b"* * * * * root sh\n"})
    mirror.override("go/evil.tar.gz", body)
    artifact = Artifact(f"{mirror.url}go/evil.tar.gz", hashlib.sha256(body).hexdigest(), "go")
    with pytest.raises(ToolchainError, match=why) as raised:
        install(Release("go", "1.99.0", (artifact,)), tmp_path / "tc")
    assert "nothing of it was installed" in raised.value.cause
    assert list((tmp_path / "tc").iterdir()) == []
    assert not (tmp_path / "escape").exists()


def test_setuid_bits_and_group_write_are_dropped(mirror: MirrorServer, tmp_path: Path) -> None:
    members = [_member("go", tarfile.DIRTYPE, mode=0o777), _member("go/bin/go", mode=0o6777)]
    body = _archive(members, {"go/bin/go": b"#!/bin/sh\n"})
    mirror.override("go/modes.tar.gz", body)
    artifact = Artifact(f"{mirror.url}go/modes.tar.gz", hashlib.sha256(body).hexdigest(), "go")
    installed = install(Release("go", "1.99.0", (artifact,)), tmp_path)
    assert stat.S_IMODE((installed.home / "bin" / "go").stat().st_mode) == 0o755
    assert stat.S_IMODE(installed.home.stat().st_mode) == 0o755


def test_the_destination_is_opened_to_others_whatever_the_umask(
    mirror: MirrorServer, built: Built, tmp_path: Path
) -> None:
    (tmp_path / "tc").mkdir(mode=0o700)
    install(_go(mirror, built), tmp_path / "tc")
    assert stat.S_IMODE((tmp_path / "tc").stat().st_mode) == 0o755


def test_a_destination_others_can_swap_is_refused(mirror: MirrorServer, built: Built, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # world-writable and not sticky: another uid could rename our directory away
    with pytest.raises(ToolchainError, match="writable by every user"):
        install(_go(mirror, built), shared / "tc")


def test_a_rust_component_missing_a_listed_file_is_refused(mirror: MirrorServer, tmp_path: Path) -> None:
    top = "cargo-1.99.0-x86_64-unknown-linux-gnu"
    members = [_member(f"{top}/components"), _member(f"{top}/cargo/manifest.in")]
    body = _archive(
        members, {f"{top}/components": b"cargo\n", f"{top}/cargo/manifest.in": b"file:bin/cargo\n"}
    )
    mirror.override("rust/dist/cargo.tar.xz", body)
    artifact = Artifact(f"{mirror.url}rust/dist/cargo.tar.xz", hashlib.sha256(body).hexdigest(), top)
    with pytest.raises(ToolchainError, match=r"lacks a file its manifest lists \(bin/cargo"):
        install(Release("rust", "1.99.0", (artifact,), components=("cargo",)), tmp_path / "tc")
    assert list((tmp_path / "tc").iterdir()) == []


@pytest.mark.parametrize("listed", [b"file:../../../etc/passwd\n", b"file:/etc/passwd\n", b"exec:rm -rf /\n"])
def test_a_rust_manifest_listing_an_unsafe_path_is_refused(
    mirror: MirrorServer, tmp_path: Path, listed: bytes
) -> None:
    top = "cargo-1.99.0-x86_64-unknown-linux-gnu"
    members = [_member(f"{top}/components"), _member(f"{top}/cargo/manifest.in")]
    body = _archive(members, {f"{top}/components": b"cargo\n", f"{top}/cargo/manifest.in": listed})
    mirror.override("rust/dist/cargo.tar.xz", body)
    artifact = Artifact(f"{mirror.url}rust/dist/cargo.tar.xz", hashlib.sha256(body).hexdigest(), top)
    with pytest.raises(ToolchainError, match="lists an unsafe path"):
        install(Release("rust", "1.99.0", (artifact,), components=("cargo",)), tmp_path / "tc")


def test_a_go_index_with_a_forged_checksum_is_refused(
    mirror: MirrorServer, built: Built, tmp_path: Path
) -> None:
    index = mirror.read("go/index.json")
    real = hashlib.sha256(mirror.read(f"go/go{built.go}.linux-amd64.tar.gz")).hexdigest()
    mirror.override("go/index.json", index.replace(real.encode(), b"f" * 64))
    with pytest.raises(ToolchainError, match="does not match the publisher's checksum"):
        install(_go(mirror, built), tmp_path / "tc")
    mirror.override("go/index.json", index.replace(real.encode(), b"not-a-checksum"))
    with pytest.raises(ToolchainError, match="gives no valid SHA-256"):
        _go(mirror, built)


def test_a_python_without_tarfiles_data_filter_is_refused_with_the_remedy(
    mirror: MirrorServer, built: Built, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python before 3.11.4 (Debian bookworm's 3.11.2) has no `filter=` for extraction: a clear error
    naming the cause and the remedy, not a traceback, and nothing installed."""
    monkeypatch.delattr(tarfile, "data_filter")
    monkeypatch.delattr(tarfile, "FilterError")
    with pytest.raises(ToolchainError, match="tarfile has no data filter") as raised:
        install(_go(mirror, built), tmp_path / "tc")
    assert "Python 3.11.4 or later" in raised.value.remedy
    assert not any((tmp_path / "tc").glob("*/bin"))
