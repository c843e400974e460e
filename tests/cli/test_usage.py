"""The command line's own errors: an unknown flag of a command prints that command's usage, as
`--help` would show it, through the real entrypoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_mistakes import ci_autofix


@pytest.mark.parametrize("command", ["fix", "triage", "check-diff", "demo"])
def test_an_unknown_flag_prints_the_commands_usage(tmp_path: Path, command: str) -> None:
    result = ci_autofix(command, "--no-such-flag", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"usage: ci-autofix {command} "), result.stderr
    assert f"ci-autofix {command}: error: unrecognized arguments: --no-such-flag" in result.stderr
