"""Provisioning end to end against the mirror of real archives: each runtime installs and runs as the
sandbox's uid, which cannot change it; what was declared resolves as declared; nothing the
repository writes picks a URL or a file; the summary says what came from where, and keeps every
text that is not ours inside code (rendered by GitHub's own renderer)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import cmarkgfm
import pytest
import yaml
from cmarkgfm.cmark import Options as CmarkOptions

from ci_autofix.ladder.workarea import sandbox_ids
from ci_autofix.sandbox import Sandbox, chown_tree
from ci_autofix.toolchains.declared import Declared
from ci_autofix.toolchains.errors import ToolchainError
from ci_autofix.toolchains.install import Installed
from ci_autofix.toolchains.provision import Provisioned, Runtime, Unprovisioned, provision
from tests.testing.toolchain_mirror import Built, MirrorServer


@pytest.fixture
def ids() -> Iterator[tuple[int, int]]:
    with sandbox_ids() as reserved:
        if reserved is None:
            pytest.skip("running commands as another uid needs root")
        yield reserved


def _repo(base: Path, files: dict[str, str]) -> Path:
    root = base / "repo"
    root.mkdir()
    for name, content in files.items():
        (root / name).write_text(content)
    return root


def _sandbox(base: Path, root: Path, ids: tuple[int, int], provisioned: Provisioned) -> Sandbox:
    home = base / "home"
    home.mkdir()
    for top in (root, home):
        chown_tree(top, *ids)
    env = provisioned.environment(home, "/usr/bin:/bin")
    return Sandbox(root, user=ids[0], group=ids[1], home=home, extra_env=env, timeout=120)


def _cannot_change(sandbox: Sandbox, installed: Path) -> None:
    """The sandbox's uid can neither add to nor remove from the installation."""
    victim = next(p for p in (installed / "bin").iterdir() if p.is_file() and not p.is_symlink())
    for argv in (
        ["touch", str(installed / "bin" / "planted")],
        ["rm", "-f", str(victim)],
        ["chmod", "777", str(installed)],
    ):
        assert not sandbox.run(argv).ok, argv
    assert not (installed / "bin" / "planted").exists() and victim.exists()
    for path in [installed, *installed.rglob("*")]:
        st = path.lstat()
        assert st.st_uid == os.geteuid(), path
        assert stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o022, path  # a link's own mode means nothing


@pytest.mark.slow
def test_node_from_the_step_range_runs_as_the_sandbox_uid(
    mirror: MirrorServer, built: Built, open_tmp: Path, ids: tuple[int, int]
) -> None:
    root = _repo(open_tmp, {".nvmrc": "18\n", "package.json": "{}"})
    job = yaml.safe_load("steps: [{uses: actions/setup-node@v4, with: {node-version: '^20.1'}}]")
    provisioned = provision(root, job, dest=open_tmp / "toolchains", mirror=mirror.url)
    assert provisioned.failures == ()
    (node,) = provisioned.runtimes
    assert (node.installed.version, node.declared.spec, node.note) == (built.node, "^20.1", None)
    sandbox = _sandbox(open_tmp, root, ids, provisioned)
    ran = sandbox.run(["node", "--version"])
    assert ran.ok and ran.output.strip() == f"v{built.node}"
    npm = sandbox.run(["npm", "--version"])  # npm is a link into lib/node_modules, as in nodejs.org's tarball
    assert npm.ok, npm.output
    assert sandbox.run(["node", "-p", "process.execPath"]).output.strip() == str(node.bin / "node")
    _cannot_change(sandbox, node.installed.home)


@pytest.mark.slow
def test_go_from_go_mod_runs_as_the_sandbox_uid(
    mirror: MirrorServer, built: Built, open_tmp: Path, ids: tuple[int, int]
) -> None:
    root = _repo(
        open_tmp, {"go.mod": "module example.com/x\n\ngo 1.19\n", "main.go": "package main\nfunc main(){}\n"}
    )
    provisioned = provision(root, {"steps": []}, dest=open_tmp / "toolchains", mirror=mirror.url)
    (go,) = provisioned.runtimes
    assert (go.installed.version, go.declared.source) == (built.go, "go.mod go")
    sandbox = _sandbox(open_tmp, root, ids, provisioned)
    ran = sandbox.run(["go", "version"])
    assert ran.ok and f"go{built.go} linux/amd64" in ran.output
    assert sandbox.run(["go", "env", "GOROOT"]).output.strip() == str(go.installed.home)
    # go 1.21+ reads it (go 1.19 does not know it yet): never fetch the toolchain go.mod names
    assert sandbox.run(["sh", "-c", 'echo "$GOTOOLCHAIN"']).output.strip() == "local"
    gofmt = sandbox.run(["gofmt", "-l", "."])
    assert gofmt.ok and gofmt.output.strip() == "main.go"
    _cannot_change(sandbox, go.installed.home)


@pytest.mark.slow
def test_rust_from_the_toolchain_file_runs_as_the_sandbox_uid(
    mirror: MirrorServer, built: Built, open_tmp: Path, ids: tuple[int, int]
) -> None:
    root = _repo(
        open_tmp,
        {
            "rust-toolchain.toml": f'[toolchain]\nchannel = "{built.rust}"\n',
            "Cargo.toml": "[package]\nname = 'x'\n",
        },
    )
    job = yaml.safe_load("steps: [{uses: dtolnay/rust-toolchain@stable}]")
    provisioned = provision(root, job, dest=open_tmp / "toolchains", mirror=mirror.url)
    (rust,) = provisioned.runtimes
    assert (rust.installed.version, rust.declared.source) == (built.rust, "rust-toolchain.toml channel")
    home = rust.installed.home
    for name in ("cargo", "rustc", "rustfmt", "cargo-fmt", "cargo-clippy"):
        assert (home / "bin" / name).is_file(), name
    assert list((home / "lib" / "rustlib" / "x86_64-unknown-linux-gnu" / "lib").glob("libcore-*.rmeta"))
    assert not (home / "manifest.in").exists() and not (home / "components").exists()
    sandbox = _sandbox(open_tmp, root, ids, provisioned)
    ran = sandbox.run(["cargo", "--version"])
    assert ran.ok and ran.output.startswith(f"cargo {built.rust.rsplit('.', 1)[0]}"), ran.output
    assert sandbox.run(["sh", "-c", 'echo "$CARGO_HOME"']).output.strip() == str(open_tmp / "home" / ".cargo")
    _cannot_change(sandbox, home)


@pytest.mark.slow
def test_versions_that_cannot_be_had_fall_back_to_the_nearest_and_say_so(
    mirror: MirrorServer, built: Built, open_tmp: Path
) -> None:
    root = _repo(
        open_tmp,
        {".nvmrc": "20.99.0\n", "go.mod": "module x\n\ngo 1.19.99\n", "rust-toolchain": "1.96.0\n"},
    )
    provisioned = provision(root, {}, dest=open_tmp / "toolchains", mirror=mirror.url)
    assert [(r.declared.runtime, r.installed.version) for r in provisioned.runtimes] == [
        ("node", built.node),
        ("go", built.go),
        ("rust", built.rust),
    ]
    summary = provisioned.to_markdown()
    assert f"`20.99.0 cannot be had (no such release); using the nearest, {built.node}`" in summary
    assert f"`1.19.99 cannot be had (no such release); using the nearest, {built.go}`" in summary
    assert "`Rust 1.96.0 cannot be had (no channel manifest is published); using stable`" in summary
    assert f"| Node.js | {built.node} | `20.99.0` | `.nvmrc` | `{mirror.url}node/v{built.node}/" in summary
    again = provision(root, {}, dest=open_tmp / "toolchains", mirror=mirror.url)
    assert all(r.installed.cached for r in again.runtimes)
    assert "(already installed)" in again.to_markdown()


@pytest.mark.slow
def test_nothing_the_repository_writes_picks_a_url_or_a_file(
    mirror: MirrorServer, built: Built, open_tmp: Path
) -> None:
    with MirrorServer(open_tmp / "empty").running() as attacker:
        (open_tmp / "outside").mkdir()
        (open_tmp / "outside" / ".nvmrc").write_text("21\n")  # a real version, in a file outside the checkout
        root = _repo(
            open_tmp,
            {
                ".nvmrc": f"{attacker.url}node/v99.0.0/node-v99.0.0-linux-x64.tar.xz\n",
                "package.json": f'{{"engines": {{"node": "{attacker.url}"}}, "packageManager": "pnpm@{attacker.url}"}}',
                "go.mod": f"module x\n\ngo 1.19\n\ntoolchain {attacker.url}go.tgz\n",
                "rust-toolchain.toml": f'[toolchain]\nchannel = "{attacker.url}rust"\n',
                ".tool-versions": f"nodejs {attacker.url}\n",
            },
        )
        job = yaml.safe_load(
            f"""
            env: {{CI_AUTOFIX_TOOLCHAIN_MIRROR: '{attacker.url}'}}
            steps:
              - uses: actions/setup-node@v4
                env: {{CI_AUTOFIX_TOOLCHAIN_MIRROR: '{attacker.url}'}}
                with: {{node-version-file: ../outside/.nvmrc, node-version: '{attacker.url}'}}
              - uses: actions/setup-go@v5
                with: {{go-version: '{attacker.url}go1.22.0.linux-amd64.tar.gz'}}
            """
        )
        provisioned = provision(root, job, dest=open_tmp / "toolchains", mirror=mirror.url)
    assert attacker.asked == []
    assert all(path.startswith(("/node/", "/go/", "/rust/")) for path in mirror.asked)
    assert [(r.declared.runtime, r.declared.spec) for r in provisioned.runtimes] == [("go", "1.19")]
    # every Node declaration was refused, so package.json's default: the mirror's newest LTS, whose
    # archive the mirror does not serve (a failure, on the mirror, not the attacker's host)
    (failure,) = provisioned.failures
    assert (failure.declared.spec, failure.declared.source) == (
        "lts/*",
        "nothing declared (package.json): the default",
    )
    assert failure.error.cause.startswith(f"{mirror.url}node/v22.12.0/")
    assert all(r.declared.runtime != "rust" for r in provisioned.runtimes)  # the channel was refused
    go = provisioned.get("go")
    assert go is not None and go.declared.source == "go.mod go"  # not go.mod's `toolchain <url>` line
    assert any(
        note.startswith("rust-toolchain.toml channel is not a rust version") for note in provisioned.notes
    )
    assert any(
        "`../outside/.nvmrc` is not a path inside the repository" in note for note in provisioned.notes
    )
    text = provisioned.to_markdown()
    assert attacker.url not in text


@pytest.mark.slow
def test_the_summary_names_source_checksum_and_time(
    mirror: MirrorServer, built: Built, open_tmp: Path
) -> None:
    root = _repo(open_tmp, {"go.mod": "module x\n\ngo 1.19\n"})
    provisioned = provision(root, {}, dest=open_tmp / "toolchains", mirror=mirror.url)
    (go,) = provisioned.runtimes
    row = next(line for line in provisioned.to_markdown().splitlines() if line.startswith("| Go |"))
    assert f"`{mirror.url}go/go{built.go}.linux-amd64.tar.gz`" in row
    assert f"`{go.installed.sha256[0][:16]}`" in row
    assert row.endswith(f"| {go.seconds:.1f} |")
    assert stat.S_IMODE((open_tmp / "toolchains").stat().st_mode) == 0o755


HOSTILE = "<img src=x onerror=alert(1)> [click](https://evil.example) @admin | ``` `"


def _html(text: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(text, options=CmarkOptions.CMARK_OPT_UNSAFE)


def test_hostile_text_in_a_failure_or_note_stays_code() -> None:
    node = Installed(
        "node", "20.20.2", Path("/opt/tc/node"), ("https://nodejs.org/dist/v20.20.2/node-v20.20.2-linux-x64.tar.xz",),
        ("ab" * 32,), cached=False,
    )  # fmt: skip
    report = Provisioned(
        runtimes=(Runtime(Declared("node", "20", ".nvmrc"), node, 1.5, note=f"nearest {HOSTILE}"),),
        failures=(
            Unprovisioned(
                Declared("go", "1.22", "go.mod go"), ToolchainError(f"download failed: {HOSTILE}", HOSTILE)
            ),
        ),
        notes=(HOSTILE,),
    )
    markdown = report.to_markdown()
    html = _html(markdown)
    assert "<img" not in html and "<a " not in html and "href" not in html
    assert (
        html.count("<table>") == 1 and html.count("<tr>") == 2
    )  # the header and Node's row: no cell broke out
    assert "| Node.js | 20.20.2 | `20` | `.nvmrc` |" in markdown and "| 1.5 |" in markdown


def test_nothing_to_report_is_empty() -> None:
    assert Provisioned().to_markdown() == ""
