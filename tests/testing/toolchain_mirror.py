"""A toolchain mirror on 127.0.0.1 serving real runtimes in their publishers' real formats.

The archives are built from what this machine has installed, laid out as the publishers lay them:

- Node: the machine's `node` (an official build: `node --version`) with its npm and corepack, as
  `node/vX/node-vX-linux-x64.tar.xz` (`node-vX-linux-x64/bin/node`, `bin/npm -> ../lib/...`) with
  `node/vX/SHASUMS256.txt` and `node/index.json` in nodejs.org's formats;
- Go: Debian's `golang-go` (`bin/go`, `bin/gofmt`, `VERSION`, the tools `go build` and `go test` run
  from `pkg/tool/linux_amd64`, `pkg/include` and the standard library's sources without its tests, so
  `go test` compiles as with go.dev's archive) as `go/goX.linux-amd64.tar.gz`, listed with its SHA-256
  and size in `go/index.json` (go.dev/dl's `?mode=json&include=all` format);
- Rust: the rustup toolchain's files, repacked as rust-installer dist components (`components`,
  `<component>/manifest.in`), and the toolchain's own channel manifest (the publisher's, as rustup
  kept it) with the x86_64 Linux `xz_hash` of the five components we serve replaced by theirs, and
  its `.sha256` beside it.

The index files also list releases whose archives are not served (to test resolution). Building
takes about 25 s of CPU (xz on rustc's 350 MB of shared libraries, most of it), so it is done once per
test session: the first xdist worker that needs the tree builds it in the session's temp dir while the
others wait, then all share it. A `MirrorServer` serves the tree, with per-test `override`s
(tampering), and records every path asked for.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.testing.serving import serving

NODE = Path("/usr/bin/node")
NODE_MODULES = Path("/usr/lib/node_modules")
GOROOT = Path("/usr/lib/go-1.19")
RUST = Path.home() / ".rustup" / "toolchains" / "stable-x86_64-unknown-linux-gnu"
RUST_TARGET = "x86_64-unknown-linux-gnu"
_BUILDER = "8"  # bump when the layout below changes


@dataclass(frozen=True)
class Built:
    tree: Path
    node: str  # 20.20.2
    go: str  # 1.19.8
    rust: str  # 1.95.0


def available() -> str | None:
    """Why the mirror cannot be built here, or None."""
    for path in (NODE, GOROOT / "bin" / "go", RUST / "bin" / "cargo"):
        if not path.exists():
            return f"{path} is not installed"
    return None


def _key() -> str:
    parts = [_BUILDER]
    for path in (NODE, GOROOT / "bin" / "go", RUST / "bin" / "cargo", RUST / "lib" / "rustlib" / "multirust-channel-manifest.toml"):  # fmt: skip
        st = path.stat()
        parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def session_root(factory: pytest.TempPathFactory) -> Path:
    """The test session's own temp directory, shared by its xdist workers (pytest's `pytest-N/`)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build(root: Path) -> Built:
    """The mirror tree under `root` (the session's temp directory, see `session_root`), built by the
    first worker that needs it while the others wait on a lock, then shared."""
    tree = root / f"toolchain-mirror-{_key()}"
    versions = tree / "versions.json"
    with (root / "toolchain-mirror.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not versions.is_file():
            staging = Path(tempfile.mkdtemp(prefix="toolchain-mirror-build-", dir=root))
            try:
                found = {"node": _node(staging), "go": _go(staging), "rust": _rust(staging)}
                (staging / "versions.json").write_text(json.dumps(found))
                staging.rename(tree)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    found = json.loads(versions.read_text())
    return Built(tree, found["node"], found["go"], found["rust"])


def _tar(path: Path, entries: list[tuple[str, Path | bytes | str]], *, mode: str) -> str:
    """A tar archive of `entries` (archive name → file, bytes, or `str` for a symlink target); its SHA-256."""
    with contextlib.ExitStack() as stack:
        if mode == "xz":
            compressed = stack.enter_context(lzma.open(path, "wb", preset=0))
            tar = stack.enter_context(tarfile.open(fileobj=compressed, mode="w|"))
        else:
            tar = stack.enter_context(tarfile.open(path, "w:gz", compresslevel=1))
        for name, source in entries:
            info = tarfile.TarInfo(name)
            info.uid = info.gid = 1001  # as the publishers' tarballs: someone else's uid
            info.mtime = 1_700_000_000
            if isinstance(source, str):
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, source, 0o777
                tar.addfile(info)
            elif isinstance(source, bytes):
                info.size, info.mode = len(source), 0o644
                tar.addfile(info, io.BytesIO(source))
            elif source.is_dir():
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = source.stat().st_size, source.stat().st_mode & 0o777
                with source.open("rb") as data:
                    tar.addfile(info, data)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tree(source: Path, prefix: str) -> list[tuple[str, Path | bytes | str]]:
    entries: list[tuple[str, Path | bytes | str]] = [(prefix, source)]
    for directory, dirs, files in os.walk(source):
        dirs.sort()
        for name in (*sorted(dirs), *sorted(files)):
            path = Path(directory, name)
            rel = f"{prefix}/{path.relative_to(source).as_posix()}"
            entries.append((rel, os.readlink(path) if path.is_symlink() else path))
    return entries


def _node(out: Path) -> str:
    version = subprocess.run(
        [str(NODE), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    top = f"node-{version}-linux-x64"
    (out / "node" / version).mkdir(parents=True)
    entries: list[tuple[str, Path | bytes | str]] = [
        (top, NODE.parent),
        (f"{top}/bin", NODE.parent),
        (f"{top}/bin/node", NODE),
        (f"{top}/bin/npm", "../lib/node_modules/npm/bin/npm-cli.js"),
        (f"{top}/bin/npx", "../lib/node_modules/npm/bin/npx-cli.js"),
        (f"{top}/bin/corepack", "../lib/node_modules/corepack/dist/corepack.js"),
        (f"{top}/lib", NODE_MODULES),
        *_tree(NODE_MODULES, f"{top}/lib/node_modules"),
    ]
    digest = _tar(out / "node" / version / f"{top}.tar.xz", entries, mode="xz")
    others = "\n".join(
        f"{hashlib.sha256(name.encode()).hexdigest()}  {name}"
        for name in (
            f"node-{version}-darwin-arm64.tar.gz",
            f"node-{version}-linux-arm64.tar.xz",
            f"node-{version}.tar.gz",
        )
    )
    (out / "node" / version / "SHASUMS256.txt").write_text(f"{others}\n{digest}  {top}.tar.xz\n")
    files = ["linux-arm64", "linux-x64", "osx-arm64-tar", "src", "win-x64-zip"]
    listed = [
        ("v22.12.0", "Jod"), ("v21.7.3", False), (version, "Iron"), ("v20.19.0", "Iron"), ("v18.20.4", "Hydrogen"),
        ("v0.12.18", False),
    ]  # fmt: skip
    index = [
        {"version": v, "date": "2024-01-01", "files": files if v != "v0.12.18" else ["linux-x86", "src"],
         "npm": "10.0.0", "v8": "11.3", "uv": "1.46", "zlib": "1.3", "openssl": "3.0", "modules": "115",
         "lts": lts, "security": False}
        for v, lts in listed
    ]  # fmt: skip
    (out / "node" / "index.json").write_text(json.dumps(index, indent=1))
    for v, _ in listed:  # every release has its checksum file, as on nodejs.org
        if v != version:
            (out / "node" / v).mkdir()
            name = f"node-{v}-linux-x64.tar.xz"
            (out / "node" / v / "SHASUMS256.txt").write_text(
                f"{hashlib.sha256(v.encode()).hexdigest()}  {name}\n"
            )
    return version.removeprefix("v")


# What `go build` and `go test` run from pkg/tool (go.dev's archive has a few more: pprof, trace, ...).
_GO_TOOLS = ("asm", "buildid", "cgo", "compile", "cover", "link", "pack", "test2json", "vet")


def _go_sources(src: Path) -> list[tuple[str, Path | bytes | str]]:
    """The standard library's sources as `go/src/...`, without `cmd` (its tools come built), tests and
    test data: what compiling a module's packages and their tests reads (~50 MB instead of 120)."""
    return [
        (name, path)
        for name, path in _tree(src, "go/src")
        if not (
            name.startswith("go/src/cmd/")
            or name == "go/src/cmd"
            or "/testdata" in name
            or name.endswith("_test.go")
        )
    ]


def _go(out: Path) -> str:
    version = (GOROOT / "VERSION").read_text().split()[0]  # go1.19.8
    name = f"{version}.linux-amd64.tar.gz"
    (out / "go").mkdir()
    entries: list[tuple[str, Path | bytes | str]] = [
        ("go", GOROOT),
        ("go/VERSION", GOROOT / "VERSION"),
        ("go/bin", GOROOT / "bin"),
        ("go/bin/go", GOROOT / "bin" / "go"),
        ("go/bin/gofmt", GOROOT / "bin" / "gofmt"),
        ("go/pkg", GOROOT / "pkg"),
        ("go/pkg/tool", GOROOT / "pkg" / "tool"),
        ("go/pkg/tool/linux_amd64", GOROOT / "pkg" / "tool" / "linux_amd64"),
        *(
            (f"go/pkg/tool/linux_amd64/{tool}", GOROOT / "pkg" / "tool" / "linux_amd64" / tool)
            for tool in _GO_TOOLS
        ),
        *_tree((GOROOT / "pkg" / "include").resolve(), "go/pkg/include"),
        *_go_sources((GOROOT / "src").resolve()),
    ]
    digest = _tar(out / "go" / name, entries, mode="gz")
    size = (out / "go" / name).stat().st_size

    def release(v: str, stable: bool, sha: str | None = None, size: int = 70_000_000) -> dict[str, object]:
        files = [
            {"filename": f"{v}.src.tar.gz", "os": "", "arch": "", "version": v, "kind": "source",
             "sha256": hashlib.sha256(f"{v}src".encode()).hexdigest(), "size": 26_000_000},
            {"filename": f"{v}.linux-amd64.tar.gz", "os": "linux", "arch": "amd64", "version": v,
             "kind": "archive", "sha256": sha or hashlib.sha256(v.encode()).hexdigest(), "size": size},
            {"filename": f"{v}.linux-arm64.tar.gz", "os": "linux", "arch": "arm64", "version": v,
             "kind": "archive", "sha256": hashlib.sha256(f"{v}arm".encode()).hexdigest(), "size": size},
        ]  # fmt: skip
        return {"version": v, "stable": stable, "files": files}

    index = [
        release("go1.23rc1", False),
        release("go1.22.5", True),
        release("go1.21.0", True),
        release("go1.20", True),
        release(version, True, digest, size),
        release("go1.19.5", True),
    ]
    (out / "go" / "index.json").write_text(json.dumps(index, indent=1))
    return version.removeprefix("go")


# The components we serve, and the files of each we pack (the toolchain's own manifests list them all;
# most of rust-std is left out to keep the archives small; rustc's shared libraries (350 MB) are in, as
# `rustc -vV` (which cargo runs first) and rustfmt load them).
_RUST_COMPONENTS = {
    "rustc": ("rustc", lambda rel: rel == "bin/rustc" or (rel.startswith("lib/lib") and ".so" in rel)),
    "cargo": ("cargo", lambda rel: True),
    "rust-std": (f"rust-std-{RUST_TARGET}", lambda rel: rel.endswith(".rmeta") and "/libcore-" in rel),
    "rustfmt-preview": ("rustfmt-preview", lambda rel: True),
    "clippy-preview": ("clippy-preview", lambda rel: rel == "bin/cargo-clippy"),
}


def _rust(out: Path) -> str:
    rustlib = RUST / "lib" / "rustlib"
    manifest = (rustlib / "multirust-channel-manifest.toml").read_text()
    dist = out / "rust" / "dist"
    version = ""
    for package, (component, keep) in _RUST_COMPONENTS.items():
        block = re.search(
            rf"^\[pkg\.{re.escape(package)}\.target\.{RUST_TARGET}\]\n(?:.+\n)*?xz_url = \"(?P<url>[^\"]+)\"\nxz_hash = \"(?P<hash>[0-9a-f]{{64}})\"",
            manifest,
            re.M,
        )
        assert block, package
        url, real_hash = block["url"], block["hash"]
        path = url.removeprefix("https://static.rust-lang.org/dist/")
        top = path.rsplit("/", 1)[1].removesuffix(".tar.xz")
        version = version or re.findall(r"-(\d+\.\d+\.\d+)-", top)[0]  # rustc-1.95.0-x86_64-unknown-linux-gnu
        files = [
            line.removeprefix("file:")
            for line in (rustlib / f"manifest-{package}-{RUST_TARGET}").read_text().splitlines()
            if line.startswith("file:") and keep(line.removeprefix("file:"))
        ]
        entries: list[tuple[str, Path | bytes | str]] = [
            (f"{top}/components", f"{component}\n".encode()),
            (f"{top}/rust-installer-version", b"3\n"),
            (f"{top}/{component}/manifest.in", "".join(f"file:{rel}\n" for rel in files).encode()),
        ]
        entries += [(f"{top}/{component}/{rel}", RUST / rel) for rel in files]
        (dist / path).parent.mkdir(parents=True, exist_ok=True)
        digest = _tar(dist / path, entries, mode="xz")
        manifest = manifest.replace(real_hash, digest)
    for channel in ("stable", version, version.rsplit(".", 1)[0]):
        name = f"channel-rust-{channel}.toml"
        (dist / name).write_text(manifest)
        (dist / f"{name}.sha256").write_text(f"{hashlib.sha256(manifest.encode()).hexdigest()}  {name}\n")
    return version


@dataclass
class MirrorServer:
    """Serves `tree` on 127.0.0.1; `overrides` (path → bytes) take precedence; `asked` lists every
    path requested, in order."""

    tree: Path
    overrides: dict[str, bytes] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    url: str = ""

    @contextlib.contextmanager
    def running(self) -> Iterator[MirrorServer]:
        with serving(_handler(self)) as server:
            self.url = f"http://127.0.0.1:{server.server_address[1]}/"
            yield self

    def override(self, path: str, content: bytes) -> None:
        self.overrides[path] = content

    def read(self, path: str) -> bytes:
        return self.overrides.get(path) or (self.tree / path).read_bytes()


def _handler(mirror: MirrorServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            mirror.asked.append(self.path)
            path = self.path.split("?", 1)[0].lstrip("/")
            file = (mirror.tree / path).resolve()
            if path in mirror.overrides:
                body = mirror.overrides[path]
            elif mirror.tree.resolve() in file.parents and file.is_file():
                body = file.read_bytes()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler
