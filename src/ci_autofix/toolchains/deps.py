"""The repository's dependencies, installed the way its CI installs them, by the lockfile present.

`npm ci` (package-lock.json, npm-shrinkwrap.json), `pnpm install --frozen-lockfile` (pnpm-lock.yaml)
and `yarn install --immutable` (yarn.lock; `--frozen-lockfile` for yarn 1), pnpm and yarn run
through corepack at the version `packageManager` names; `go mod download` (go.mod); `cargo fetch`
(Cargo.toml; `--locked` with a Cargo.lock). Install scripts are the repository's code: `install`
runs the commands through the `Sandbox`, as its uid, with the job's `env:` under the sandbox's own
variables (the provisioned PATH and the runtimes' settings).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_autofix import shell
from ci_autofix.sandbox import Sandbox
from ci_autofix.toolchains.declared import PackageManager


@dataclass(frozen=True)
class Install:
    """One install command and the file that chose it."""

    runtime: str
    argv: tuple[str, ...]
    because: str


def commands(root: Path, package_manager: PackageManager | None = None) -> list[Install]:
    """The install commands for the checkout at `root`, in the order CI would run them."""
    found: list[Install] = []
    if _file(root, "package.json"):
        node = _node(root, package_manager)
        if node is not None:
            found.append(node)
    if _file(root, "go.mod"):
        found.append(Install("go", ("go", "mod", "download"), "go.mod"))
    if _file(root, "Cargo.toml"):
        locked = _file(root, "Cargo.lock")
        argv = ("cargo", "fetch", "--locked") if locked else ("cargo", "fetch")
        found.append(Install("rust", argv, "Cargo.lock" if locked else "Cargo.toml"))
    return found


def _node(root: Path, package_manager: PackageManager | None) -> Install | None:
    for lockfile in ("package-lock.json", "npm-shrinkwrap.json"):
        if _file(root, lockfile):
            return Install("node", ("npm", "ci"), lockfile)
    if _file(root, "pnpm-lock.yaml"):
        return Install("node", ("corepack", "pnpm", "install", "--frozen-lockfile"), "pnpm-lock.yaml")
    if _file(root, "yarn.lock"):
        classic = (
            package_manager.version.startswith("1.")
            if package_manager is not None and package_manager.name == "yarn"
            else not _file(root, ".yarnrc.yml") and not _berry_lock(root)
        )
        flag = "--frozen-lockfile" if classic else "--immutable"
        return Install("node", ("corepack", "yarn", "install", flag), "yarn.lock")
    return None


def _berry_lock(root: Path) -> bool:
    """yarn 2+ writes a `__metadata:` block into yarn.lock; yarn 1 does not."""
    try:
        head = (root / "yarn.lock").read_bytes()[:4096].decode("utf-8", "replace")
    except OSError:
        return False
    return re.search(r"^__metadata:", head, re.M) is not None


def _file(root: Path, name: str) -> bool:
    path = root / name
    return path.is_file() and not path.is_symlink()


def install(
    sandbox: Sandbox,
    installs: Sequence[Install],
    *,
    job_env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> list[shell.Completed]:
    """Run `installs` in `sandbox` in order, stopping at the first that fails; what each did.

    `job_env` is the job's literal `env:` (as CI runs its steps with it); the sandbox's own variables
    (the provisioned PATH, GOROOT, GOTOOLCHAIN, the caches) come after it and win."""
    if job_env:
        sandbox = dataclasses.replace(sandbox, extra_env={**job_env, **sandbox.extra_env})
    done: list[shell.Completed] = []
    for step in installs:
        result = sandbox.run(list(step.argv), timeout=timeout)
        done.append(result)
        if not result.ok:
            break
    return done
