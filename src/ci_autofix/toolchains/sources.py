"""Where each runtime comes from, and which release a declared spec resolves to.

The base URLs are fixed here, the ones the setup actions use: Node from `https://nodejs.org/dist/`
(`index.json`, `vX/SHASUMS256.txt`, `vX/node-vX-linux-<arch>.tar.xz`), Go from `https://go.dev/dl/`
(`?mode=json&include=all` lists every file with its SHA-256), Rust from
`https://static.rust-lang.org/dist/` (`channel-rust-<channel>.toml`, checked against its `.sha256`,
lists each component's `xz_hash`). The only other host is the mirror ci-autofix's own setting
`CI_AUTOFIX_TOOLCHAIN_MIRROR` names (for runners without internet access), laid out as
`<mirror>/node/…` (as nodejs.org/dist/), `<mirror>/go/index.json` + `<mirror>/go/<file>`, and
`<mirror>/rust/dist/…` (as static.rust-lang.org/dist/). Nothing from the repository picks a host:
its text reaches a URL only as a version found in the publisher's index, or a checked Rust channel.

A spec resolves to the newest release it admits. When none does, the nearest release that exists
is used instead, and `Release.note` says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass

from ci_autofix.toolchains import http, versions
from ci_autofix.toolchains.declared import valid
from ci_autofix.toolchains.errors import NotPublished, ToolchainError

MIRROR_SETTING = "CI_AUTOFIX_TOOLCHAIN_MIRROR"
NODE_DIST = "https://nodejs.org/dist/"
GO_DL = "https://go.dev/dl/"
GO_INDEX = "https://go.dev/dl/?mode=json&include=all"
RUST_DIST = "https://static.rust-lang.org/dist/"

INDEX_CAP = 32 * 1024 * 1024
ARCHIVE_CAP = 1024 * 1024 * 1024
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_MIRROR = re.compile(r"^https?://[A-Za-z0-9.\-]+(?::\d{1,5})?(?:/[A-Za-z0-9._~\-/]*)?$")
_NODE_VERSION = re.compile(r"^v(\d{1,4})\.(\d{1,4})\.(\d{1,6})$")
_GO_VERSION = re.compile(r"^go(\d{1,3})\.(\d{1,4})(?:\.(\d{1,4}))?$")
_RUST_PATH = re.compile(r"^\d{4}-\d{2}-\d{2}/[A-Za-z0-9._\-]+\.tar\.xz$")
# the machine's architecture → its names at nodejs.org, go.dev and static.rust-lang.org
_ARCH = {
    "x86_64": ("x64", "amd64", "x86_64"),
    "amd64": ("x64", "amd64", "x86_64"),
    "aarch64": ("arm64", "arm64", "aarch64"),
    "arm64": ("arm64", "arm64", "aarch64"),
}
RUST_COMPONENTS = ("rustc", "cargo", "rust-std", "rustfmt", "clippy")
_RUST_REQUIRED = ("rustc", "cargo", "rust-std")


@dataclass(frozen=True)
class Sources:
    """The base URLs toolchains are fetched from: the publishers', or a mirror of all three."""

    node: str = NODE_DIST
    go: str = GO_DL
    go_index: str = GO_INDEX
    rust: str = RUST_DIST
    mirror: str | None = None

    @classmethod
    def of(cls, mirror: str | None) -> Sources:
        if not mirror:
            return cls()
        if not _MIRROR.match(mirror):
            raise ToolchainError(
                f"{MIRROR_SETTING} is not an http(s) URL of a host and path",
                "Set it to the base URL of the mirror, e.g. https://mirror.example/toolchains, or unset it.",
            )
        base = mirror.rstrip("/") + "/"
        return cls(f"{base}node/", f"{base}go/", f"{base}go/index.json", f"{base}rust/dist/", base)


def mirror_setting(environ: Mapping[str, str] | None = None) -> str | None:
    """The mirror of ci-autofix's own environment (never the repository's)."""
    value = (os.environ if environ is None else environ).get(MIRROR_SETTING, "").strip()
    return value or None


@dataclass(frozen=True)
class Platform:
    node: str  # linux-x64
    go: str  # linux-amd64
    rust: str  # x86_64-unknown-linux-gnu

    @classmethod
    def here(cls) -> Platform:
        names = _ARCH.get(platform.machine().lower())
        if names is None:
            raise ToolchainError(
                f"this machine's architecture ({platform.machine()}) has no published toolchains we know",
                "Run ci-autofix on an x86_64 or arm64 Linux runner.",
            )
        return cls(f"linux-{names[0]}", f"linux-{names[1]}", f"{names[2]}-unknown-linux-gnu")


@dataclass(frozen=True)
class Artifact:
    """One file to download: its URL (on our fixed base), the publisher's SHA-256, and what it unpacks to."""

    url: str
    sha256: str
    top: str  # the one top-level directory of the archive
    size: int | None = None


@dataclass(frozen=True)
class Release:
    runtime: str
    version: str
    artifacts: tuple[Artifact, ...]
    note: str | None = None  # the declared version could not be had: what was used instead
    components: tuple[str, ...] = ()  # Rust: the components, in the order of `artifacts`


def resolve(runtime: str, spec: str, sources: Sources, where: Platform) -> Release:
    """The release `spec` resolves to, with the publisher's checksums."""
    if runtime == "node":
        return _node(spec, sources, where)
    if runtime == "go":
        return _go(spec, sources, where)
    if runtime == "rust":
        return _rust(spec, sources, where)
    raise ToolchainError(
        f"{runtime} is not a runtime ci-autofix provisions", "Provision it with `setup-command`."
    )


def _pick(
    spec: versions.Spec,
    available: list[versions.Version],
    aliases: dict[str, versions.Version | None],
    what: str,
) -> tuple[versions.Version, str | None]:
    if not available:
        raise ToolchainError(f"the {what} index lists no release for this platform", "Check the mirror.")
    if spec.alias is not None:
        chosen = aliases.get(spec.alias)
        if chosen is not None:
            return chosen, None
        newest = max(available)
        return (
            newest,
            f"{spec.text} names no release the index lists; using the newest, {versions.render(newest)}",
        )
    match = versions.newest(spec, available)
    if match is not None:
        return match, None
    near = versions.nearest(spec.anchor, available)
    assert near is not None
    return near, f"{spec.text} cannot be had (no such release); using the nearest, {versions.render(near)}"


def _json(url: str, what: str) -> object:
    try:
        return json.loads(http.fetch(url, cap=INDEX_CAP))
    except ValueError:
        raise ToolchainError(
            f"the {what} index at {url} is not JSON", "Check the mirror, or re-run the job."
        ) from None


def _node(spec_text: str, sources: Sources, where: Platform) -> Release:
    spec = versions.parse(spec_text)
    index = _json(f"{sources.node}index.json", "Node.js")
    lts: dict[versions.Version, str] = {}
    available: list[versions.Version] = []
    for entry in index if isinstance(index, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            continue
        match = _NODE_VERSION.match(entry["version"])
        files = entry.get("files")
        if not match or not isinstance(files, list) or where.node not in files:
            continue
        version = (int(match[1]), int(match[2]), int(match[3]))
        available.append(version)
        if isinstance(entry.get("lts"), str):
            lts[version] = entry["lts"].lower()
    # the LTS lines (iron, hydrogen, ...) with their newest release, newest line first
    newest_of = {name: max(v for v in lts if lts[v] == name) for name in set(lts.values())}
    lines = sorted(newest_of.items(), key=lambda line: line[1], reverse=True)
    aliases: dict[str, versions.Version | None] = {
        "lts/*": lines[0][1] if lines else None,
        **{f"lts/{name}": newest for name, newest in lines},
        **{f"lts/-{n}": lines[n][1] for n in range(1, min(len(lines), 10))},
        **dict.fromkeys(("node", "latest", "current", "stable"), max(available) if available else None),
    }
    version, note = _pick(spec, available, aliases, "Node.js")
    tag = f"v{versions.render(version)}"
    name = f"node-{tag}-{where.node}.tar.xz"
    sums = http.fetch(f"{sources.node}{tag}/SHASUMS256.txt", cap=1024 * 1024).decode("utf-8", "replace")
    digest = _shasum(sums, name, f"{sources.node}{tag}/SHASUMS256.txt")
    return Release(
        "node",
        versions.render(version),
        (Artifact(f"{sources.node}{tag}/{name}", digest, name.removesuffix(".tar.xz")),),
        note,
    )


def _shasum(text: str, name: str, url: str) -> str:
    """The SHA-256 `SHASUMS256.txt` gives for `name` (lines of `<hex>  <name>`)."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("*") == name:
            if not _HEX64.match(parts[0].lower()):
                break
            return parts[0].lower()
    raise ToolchainError(
        f"{url} has no valid SHA-256 line for {name}",
        "The checksum file is damaged or not the publisher's; check the mirror, or re-run the job.",
    )


def _go(spec_text: str, sources: Sources, where: Platform) -> Release:
    spec = versions.parse(spec_text)
    index = _json(sources.go_index, "Go")
    files: dict[versions.Version, tuple[str, str, int | None]] = {}
    for entry in index if isinstance(index, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            continue
        match = _GO_VERSION.match(entry["version"])
        if not match or entry.get("stable") is not True:
            continue
        version = (int(match[1]), int(match[2]), int(match[3] or 0))
        name = f"{entry['version']}.{where.go}.tar.gz"
        for file in entry.get("files") or []:
            if not isinstance(file, dict) or file.get("filename") != name or file.get("kind") != "archive":
                continue
            digest = str(file.get("sha256", "")).lower()
            if not _HEX64.match(digest):
                raise ToolchainError(
                    f"the Go index gives no valid SHA-256 for {name}",
                    "The index is damaged or not the publisher's; check the mirror, or re-run the job.",
                )
            size = file.get("size")
            files[version] = (name, digest, size if isinstance(size, int) else None)
    available = sorted(files)
    lines = sorted({v[:2] for v in available}, reverse=True)
    aliases: dict[str, versions.Version | None] = {
        "stable": max(available) if available else None,
        "latest": max(available) if available else None,
        "oldstable": max((v for v in available if v[:2] == lines[1]), default=None)
        if len(lines) > 1
        else None,
    }
    version, note = _pick(spec, available, aliases, "Go")
    name, digest, size = files[version]
    return Release("go", _go_name(version), (Artifact(f"{sources.go}{name}", digest, "go", size),), note)


def _go_name(version: versions.Version) -> str:
    """Go's own spelling: 1.20 for the first 1.20 release before 1.21, 1.21.0 from then on."""
    return versions.render(version) if version[2] or version >= (1, 21, 0) else f"{version[0]}.{version[1]}"


def _rust(channel: str, sources: Sources, where: Platform) -> Release:
    if valid("rust", channel) != channel:
        raise ToolchainError(
            f"{channel[:40]!r} is not a Rust channel", "Declare stable, beta, nightly or X.Y.Z."
        )
    note = None
    try:
        manifest = _rust_manifest(channel, sources)
    except NotPublished:
        if channel == "stable":
            raise
        note = f"Rust {channel} cannot be had (no channel manifest is published); using stable"
        manifest = _rust_manifest("stable", sources)
    packages = manifest.get("pkg")
    renames = manifest.get("renames")
    if not isinstance(packages, dict):
        raise ToolchainError("the Rust channel manifest lists no packages", "Check the mirror.")
    artifacts: list[Artifact] = []
    components: list[str] = []
    missing: list[str] = []
    for component in RUST_COMPONENTS:
        package = packages.get(component)
        rename = renames.get(component) if isinstance(renames, dict) else None
        if not isinstance(package, dict) and isinstance(rename, dict):
            package = packages.get(str(rename.get("to")))
        target = (package or {}).get("target", {}).get(where.rust) if isinstance(package, dict) else None
        if not isinstance(target, dict) or target.get("available") is not True:
            if component in _RUST_REQUIRED:
                raise ToolchainError(
                    f"Rust {channel} has no {component} for {where.rust}", "Declare another Rust version."
                )
            missing.append(component)
            continue
        artifacts.append(_rust_artifact(target, sources, component))
        components.append(component)
    rustc = packages.get("rustc")
    version = str(rustc.get("version", "")).split(" ")[0] if isinstance(rustc, dict) else ""
    if not re.match(r"^\d{1,3}\.\d{1,4}\.\d{1,4}(?:-(?:beta(?:\.\d+)?|nightly))?$", version):
        raise ToolchainError("the Rust channel manifest gives no rustc version", "Check the mirror.")
    if missing:
        extra = f"{', '.join(missing)} not published for this version"
        note = f"{note}; {extra}" if note else extra
    return Release("rust", version, tuple(artifacts), note, tuple(components))


def _rust_manifest(channel: str, sources: Sources) -> dict[str, object]:
    dated = re.match(r"^(nightly|beta)-(\d{4}-\d{2}-\d{2})$", channel)
    path = f"{dated[2]}/channel-rust-{dated[1]}.toml" if dated else f"channel-rust-{channel}.toml"
    url = f"{sources.rust}{path}"
    raw = http.fetch(url, cap=INDEX_CAP)
    listed = http.fetch(f"{url}.sha256", cap=4096).decode("ascii", "replace").split()
    if not listed or listed[0].lower() != hashlib.sha256(raw).hexdigest():
        raise ToolchainError(
            f"the Rust channel manifest {url} does not match its published SHA-256 ({url}.sha256)",
            "The manifest or its checksum was altered on the way; check the mirror, or re-run the job.",
        )
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise ToolchainError(f"the Rust channel manifest {url} is not TOML", "Check the mirror.") from None


def _rust_artifact(target: dict[str, object], sources: Sources, component: str) -> Artifact:
    """A component's archive on our base: the manifest's `xz_url` must be on the publisher's dist
    host (and is then re-rooted on the mirror, when there is one); `xz_hash` is its SHA-256."""
    url, digest = str(target.get("xz_url", "")), str(target.get("xz_hash", "")).lower()
    rest = url.removeprefix(RUST_DIST)
    if rest == url or not _RUST_PATH.match(rest) or not _HEX64.match(digest):
        raise ToolchainError(
            f"the Rust channel manifest gives {component} an unexpected URL or hash",
            "Components come only from static.rust-lang.org/dist/; check the mirror.",
        )
    name = rest.split("/", 1)[1]
    return Artifact(f"{sources.rust}{rest}", digest, name.removesuffix(".tar.xz"))
