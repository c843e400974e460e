"""An old release of a tool is installed with what its era needs, so it runs as it ran in CI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ci_autofix.fixers.install import Installed, Installer, era_needs
from ci_autofix.workflow.versions import Requirement

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
