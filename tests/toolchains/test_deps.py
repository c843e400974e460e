"""Dependencies installed as CI installs them: the command follows the lockfile present, and runs in
the sandbox as its uid (install scripts are the repository's code)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_autofix.ladder.workarea import sandbox_ids
from ci_autofix.sandbox import Sandbox, chown_tree
from ci_autofix.toolchains.declared import PackageManager
from ci_autofix.toolchains.deps import Install, commands, install
from ci_autofix.toolchains.provision import provision
from tests.testing.toolchain_mirror import MirrorServer

BERRY_LOCK = '__metadata:\n  version: 8\n  cacheKey: 10\n\n"x@workspace:.":\n  version: 0.0.0-use.local\n'


@pytest.mark.parametrize(
    ("files", "package_manager", "argv"),
    [
        ({"package-lock.json": "{}"}, None, ("npm", "ci")),
        ({"npm-shrinkwrap.json": "{}"}, None, ("npm", "ci")),
        (
            {"pnpm-lock.yaml": "lockfileVersion: '9.0'\n"},
            None,
            ("corepack", "pnpm", "install", "--frozen-lockfile"),
        ),
        ({"yarn.lock": BERRY_LOCK}, None, ("corepack", "yarn", "install", "--immutable")),
        (
            {"yarn.lock": "# yarn lockfile v1\n", ".yarnrc.yml": ""},
            None,
            ("corepack", "yarn", "install", "--immutable"),
        ),
        ({"yarn.lock": "# yarn lockfile v1\n"}, None, ("corepack", "yarn", "install", "--frozen-lockfile")),
        (
            {"yarn.lock": BERRY_LOCK},
            PackageManager("yarn", "1.22.22"),
            ("corepack", "yarn", "install", "--frozen-lockfile"),
        ),
        (
            {"yarn.lock": "# yarn lockfile v1\n"},
            PackageManager("yarn", "4.1.0"),
            ("corepack", "yarn", "install", "--immutable"),
        ),
    ],
)
def test_the_node_command_follows_the_lockfile(
    tmp_path: Path, files: dict[str, str], package_manager: PackageManager | None, argv: tuple[str, ...]
) -> None:
    for name, content in {"package.json": "{}", **files}.items():
        (tmp_path / name).write_text(content)
    (node,) = commands(tmp_path, package_manager)
    assert node.argv == argv and node.runtime == "node"


def test_no_lockfile_no_node_install(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    assert commands(tmp_path) == []


def test_go_and_rust(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module x\n")
    (tmp_path / "Cargo.toml").write_text("[package]\n")
    assert commands(tmp_path) == [
        Install("go", ("go", "mod", "download"), "go.mod"),
        Install("rust", ("cargo", "fetch"), "Cargo.toml"),
    ]
    (tmp_path / "Cargo.lock").write_text("version = 3\n")
    assert commands(tmp_path)[1].argv == ("cargo", "fetch", "--locked")


def test_a_lockfile_that_is_a_link_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    (tmp_path / "package-lock.json").symlink_to("/etc/hostname")
    assert commands(tmp_path) == []


@pytest.fixture
def ids() -> Iterator[tuple[int, int]]:
    with sandbox_ids() as reserved:
        if reserved is None:
            pytest.skip("running commands as another uid needs root")
        yield reserved


@pytest.mark.slow
def test_npm_ci_runs_the_install_scripts_as_the_sandbox_uid(
    mirror: MirrorServer, open_tmp: Path, ids: tuple[int, int]
) -> None:
    root = open_tmp / "repo"
    root.mkdir()
    script = "node -e \"require('fs').writeFileSync('installed-by', String(process.getuid()))\""
    package = {"name": "x", "version": "1.0.0", "scripts": {"postinstall": script}}
    lock = {"name": "x", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
            "packages": {"": {"name": "x", "version": "1.0.0"}}}  # fmt: skip
    (root / "package.json").write_text(json.dumps(package))
    (root / "package-lock.json").write_text(json.dumps(lock))
    (root / ".nvmrc").write_text("20\n")
    (root / "go.mod").write_text("module example.com/x\n\ngo 1.19\n")
    provisioned = provision(root, {}, dest=open_tmp / "toolchains", mirror=mirror.url)
    assert provisioned.failures == ()
    home = open_tmp / "home"
    home.mkdir()
    for top in (root, home):
        chown_tree(top, *ids)
    env = provisioned.environment(home, "/usr/bin:/bin")
    sandbox = Sandbox(root, user=ids[0], group=ids[1], home=home, extra_env=env, timeout=300)
    steps = commands(root)
    assert [s.argv for s in steps] == [("npm", "ci"), ("go", "mod", "download")]
    results = install(sandbox, steps)
    assert [r.ok for r in results] == [True, True], [r.output for r in results]
    assert (root / "installed-by").read_text() == str(ids[0])


def test_install_stops_at_the_first_failure(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path, timeout=30)
    steps = [Install("node", ("false",), "x"), Install("go", ("true",), "y")]
    results = install(sandbox, steps)
    assert [r.exit_code for r in results] == [1]


def test_the_jobs_env_reaches_the_install_but_not_over_the_sandboxs_own(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path, timeout=30, extra_env={"GOTOOLCHAIN": "local"})
    show = Install("go", ("sh", "-c", 'echo "$GOFLAGS $GOTOOLCHAIN"'), "go.mod")
    (result,) = install(sandbox, [show], job_env={"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "go1.99.0"})
    assert result.output.strip() == "-mod=mod local"
