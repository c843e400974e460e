"""Diffs read exactly as git wrote them (odd paths, prefixes, renames), secrets split across literals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ci_autofix.policy import Verdict, check_diff
from ci_autofix.policy.diff import parse
from tests.testing.git import git
from tests.testing.policy_kinds import Case, check_case, params

TEST_BODY = "from app import run\n\n\ndef test_run():\n    assert run() == 0\n"
TOKEN_HEAD, TOKEN_TAIL = "ghp_", "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ODD_PATHS = [
    "tests/my tests/test_calc.py",
    "tests/a b/test_x.py",
    'tests/test_"quoted".py',
    "tests/test_tab\there.py",
    "tests/test_ünïcode b/test_y.py",
    "tests/x -> y/test_z.py",
]

CASES = [
    *[
        Case(f"delete-{i}", {p: TEST_BODY}, {p: None}, "blocked", "test-file-deleted")
        for i, p in enumerate(ODD_PATHS)
    ],
    *[
        Case(
            f"modify-{i}",
            {p: TEST_BODY},
            {p: TEST_BODY + "\n\ndef test_more():\n    assert run() is not None\n"},
            "clean",
        )
        for i, p in enumerate(ODD_PATHS)
    ],
    Case(
        "rename-away-100",
        {"tests/test_app.py": TEST_BODY},
        {"tests/test_app.py": None, "tests/app_cases.py": TEST_BODY},
        "blocked",
        "test-file-renamed-away",
    ),
    Case(
        "rename-away-spaces",
        {"tests/a b/test_app.py": TEST_BODY},
        {"tests/a b/test_app.py": None, "tests/a b/app.py": TEST_BODY},
        "blocked",
        "test-file-renamed-away",
    ),
    Case(
        "rename-within-spaces",
        {"tests/a b/test_app.py": TEST_BODY},
        {"tests/a b/test_app.py": None, "tests/a c/test_app.py": TEST_BODY},
        "clean",
    ),
    # ---- secrets split across literals ---------------------------------------------------------------
    Case(
        "py-concat",
        {"src/config.py": "X = 1\n"},
        {"src/config.py": f'X = 1\nT = "{TOKEN_HEAD}" + "{TOKEN_TAIL}"\n'},
        "blocked",
        "secret-added",
    ),
    Case(
        "py-implicit",
        {"src/config.py": "X = 1\n"},
        {
            "src/config.py": f'X = 1\nT = (\n    "{TOKEN_HEAD}"\n    "{TOKEN_TAIL[:18]}"\n    "{TOKEN_TAIL[18:]}"\n)\n'
        },
        "blocked",
        "secret-added",
    ),
    Case(
        "js-concat",
        {"src/config.js": "const x = 1;\n"},
        {"src/config.js": f"const x = 1;\nconst t = '{TOKEN_HEAD}' +\n  '{TOKEN_TAIL}';\n"},
        "blocked",
        "secret-added",
    ),
    Case(
        "join-list",
        {"src/config.py": "X = 1\n"},
        {
            "src/config.py": f'X = 1\nT = "".join(["{TOKEN_HEAD}", "{TOKEN_TAIL[:10]}", "{TOKEN_TAIL[10:]}"])\n'
        },
        "blocked",
        "secret-added",
    ),
    Case(
        "concat-with-variable",
        {"src/config.py": "X = 1\n"},
        {"src/config.py": f'import os\n\nX = 1\nT = "{TOKEN_HEAD}" + os.environ["TAIL"]\n'},
        "clean",
    ),
    Case(
        "concat-of-words",
        {"src/config.py": "X = 1\n"},
        {"src/config.py": 'X = 1\nT = "hello, " + "world"\n'},
        "clean",
    ),
]


@pytest.mark.parametrize(("case", "mode"), params(CASES))
def test_diff_kinds(check_in: Callable[..., Verdict], case: Case, mode: str) -> None:
    check_case(check_in, case, mode)


@pytest.mark.parametrize(
    "options",
    [
        ["--no-prefix"],
        ["--src-prefix=c/", "--dst-prefix=w/"],
        ["-c", "core.quotePath=true"],
        ["--no-prefix", "-c", "core.quotePath=true"],
    ],
    ids=["no-prefix", "mnemonic", "quoted", "no-prefix-quoted"],
)
@pytest.mark.parametrize("path", [*ODD_PATHS[:5], "a/test_a.py", "b/test_b.py"])
def test_deleting_a_test_file_is_seen_in_any_prefix_or_quoting(
    repo: Any, options: list[str], path: str
) -> None:
    base = repo.commit({path: TEST_BODY})
    head = repo.commit({path: None})
    config = [o for o in options if o.startswith("core.")]
    flags = [o for o in options if o.startswith("--")]
    diff = git(
        repo.root,
        *(["-c", *config] if config else []),
        "diff",
        "-M",
        "--full-index",
        *flags,
        base,
        head,
        strip=False,
    )
    verdict = check_diff(diff)
    assert [(f.code, f.path) for f in verdict.findings] == [("test-file-deleted", path)], diff


def test_a_renamed_file_is_a_deletion_and_an_addition(repo: Any) -> None:
    base = repo.commit({"tests/a b/test_x.py": TEST_BODY})
    head = repo.commit({"tests/a b/test_x.py": None, "tests/a b/helpers.py": TEST_BODY})
    (file,) = parse(repo.git.diff(base, head))
    assert (file.old_path, file.path, file.status) == (
        "tests/a b/test_x.py",
        "tests/a b/helpers.py",
        "renamed",
    )


HEADER_PIECES = [
    "diff --git a/x b/x",
    'diff --git "a/x\\ty" "b/x\\ty"',
    "diff --git a/a b/c b/a b/c",
    "diff --git x y",
    'diff --git "a/x',
    "rename from ",
    "rename to ",
    "rename from x",
    "copy from ",
    "copy to y",
    "new file mode 100644",
    "deleted file mode 100644",
    "old mode 100644",
    "new mode 100755",
    "index 0000000..e69de29",
    "index e69de29..0000000 100644",
    "index zz..yy",
    "similarity index 100%",
    "Binary files a/x and b/x differ",
    "--- a/x",
    "--- /dev/null",
    '--- "a/q\\"x"',
    "+++ b/x",
    "+++ /dev/null",
    "@@ -1 +1 @@",
    "@@ -0,0 +1,2 @@",
    "-old",
    "+new",
    " same",
    "\\ No newline at end of file",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(HEADER_PIECES), min_size=1, max_size=12))
def test_any_arrangement_of_git_header_lines_gives_a_verdict(pieces: list[str]) -> None:
    verdict = check_diff("\n".join(pieces) + "\n")
    assert verdict.status in ("clean", "flagged", "blocked")
    for read in (None, lambda oid: None, lambda oid: "x = 1\n"):
        assert check_diff("\n".join(pieces) + "\n", read_blob=read).status in ("clean", "flagged", "blocked")
