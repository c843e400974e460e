"""The hook the ladder calls: the failed job's runtimes installed in the work area, first on the PATH
of the work area's sandboxes (the working copy's and each clean copy's), as the sandbox's uid."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from testing.git import init_repo
from testing.toolchain_mirror import MirrorServer, available, build

from ci_autofix.ladder.runtimes import TOOLCHAINS, provision_for, with_runtimes
from ci_autofix.ladder.workarea import workarea
from ci_autofix.toolchains.sources import MIRROR_SETTING

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        available() is not None, reason=f"the toolchain mirror cannot be built: {available()}"
    ),
]

JOB = yaml.safe_load(
    """
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with: {go-version-file: go.mod}
      - run: gofmt -l .
    """
)


def test_the_jobs_go_is_first_on_the_path_of_every_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = build()
    files = {"go.mod": "module example.com/x\n\ngo 1.19\n", "main.go": "package main\nfunc main(){}\n"}
    head = init_repo(tmp_path / "repo", files)
    with MirrorServer(built.tree).running() as mirror, workarea(tmp_path / "repo", head) as area:
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)  # our own setting, as the Action's environment has it
        provisioned = provision_for(area, JOB)
        (go,) = provisioned.runtimes
        assert go.installed.home.parent == area.base / TOOLCHAINS
        assert go.declared.source == "go.mod go (named by `actions/setup-go@v5`)"
        working = with_runtimes(area.sandbox(protected=(), timeout=60), provisioned)
        clean = with_runtimes(area.clean_copy(head, protected=(), timeout=60), provisioned)
        for sandbox in (working, clean):
            version = sandbox.run(["go", "version"])
            assert version.ok and f"go{built.go}" in version.output, version.output
            gofmt = sandbox.run(["gofmt", "-l", "."])
            assert gofmt.ok and gofmt.output.strip() == "main.go"
            home = sandbox.env()["HOME"]
            assert sandbox.env()["GOCACHE"] == f"{home}/.cache/go-build" and sandbox.env()["GOROOT"] == str(
                go.installed.home
            )
            if os.geteuid() == 0:
                assert sandbox.user is not None and sandbox.user != 0
                assert not sandbox.run(["touch", str(go.bin / "planted")]).ok
        assert working.env()["HOME"] != clean.env()["HOME"]


def test_nothing_declared_leaves_the_sandbox_as_it_was(tmp_path: Path) -> None:
    head = init_repo(tmp_path / "repo", {"README.md": "hi\n"})
    with workarea(tmp_path / "repo", head) as area:
        provisioned = provision_for(area, {"steps": [{"run": "make"}]}, mirror="http://127.0.0.1:9/")
        sandbox = area.sandbox(protected=(), timeout=60)
        assert provisioned.runtimes == () and with_runtimes(sandbox, provisioned) is sandbox
