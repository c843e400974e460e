"""Resolution against the publishers' indexes (served from 127.0.0.1 in their real formats): a spec
gives the newest release it admits, a missing one the nearest (noted), with the publisher's checksum."""

from __future__ import annotations

import hashlib

import pytest

from ci_autofix.toolchains.errors import ToolchainError
from ci_autofix.toolchains.sources import (
    GO_INDEX,
    MIRROR_SETTING,
    NODE_DIST,
    RUST_DIST,
    Platform,
    Sources,
    mirror_setting,
    resolve,
)
from tests.testing.toolchain_mirror import Built, MirrorServer

pytestmark = pytest.mark.slow  # the mirror is built from real runtimes (about 30 s, once)

X64 = Platform("linux-x64", "linux-amd64", "x86_64-unknown-linux-gnu")


@pytest.mark.parametrize(
    ("spec", "version"),
    [
        ("20", "20.20.2"),
        ("20.x", "20.20.2"),
        ("^20.1", "20.20.2"),
        (">=18 <21", "20.20.2"),
        ("20.19", "20.19.0"),
        ("lts/*", "22.12.0"),
        ("lts/iron", "20.20.2"),
        ("lts/hydrogen", "18.20.4"),
        ("lts/-1", "20.20.2"),
        ("node", "22.12.0"),
        ("21", "21.7.3"),
    ],
)
def test_node(mirror: MirrorServer, spec: str, version: str) -> None:
    release = resolve("node", spec, Sources.of(mirror.url), X64)
    assert (release.version, release.note) == (version, None)
    (artifact,) = release.artifacts
    assert artifact.url == f"{mirror.url}node/v{version}/node-v{version}-linux-x64.tar.xz"
    assert artifact.top == f"node-v{version}-linux-x64"
    sums = mirror.read(f"node/v{version}/SHASUMS256.txt").decode()
    assert f"{artifact.sha256}  node-v{version}-linux-x64.tar.xz" in sums


def test_node_built_archive_checksum_is_the_listed_one(mirror: MirrorServer, built: Built) -> None:
    release = resolve("node", built.node, Sources.of(mirror.url), X64)
    path = f"node/v{built.node}/node-v{built.node}-linux-x64.tar.xz"
    assert release.artifacts[0].sha256 == hashlib.sha256(mirror.read(path)).hexdigest()


def test_a_node_version_that_cannot_be_had_falls_back_to_the_nearest_noted(mirror: MirrorServer) -> None:
    release = resolve("node", "20.99.0", Sources.of(mirror.url), X64)
    assert release.version == "20.20.2"
    assert release.note == "20.99.0 cannot be had (no such release); using the nearest, 20.20.2"


def test_a_release_without_a_build_for_this_platform_is_not_offered(mirror: MirrorServer) -> None:
    release = resolve("node", "0.12", Sources.of(mirror.url), X64)  # listed, but no linux-x64 file
    assert release.version != "0.12.18" and release.note is not None


@pytest.mark.parametrize(
    ("spec", "version", "note"),
    [
        ("1.19", "1.19.8", None),
        ("1.19.5", "1.19.5", None),
        ("^1.20", "1.22.5", None),
        ("1.20", "1.20", None),  # go1.20: Go spelled first releases without .0 before 1.21
        ("stable", "1.22.5", None),
        ("oldstable", "1.21.0", None),
        ("1.23", "1.22.5", "1.23 cannot be had (no such release); using the nearest, 1.22.5"),  # rc1 only
        ("1.19.99", "1.19.8", "1.19.99 cannot be had (no such release); using the nearest, 1.19.8"),
    ],
)
def test_go(mirror: MirrorServer, spec: str, version: str, note: str | None) -> None:
    release = resolve("go", spec, Sources.of(mirror.url), X64)
    assert (release.version, release.note) == (version, note)
    (artifact,) = release.artifacts
    assert artifact.url == f"{mirror.url}go/go{version}.linux-amd64.tar.gz"
    assert artifact.top == "go" and artifact.size is not None


def test_rust(mirror: MirrorServer, built: Built) -> None:
    release = resolve("rust", built.rust, Sources.of(mirror.url), X64)
    assert release.version == built.rust and release.note is None
    assert release.components == ("rustc", "cargo", "rust-std", "rustfmt", "clippy")
    for artifact in release.artifacts:
        path = artifact.url.removeprefix(mirror.url)
        assert path.startswith("rust/dist/") and path.endswith("-x86_64-unknown-linux-gnu.tar.xz")
        assert artifact.sha256 == hashlib.sha256(mirror.read(path)).hexdigest()


def test_a_rust_version_that_is_not_published_falls_back_to_stable_noted(
    mirror: MirrorServer, built: Built
) -> None:
    release = resolve("rust", "1.96.0", Sources.of(mirror.url), X64)
    assert release.version == built.rust
    assert release.note == "Rust 1.96.0 cannot be had (no channel manifest is published); using stable"
    assert mirror.asked[:3] == [
        "/rust/dist/channel-rust-1.96.0.toml",
        "/rust/dist/channel-rust-stable.toml",
        "/rust/dist/channel-rust-stable.toml.sha256",
    ]


def test_a_tampered_rust_manifest_is_refused(mirror: MirrorServer) -> None:
    manifest = mirror.read("rust/dist/channel-rust-stable.toml").replace(
        b"available = true", b"available = true ", 1
    )
    mirror.override("rust/dist/channel-rust-stable.toml", manifest)
    with pytest.raises(ToolchainError, match="does not match its published SHA-256") as raised:
        resolve("rust", "stable", Sources.of(mirror.url), X64)
    assert "check the mirror" in raised.value.remedy


def test_a_rust_component_url_off_the_publishers_host_is_refused(mirror: MirrorServer) -> None:
    manifest = mirror.read("rust/dist/channel-rust-stable.toml").replace(
        b'xz_url = "https://static.rust-lang.org/dist/', b'xz_url = "https://evil.example/dist/'
    )
    mirror.override("rust/dist/channel-rust-stable.toml", manifest)
    mirror.override(
        "rust/dist/channel-rust-stable.toml.sha256", hashlib.sha256(manifest).hexdigest().encode() + b"  x\n"
    )
    with pytest.raises(ToolchainError, match="unexpected URL"):
        resolve("rust", "stable", Sources.of(mirror.url), X64)


@pytest.mark.parametrize("channel", ["https://evil.example/x", "../../x", "stable/../../x", "1.80;x"])
def test_a_rust_channel_is_checked_before_it_reaches_a_url(mirror: MirrorServer, channel: str) -> None:
    with pytest.raises(ToolchainError, match="not a Rust channel"):
        resolve("rust", channel, Sources.of(mirror.url), X64)
    assert mirror.asked == []


def test_the_official_sources_are_fixed() -> None:
    official = Sources.of(None)
    assert (official.node, official.go_index, official.rust) == (NODE_DIST, GO_INDEX, RUST_DIST)
    assert NODE_DIST == "https://nodejs.org/dist/"
    assert GO_INDEX == "https://go.dev/dl/?mode=json&include=all"
    assert RUST_DIST == "https://static.rust-lang.org/dist/"


def test_the_mirror_comes_only_from_our_own_setting() -> None:
    assert mirror_setting({MIRROR_SETTING: " https://mirror.example/tc "}) == "https://mirror.example/tc"
    assert mirror_setting({"INPUT_TOOLCHAIN_MIRROR": "https://evil.example"}) is None
    assert Sources.of("https://mirror.example/tc").node == "https://mirror.example/tc/node/"
    for bad in ("file:///etc", "https://user:pw@host/", "https://host/?x=1", "ftp://host/"):
        with pytest.raises(ToolchainError, match=MIRROR_SETTING):
            Sources.of(bad)
