"""The repository's runtimes (Node, Go, Rust) on the PATH of the commands we and the agent run.

The smallest hook between `toolchains` and the ladder: `provision_for` installs what the failed job
(its parsed workflow mapping) and the work area's copy of the checkout declare, into the work
area's `toolchains/` (ours, read-only to the sandbox's uid), from the publishers or ci-autofix's own
`CI_AUTOFIX_TOOLCHAIN_MIRROR`; `with_runtimes` gives a sandbox those runtimes first on its PATH and
their variables, with their caches in that sandbox's own HOME (each clean copy has a fresh one, so
it is applied to each). Call it before any repository code runs: the version files are its text.
`install_dependencies` then installs what the checkout's lockfiles name for the provisioned
runtimes (`npm ci`, `go mod download`, `cargo fetch`), in that sandbox, as its uid.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path

from ci_autofix.ladder.evidence import Evidence
from ci_autofix.ladder.workarea import Workarea
from ci_autofix.sandbox import Sandbox
from ci_autofix.toolchains import deps
from ci_autofix.toolchains.declared import declared
from ci_autofix.toolchains.provision import Provisioned, provision
from ci_autofix.toolchains.sources import mirror_setting

TOOLCHAINS = "toolchains"  # under the work area's base


def provision_for(
    area: Workarea,
    job: Mapping[str, object],
    *,
    matrix: Mapping[str, object] | None = None,
    mirror: str | None = None,
) -> Provisioned:
    """The runtimes `job` and the work area's checkout declare, installed under the work area.
    `mirror` defaults to ci-autofix's own setting (our environment, never the repository's)."""
    return provision(
        area.work,
        job,
        dest=area.base / TOOLCHAINS,
        mirror=mirror if mirror is not None else mirror_setting(),
        matrix=matrix,
    )


def with_runtimes(sandbox: Sandbox, provisioned: Provisioned) -> Sandbox:
    """`sandbox` with the provisioned runtimes first on its commands' PATH, and their variables."""
    if not provisioned.runtimes:
        return sandbox
    env = sandbox.env()
    added = provisioned.environment(Path(env["HOME"]), env.get("PATH", os.defpath))
    return dataclasses.replace(sandbox, extra_env={**sandbox.extra_env, **added})


def install_dependencies(
    sandbox: Sandbox, provisioned: Provisioned, job: Mapping[str, object], *, timeout: float
) -> Evidence | None:
    """Install the checkout's dependencies for the provisioned runtimes, as the job's CI does; the
    install that failed (its evidence), or None when every one passed or there was none."""
    if not provisioned.runtimes:
        return None
    package_manager = declared(sandbox.root, {}).package_manager
    installs = [i for i in deps.commands(sandbox.root, package_manager) if provisioned.get(i.runtime)]
    for step, result in zip(
        installs, deps.install(sandbox, installs, job_env=job_env(job), timeout=timeout), strict=False
    ):
        if not result.ok:
            return Evidence.of(" ".join(step.argv), result)
    return None


def job_env(job: Mapping[str, object]) -> dict[str, str]:
    """The job's literal `env:` (values without an expression), as its steps run with it."""
    env = job.get("env")
    if not isinstance(env, dict):
        return {}
    return {
        str(k): str(v)
        for k, v in env.items()
        if isinstance(v, str | int)
        and not isinstance(v, bool)
        and "${{" not in str(v)
        and str(k).isidentifier()
    }
