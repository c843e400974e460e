"""Pinned versions are installed from the package index and used; each install happens once a session."""

from __future__ import annotations

import http.server
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from ci_autofix.fixers import plan_fixers, run_fixers
from ci_autofix.fixers.install import Installed, Installer, Unavailable, _pip_env, default, era_needs
from ci_autofix.sandbox import Sandbox
from ci_autofix.tooling.versions import Requirement
from tests.testing.fixer_projects import BIN, Project, own_version
from tests.testing.serving import serving

OLD_RUFF = "0.8.6"
# ruff 0.9 (the 2025 style) joins implicitly concatenated strings that fit on one line; 0.8 keeps them.
SOURCE = 'GREETING = "hello, " "world"\n\n\ndef f(a,):\n    return a\n'
FIXED_BY_OLD = 'GREETING = "hello, " "world"\n\n\ndef f(\n    a,\n):\n    return a\n'
FIXED_BY_NEW = 'GREETING = "hello, world"\n\n\ndef f(\n    a,\n):\n    return a\n'


def _broken_project(project: Project, requirements: str) -> None:
    project.write("pyproject.toml", '[project]\nname = "demo"\n\n[tool.ruff]\n')
    project.write("requirements-dev.txt", requirements)
    project.write("demo.py", SOURCE)
    project.commit()


@pytest.mark.slow
def test_the_pinned_ruff_is_installed_once_and_makes_its_own_diff(
    project: Project, tmp_path: Path, tools_dir: Path
) -> None:
    _broken_project(project, f"ruff=={OLD_RUFF}\n")
    plan = plan_fixers(
        project.root, project.diagnose("ruff format --check ."), ["auto"], ["ruff format --check ."]
    )
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tools_dir, timeout=300)
    assert run.skipped_reason is None, run.skipped_reason
    assert (run.version, run.pin_source) == (OLD_RUFF, "requirements-dev.txt")
    assert run.argv[:2] == [str(tools_dir / f"ruff-{OLD_RUFF}" / "bin" / "ruff"), "format"]
    assert project.read("demo.py") == FIXED_BY_OLD

    # the image's ruff would have made another diff: the reason to honour the pin
    assert own_version("ruff") != OLD_RUFF
    other = tmp_path / "other"
    other.mkdir()
    (other / "demo.py").write_text(SOURCE)
    import subprocess

    subprocess.run(
        [str(BIN / "ruff"), "format", "--no-cache", "demo.py"], cwd=other, check=True, capture_output=True
    )
    assert (other / "demo.py").read_text() == FIXED_BY_NEW

    # a second repository pinning the same version reuses the installation
    ready = tools_dir / f"ruff-{OLD_RUFF}" / ".ci-autofix-ready"
    stamp = ready.stat().st_mtime_ns, ready.stat().st_ino
    second = Project(tmp_path / "second")
    second.root.mkdir()
    second.git("init", "-q")
    _broken_project(second, f"ruff == {OLD_RUFF}  # keep in step with pre-commit\n")
    [again] = run_fixers(Sandbox(second.root), plan, tools_dir=tools_dir, timeout=300)
    assert (again.version, again.argv[0], again.changed_files) == (OLD_RUFF, run.argv[0], ["demo.py"])
    assert (ready.stat().st_mtime_ns, ready.stat().st_ino) == stamp


@pytest.mark.slow
def test_a_pin_that_cannot_be_installed_skips_the_fixer_with_the_reason(
    project: Project, tools_dir: Path
) -> None:
    _broken_project(project, "ruff==0.0.0.1\n")
    plan = plan_fixers(
        project.root, project.diagnose("ruff format --check ."), ["auto"], ["ruff format --check ."]
    )
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tools_dir, timeout=300)
    assert (run.name, run.version, run.argv, run.exit_code, run.changed_files) == (
        "ruff-format",
        "0.0.0.1",
        [],
        None,
        [],
    )
    assert run.skipped_reason is not None
    assert run.skipped_reason.startswith("installing ruff==0.0.0.1 failed (exit code 1)")
    assert "ruff==0.0.0.1" in run.skipped_reason.split(":", 1)[1]  # pip's own words follow
    assert not (tools_dir / "ruff-0.0.0.1").exists()
    assert project.read("demo.py") == SOURCE


def test_a_range_the_image_satisfies_uses_the_image(project: Project, tools_dir: Path) -> None:
    major, minor = own_version("ruff").split(".")[:2]
    _broken_project(project, f"ruff>={major}.{minor},<{int(major) + 1}\n")
    plan = plan_fixers(
        project.root, project.diagnose("ruff format --check ."), ["auto"], ["ruff format --check ."]
    )
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tools_dir, timeout=60)
    assert (run.argv[0], run.version) == (str(BIN / "ruff"), own_version("ruff"))
    assert project.read("demo.py") == FIXED_BY_NEW


def test_an_unwritable_tools_dir_skips_the_fixer(project: Project, tmp_path: Path) -> None:
    _broken_project(project, f"ruff=={OLD_RUFF}\n")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the tools directory should be\n")
    plan = plan_fixers(
        project.root, project.diagnose("ruff format --check ."), ["auto"], ["ruff format --check ."]
    )
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=blocked / "tools", timeout=60)
    assert (run.version, run.argv, run.changed_files) == (OLD_RUFF, [], [])
    assert run.skipped_reason == f"preparing ruff failed: Not a directory ({blocked / 'tools'})"
    assert project.read("demo.py") == SOURCE


def test_without_a_pin_the_tools_dir_is_not_needed(project: Project, tmp_path: Path) -> None:
    _broken_project(project, "ruff\n")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the tools directory should be\n")
    plan = plan_fixers(
        project.root, project.diagnose("ruff format --check ."), ["auto"], ["ruff format --check ."]
    )
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=blocked / "tools", timeout=60)
    assert (run.version, run.changed_files, run.skipped_reason) == (own_version("ruff"), ["demo.py"], None)


@pytest.mark.slow
def test_without_pip_in_our_interpreter_the_environment_brings_its_own(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    assert (
        subprocess.run([bare / "bin" / "python", "-m", "pip", "--version"], capture_output=True).returncode
        != 0
    )
    toolbox = Installer(tmp_path / "tools", timeout=300, python=bare / "bin" / "python")
    tool = toolbox.tool("ruff", Requirement(f"=={OLD_RUFF}"))
    assert tool == Installed(
        tmp_path / "tools" / f"ruff-{OLD_RUFF}" / "bin" / "ruff", OLD_RUFF, installed=True
    )
    assert (
        tmp_path / "tools" / f"ruff-{OLD_RUFF}" / "bin" / "pip"
    ).is_file()  # ensurepip's, used for the install


class _Index(http.server.BaseHTTPRequestHandler):
    """A package index that knows no files and remembers who asked for what."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def do_GET(self) -> None:
        type(self).seen.append((self.path, self.headers.get("Authorization", "")))
        body = b"<!DOCTYPE html><html><body></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index() -> Iterator[str]:
    with serving(_Index) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}"


@pytest.mark.slow
def test_pip_uses_the_configured_index_without_our_tokens(
    project: Project, tmp_path: Path, index: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", index.replace("http://", "http://reader:index-password@") + "/simple")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_" + "x" * 36)
    _broken_project(project, "ruff==0.0.0.2\n")
    plan = plan_fixers(
        project.root, project.diagnose("ruff format --check ."), ["auto"], ["ruff format --check ."]
    )
    _Index.seen.clear()
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tmp_path / "tools", timeout=120)
    assert run.skipped_reason is not None and run.skipped_reason.startswith("installing ruff==0.0.0.2 failed")
    assert "index-password" not in run.skipped_reason
    paths = [path for path, _ in _Index.seen]
    assert "/simple/ruff/" in paths  # the index from the environment was asked
    own_credentials = "Basic cmVhZGVyOmluZGV4LXBhc3N3b3Jk"  # reader:index-password
    assert {auth for _, auth in _Index.seen} <= {"", own_credentials}
    env = _pip_env()
    assert "GITHUB_TOKEN" not in env
    assert env["PIP_INDEX_URL"].endswith("@127.0.0.1:" + index.rsplit(":", 1)[1] + "/simple")


# ---- the default versions: installed from their hash-pinned requirements (the image ships no tool) ----


def _no_own_tools(tools_dir: Path, **kwargs: Path) -> Installer:
    """An Installer that finds no tool already installed, as in the image."""
    return Installer(tools_dir, timeout=300, search=[], **kwargs)


@pytest.mark.slow
def test_without_a_pin_or_an_installed_tool_the_default_is_installed_from_its_hashes(tmp_path: Path) -> None:
    locked = default("isort")
    assert locked is not None and locked.version == own_version("isort")  # the dev extra pins the same
    tool = _no_own_tools(tmp_path / "tools").tool("isort", None)
    assert isinstance(tool, Installed), tool
    assert (tool.executable, tool.version, tool.installed) == (
        tmp_path / "tools" / f"isort-{locked.version}" / "bin" / "isort",
        locked.version,
        True,
    )
    # a repository that pins exactly the default gets the same hash-checked installation
    again = _no_own_tools(tmp_path / "tools").tool("isort", Requirement(f"=={locked.version}"))
    assert isinstance(again, Installed) and again.executable == tool.executable


@pytest.mark.slow
def test_a_default_whose_files_do_not_match_their_hashes_is_refused(tmp_path: Path) -> None:
    locked = default("isort")
    assert locked is not None
    forged = tmp_path / "defaults"
    forged.mkdir()
    text = locked.requirements.read_text()
    (forged / "isort.txt").write_text(re.sub(r"sha256:[0-9a-f]{64}", "sha256:" + "0" * 64, text))
    tool = _no_own_tools(tmp_path / "tools", defaults=forged).tool("isort", None)
    assert isinstance(tool, Unavailable)
    assert tool.reason.startswith(f"installing isort=={locked.version} failed (exit code 1)")
    assert (
        "Expected" in tool.reason and "| Got" in tool.reason
    )  # pip's own words: the hash it wanted, the one it got
    assert not (tmp_path / "tools" / f"isort-{locked.version}").exists()


def test_without_an_installed_tool_or_a_default_the_fixer_is_unavailable(tmp_path: Path) -> None:
    tool = _no_own_tools(tmp_path / "tools", defaults=tmp_path / "none").tool("isort", None)
    assert tool == Unavailable(
        None, "isort is not installed in the action's environment and has no default version"
    )
    assert not (tmp_path / "tools").exists()


def test_every_fixer_has_a_default_and_the_dev_extra_pins_the_same_version() -> None:
    for package in ("ruff", "black", "isort"):
        locked = default(package)
        assert locked is not None, package
        assert locked.version == own_version(package), package
        pins = [line for line in locked.requirements.read_text().splitlines() if "==" in line]
        assert pins and all(line.endswith(" \\") for line in pins)  # every pin is followed by its hashes


# black 22.1.0 (as poetry.lock pinned it in rich and isort in 2022) imports click's `_unicodefun`,
# which click 8.1 removed: with today's click, `black --version` itself fails.
OLD_BLACK = "22.1.0"


def test_black_before_22_3_needs_a_click_before_8_1() -> None:
    assert era_needs("black", "22.1.0") == ("click<8.1",)
    assert era_needs("black", "19.10b0") == ("click<8.1",)
    assert era_needs("black", "22.3.0") == ()
    assert era_needs("black", "24.1.1") == ()
    assert era_needs("black", None) == ()
    assert era_needs("ruff", "0.0.290") == ()


@pytest.mark.slow
def test_an_old_black_is_installed_with_its_era_click_and_formats(tools_dir: Path, tmp_path: Path) -> None:
    tool = Installer(tools_dir, timeout=300, search=[]).tool("black", Requirement(f"=={OLD_BLACK}"))
    assert isinstance(tool, Installed), tool
    assert (tool.version, tool.installed) == (OLD_BLACK, True)
    source = tmp_path / "demo.py"
    source.write_text("x = {  'a':37,'b':42}\n")
    subprocess.run([str(tool.executable), "--quiet", str(source)], check=True, capture_output=True)
    assert source.read_text() == 'x = {"a": 37, "b": 42}\n'
