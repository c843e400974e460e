"""`python -m ci_autofix.cli.check_diff` (the `check-diff` command) on real diffs, files and stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.testing.git import commit, init, run

SKIPPED = "import pytest\n\n\n@pytest.mark.skip\ndef test_a():\n    assert 1 == 1\n"
PLAIN = "import pytest\n\n\ndef test_a():\n    assert 1 == 1\n"

# Our own entrypoint in a subprocess, as a user runs it: an end-to-end test of the command.
pytestmark = pytest.mark.e2e


def check_diff(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ci_autofix.cli.check_diff", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        check=False,
    )


def test_clean_diff_from_stdin_exits_0(diff_of: Callable[..., str]) -> None:
    diff = diff_of(
        {"tests/test_a.py": PLAIN}, {"tests/test_a.py": PLAIN + "\n\ndef test_b():\n    assert 2\n"}
    )
    result = check_diff("-", stdin=diff.encode())
    assert (result.returncode, result.stdout.strip()) == (0, "patch policy: clean (0 blocking, 0 flagged)")


def test_flagged_diff_exits_1(diff_of: Callable[..., str], tmp_path: Path) -> None:
    diff = diff_of({"tests/test_a.py": PLAIN}, {"tests/test_a.py": PLAIN.replace("1 == 1", "1 == 2")})
    (tmp_path / "fix.diff").write_text(diff)
    result = check_diff(str(tmp_path / "fix.diff"), "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["status"] == "flagged"
    assert report["findings"] == [
        {
            "code": "expected-value-changed",
            "severity": "flag",
            "path": "tests/test_a.py",
            "line": 5,
            "message": report["findings"][0]["message"],
        }
    ]


def test_blocked_diff_exits_2_and_names_the_rule(diff_of: Callable[..., str]) -> None:
    diff = diff_of({"tests/test_a.py": PLAIN}, {"tests/test_a.py": SKIPPED})
    result = check_diff(stdin=diff.encode())
    assert result.returncode == 2
    assert "BLOCK skip-marker-added" in result.stdout
    assert "tests/test_a.py:4" in result.stdout


def test_protected_and_limits_options(diff_of: Callable[..., str]) -> None:
    diff = diff_of({"infra/main.tf": "a\n", "b.txt": "a\n"}, {"infra/main.tf": "b\n", "b.txt": "b\n"})
    assert check_diff(stdin=diff.encode()).returncode == 0
    blocked = check_diff("--protected", "infra/**", "--format", "json", stdin=diff.encode())
    assert (blocked.returncode, json.loads(blocked.stdout)["codes"]) == (2, ["protected-path"])
    too_many = check_diff(
        "--max-files", "1", "--max-changed-lines", "3", "--format", "json", stdin=diff.encode()
    )
    assert json.loads(too_many.stdout)["codes"] == ["too-many-changed-lines", "too-many-files"]


def test_github_style_diff_without_full_index(repo: object, tmp_path: Path) -> None:
    """GitHub's `.diff` is plain `git diff` output: short index lines, a/ b/ prefixes."""
    root = tmp_path / "gh"
    root.mkdir()
    init(root)
    commit(root, {"app.test.js": 'it("works", () => {\n  expect(1).toBe(1);\n});\n'}, "a")
    (root / "app.test.js").write_text('it.only("works", () => {\n  expect(1).toBe(1);\n});\n')
    diff = run(root, "diff").stdout
    assert b"index " in diff and b"--full-index" not in diff
    result = check_diff("--format", "json", stdin=diff)
    assert (result.returncode, json.loads(result.stdout)["codes"]) == (2, ["only-marker-added"])


def test_markdown_format(diff_of: Callable[..., str]) -> None:
    diff = diff_of({"tests/test_a.py": PLAIN}, {"tests/test_a.py": SKIPPED})
    result = check_diff("--format", "markdown", stdin=diff.encode())
    assert result.stdout.startswith("**Patch policy: blocked.**")
    assert "| ⛔ block | `skip-marker-added` | `tests/test_a.py:4` |" in result.stdout


def test_unparseable_input_is_blocked_not_an_error() -> None:
    result = check_diff(stdin=b"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-only one line\n")
    assert result.returncode == 2
    assert "unparseable-diff" in result.stdout


def test_text_that_is_no_diff_is_blocked() -> None:
    assert check_diff(stdin=b"hello, this is not a diff\n").returncode == 2


def test_empty_diff_is_no_input_not_clean() -> None:
    result = check_diff(stdin=b"")
    assert result.returncode == 3
    assert "is empty" in result.stderr and result.stdout == ""


def test_missing_file_exits_3_with_cause_and_remedy(tmp_path: Path) -> None:
    result = check_diff(str(tmp_path / "nope.diff"))
    assert result.returncode == 3
    assert "Cannot read the diff" in result.stderr and "What to do:" in result.stderr
    assert result.stdout == ""


def test_bad_option_is_an_argparse_usage_error() -> None:
    result = check_diff("--max-files", "0", stdin=b"")
    assert result.returncode == 2
    assert "usage:" in result.stderr


def test_invalid_utf8_and_crlf_diff_is_read_as_bytes(tmp_path: Path) -> None:
    diff = b"diff --git a/t.txt b/t.txt\r\n--- a/t.txt\r\n+++ b/t.txt\r\n@@ -1 +1 @@\r\n-caf\xe9\r\n+caf\xc3\xa9\r\n"
    (tmp_path / "x.diff").write_bytes(diff)
    result = check_diff(str(tmp_path / "x.diff"), "--format", "json")
    assert (result.returncode, json.loads(result.stdout)["status"]) == (0, "clean")


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_every_format_prints_something_for_a_clean_diff(fmt: str) -> None:
    clean = b"diff --git a/t.txt b/t.txt\n--- a/t.txt\n+++ b/t.txt\n@@ -1 +1 @@\n-a\n+b\n"
    result = check_diff("--format", fmt, stdin=clean)
    assert result.returncode == 0 and result.stdout.strip()
