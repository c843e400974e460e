from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.fixers.commands import read_commands
from ci_autofix.fixers.config import read_repo_config
from ci_autofix.tooling.tools import action_package, scan_workflow

CI = """\
name: CI
on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install "black[jupyter]==24.2.0" isort  # isort unpinned
      - run: |
          uvx ruff@0.8.6 format --check .
          echo "ruff==9.9.9 is only text here"
      - name: Black
        uses: psf/black@stable
        with:
          options: "--check --verbose"
          version: "~= 24.0"
      - uses: isort/isort-action@v1
        with:
          isort-version: 5.13.2
      - name: after
        with:
          version: 1.2.3
"""


def test_scan_workflow_reads_installs_and_action_inputs() -> None:
    found = [(t.package, t.requirement.spec if t.requirement else None) for t in scan_workflow("ci.yml", CI)]
    assert found == [
        ("black", "==24.2.0"),
        ("ruff", "==0.8.6"),
        ("black", None),
        ("black", "~=24.0"),
        ("isort", None),
        ("isort", "==5.13.2"),
    ]


def test_workflow_pins_configure_the_tool_and_come_first(tmp_path: Path) -> None:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(CI)
    (tmp_path / "requirements-dev.txt").write_text("black==24.1.0\n")
    config = read_repo_config(tmp_path)
    black = config.pin("black", runs_pre_commit=False)
    assert black is not None and (black.requirement.spec, black.source) == (
        "==24.2.0",
        ".github/workflows/ci.yml",
    )
    assert config.evidence["ruff"] == [".github/workflows/ci.yml (installs ruff==0.8.6)"]
    assert config.evidence["isort"] == [
        ".github/workflows/ci.yml (uses its action)",
        ".github/workflows/ci.yml (installs isort==5.13.2)",
    ]


@pytest.mark.parametrize(
    ("command", "package"),
    [
        ("psf/black@stable", "black"),
        ("astral-sh/ruff-action@v3", "ruff"),
        ("isort/isort-action@v1.1.0", "isort"),
        ("actions/checkout@v4", None),
        ("pip install git+https://github.com/psf/black@main", None),
    ],
)
def test_action_steps_are_read_as_the_tool(command: str, package: str | None) -> None:
    assert action_package(command) == package
    facts = read_commands([command])
    assert [i.fixer.package for i in facts.invocations if i.checking] == ([package] if package else [])
