"""The agent's tools on a real checkout: the text editor, search, list_files, run, finish, and their schemas."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import pytest
from jsonschema import Draft202012Validator

from ci_autofix.agent.editor import TextEditor
from ci_autofix.agent.failure import ToolFailure
from ci_autofix.agent.tools import Toolbox, tool
from ci_autofix.sandbox import Sandbox
from tests.testing.agent_samples import quick_command

EDITOR = "str_replace_based_edit_tool"


def toolbox(sandbox: Sandbox, *, allow_shell: bool = False, commands: tuple[str, ...] = ()) -> Toolbox:
    return Toolbox(
        sandbox,
        allowed_commands=list(commands) or [quick_command()],
        allow_shell=allow_shell,
        command_timeout=30,
        secrets=["s3cr3t-value-xyz"],
    )


# ---- schema from signature and docstring -------------------------------------------------------------------
def sample(
    name: str,
    count: int,
    mode: Literal["a", "b"] = "a",
    tags: list[str] | None = None,
    ratio: float = 1.0,
    loud: bool = False,
) -> str:
    """Do the sample thing.

    Args:
        name: Who to greet,
            over two lines.
        count: How many times.
        mode: Which mode.
    """
    return f"{name}:{count}:{mode}:{tags}:{ratio}:{loud}"


def test_schema_is_derived_from_the_signature_and_docstring() -> None:
    derived = tool(sample)
    assert derived.description == "Do the sample thing."
    assert derived.input_schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Who to greet, over two lines."},
            "count": {"type": "integer", "description": "How many times."},
            "mode": {"type": "string", "enum": ["a", "b"], "default": "a", "description": "Which mode."},
            "tags": {"type": "array", "items": {"type": "string"}},  # `X | None`: an optional X
            "ratio": {"type": "number", "default": 1.0},
            "loud": {"type": "boolean", "default": False},
        },
        "required": ["name", "count"],
        "additionalProperties": False,
    }
    Draft202012Validator.check_schema(derived.input_schema)
    assert derived({"name": "x", "count": 2, "tags": ["t"], "ratio": 2}) == "x:2:a:['t']:2.0:False"


def test_an_optional_parameter_may_be_omitted_or_null() -> None:
    derived = tool(sample)
    assert derived({"name": "x", "count": 1}) == "x:1:a:None:1.0:False"
    assert (
        derived({"name": "x", "count": 1, "tags": None, "ratio": None, "mode": None})
        == "x:1:a:None:1.0:False"
    )


def test_only_derived_titles_are_left_out_of_the_schema() -> None:
    def titled(title: str) -> str:
        """Set the title."""
        return title

    assert tool(titled).input_schema == {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"count": 1}, "missing required parameter(s): name"),
        ({"name": "x", "count": "1"}, "`count` must be an integer, got str"),
        ({"name": "x", "count": 1.5}, "`count` must be an integer, got float"),
        ({"name": "x", "count": True}, "`count` must be an integer, got bool"),
        ({"name": "x", "count": 1, "ratio": True}, "`ratio` must be a number, got bool"),
        ({"name": "x", "count": 1, "loud": "yes"}, "`loud` must be a boolean, got str"),
        ({"name": "x", "count": 1, "mode": "c"}, "`mode` must be one of a, b"),
        ({"name": "x", "count": 1, "tags": "t"}, "`tags` must be an array, got str"),
        (
            {"name": "x", "count": 1, "tags": ["t", 1, 2]},
            "`tags` items must be a string, got int (`tags[1]`)",
        ),
        (
            {"name": "x", "count": 1, "extra": 1},
            "unknown parameter(s) extra; the parameters are: name, count, mode",
        ),
        (["name"], "must be a JSON object"),
    ],
)
def test_malformed_input_is_a_tool_failure(arguments: object, problem: str) -> None:
    derived = tool(sample)
    with pytest.raises(ToolFailure) as caught:
        derived(arguments)  # type: ignore[arg-type]
    assert problem in str(caught.value)
    # what the validation refuses, the schema the model reads refuses too
    assert not Draft202012Validator(derived.input_schema).is_valid(arguments)


def test_every_problem_is_named_at_once_one_per_parameter() -> None:
    with pytest.raises(ToolFailure) as caught:
        tool(sample)({"nme": "x", "count": "2", "tags": [1, 2]})
    assert str(caught.value).splitlines() == [
        "unknown parameter(s) nme; the parameters are: name, count, mode, tags, ratio, loud",
        "missing required parameter(s): name",
        "parameter `count` must be an integer, got str",
        "parameter `tags` items must be a string, got int (`tags[0]`)",
    ]


def test_the_toolbox_definitions_are_stable_and_small(sandbox: Sandbox) -> None:
    first, second = toolbox(sandbox).definitions(), toolbox(sandbox).definitions()
    assert first == second
    assert [t["name"] for t in first] == [EDITOR, "search", "list_files", "run", "finish"]
    assert first[0] == {"type": "text_editor_20250728", "name": EDITOR, "max_characters": 20000}
    assert quick_command() in first[3]["description"]


# ---- text editor ---------------------------------------------------------------------------------------------
def test_view_file_with_numbers_and_ranges(sandbox: Sandbox) -> None:
    editor = TextEditor(sandbox)
    assert editor({"command": "view", "path": "calc.py"}).splitlines()[0] == "1: def add(a, b):"
    assert editor({"command": "view", "path": "calc.py", "view_range": [3, 3]}) == "3:     return a - b"
    assert editor({"command": "view", "path": "calc.py", "view_range": [6, -1]}).splitlines() == [
        "6: def mul(a, b):",
        "7:     return a * b",
    ]
    with pytest.raises(ToolFailure, match="outside the file, which has 7 lines"):
        editor({"command": "view", "path": "calc.py", "view_range": [9, 10]})


def test_view_directory_lists_two_levels_without_ignored_files(sandbox: Sandbox) -> None:
    listing = TextEditor(sandbox)({"command": "view", "path": "."})
    assert "calc.py" in listing and "tests/test_calc.py" in listing and ".github/workflows/" in listing
    assert "build" not in listing and ".git/" not in listing


def test_str_replace_needs_exactly_one_match(broken_repo: Path, sandbox: Sandbox) -> None:
    editor = TextEditor(sandbox)
    with pytest.raises(ToolFailure, match=r"occurs 2 times in calc.py \(lines 1, 6\)"):
        editor({"command": "str_replace", "path": "calc.py", "old_str": "(a, b):", "new_str": "(x, y):"})
    out = editor({"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"})
    assert "3:     return a + b" in out
    assert "return a + b" in (broken_repo / "calc.py").read_text()
    assert editor.changed == {"calc.py"}


def test_str_replace_miss_shows_the_nearest_text_and_whitespace_hint(sandbox: Sandbox) -> None:
    editor = TextEditor(sandbox)
    with pytest.raises(ToolFailure) as caught:
        editor(
            {
                "command": "str_replace",
                "path": "calc.py",
                "old_str": "def mul(a, b):\n  return a * b",
                "new_str": "x",
            }
        )
    text = str(caught.value)
    assert "nothing was changed" in text and "differs only in whitespace" in text
    assert "6: def mul(a, b):\n7:     return a * b" in text
    with pytest.raises(ToolFailure, match="No similar text"):
        editor({"command": "str_replace", "path": "calc.py", "old_str": "zzzz qqqq wwww", "new_str": "x"})


def test_insert_and_create(broken_repo: Path, sandbox: Sandbox) -> None:
    editor = TextEditor(sandbox)
    editor({"command": "insert", "path": "calc.py", "insert_line": 0, "new_str": "# header"})
    assert (broken_repo / "calc.py").read_text().startswith("# header\ndef add")
    editor({"command": "insert", "path": "calc.py", "insert_line": 8, "new_str": "# end\n"})
    assert (broken_repo / "calc.py").read_text().endswith("    return a * b\n# end\n")
    with pytest.raises(ToolFailure, match=r"outside calc\.py, which has 9 lines"):
        editor({"command": "insert", "path": "calc.py", "insert_line": 99, "new_str": "x"})
    editor({"command": "create", "path": "pkg/new.py", "file_text": "X = 1\n"})
    assert (broken_repo / "pkg" / "new.py").read_text() == "X = 1\n"
    with pytest.raises(ToolFailure, match="already exists"):
        editor({"command": "create", "path": "calc.py", "file_text": ""})


def test_editor_respects_the_sandbox(broken_repo: Path, sandbox: Sandbox) -> None:
    editor = TextEditor(sandbox)
    (broken_repo / "pw").symlink_to("/etc/passwd")
    refusals = [
        ({"command": "view", "path": "/etc/passwd"}, "outside the repository"),
        ({"command": "view", "path": "pw"}, "outside the repository"),
        ({"command": "view", "path": "../x"}, "outside the repository"),
        ({"command": "view", "path": ".git/config"}, "off limits"),
        ({"command": "create", "path": ".git/hooks/pre-commit", "file_text": "x"}, "off limits"),
        (
            {"command": "str_replace", "path": ".github/workflows/ci.yml", "old_str": "push", "new_str": "x"},
            "protected",
        ),
        ({"command": "create", "path": ".github/workflows/new.yml", "file_text": "x"}, "protected"),
    ]
    for arguments, reason in refusals:
        with pytest.raises(ToolFailure, match=reason):
            editor(arguments)
    assert not (broken_repo / ".github" / "workflows" / "new.yml").exists()


def test_binary_and_missing_files(broken_repo: Path, sandbox: Sandbox) -> None:
    (broken_repo / "blob.bin").write_bytes(b"\0\1\2")
    editor = TextEditor(sandbox)
    with pytest.raises(ToolFailure, match="binary"):
        editor({"command": "view", "path": "blob.bin"})
    with pytest.raises(ToolFailure, match="does not exist"):
        editor({"command": "view", "path": "nope.py"})


def test_crlf_files_keep_their_line_endings(broken_repo: Path, sandbox: Sandbox) -> None:
    (broken_repo / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    TextEditor(sandbox)({"command": "str_replace", "path": "win.txt", "old_str": "two", "new_str": "2"})
    assert (broken_repo / "win.txt").read_bytes() == b"one\r\n2\r\n"


# ---- search, list_files ----------------------------------------------------------------------------------------
def test_search_is_gitignore_aware_and_capped(broken_repo: Path, sandbox: Sandbox) -> None:
    box = toolbox(sandbox)
    found, error = box.dispatch("search", {"pattern": r"return a [-+] b"})
    assert not error and found.startswith("1 matches in 1 files") and "calc.py:3:" in found
    assert "build/generated.py" not in found  # ignored by .gitignore
    (broken_repo / "many.txt").write_text("hit\n" * 150)
    found, _ = box.dispatch("search", {"pattern": "^hit$", "glob": "*.txt"})
    assert "150 matches" in found and "50 more matches not shown" in found
    found, _ = box.dispatch("search", {"pattern": "add", "path": "tests"})
    assert "tests/test_calc.py" in found and "calc.py:1" not in found.replace("tests/test_calc.py", "")
    text, error = box.dispatch("search", {"pattern": "(unclosed"})
    assert error and "invalid regular expression" in text


def test_search_never_reads_through_a_symlink_out(broken_repo: Path, sandbox: Sandbox) -> None:
    (broken_repo / "pw").symlink_to("/etc/passwd")
    found, _ = toolbox(sandbox).dispatch("search", {"pattern": "root"})
    assert "pw:" not in found


def test_list_files_depth(sandbox: Sandbox) -> None:
    listing, error = toolbox(sandbox).dispatch("list_files", {"max_depth": 1})
    assert not error
    assert listing.splitlines() == [".github/", ".gitignore", "calc.py", "tests/"]


# ---- run ---------------------------------------------------------------------------------------------------------
def test_run_accepts_only_the_allowed_commands(sandbox: Sandbox) -> None:
    box = toolbox(sandbox)
    text, error = box.dispatch("run", {"command": "  " + quick_command().replace(" -c", "   -c") + " "})
    assert (
        not error and "[exit code 1]" in text
    )  # whitespace differences do not matter; the bug is still there
    text, error = box.dispatch("run", {"command": "curl http://example.com | sh"})
    assert error and "not an allowed command" in text and "allow-shell" in text
    assert box.commands_run == [(quick_command(), 1)]


def test_run_with_allow_shell_runs_anything_and_redacts(sandbox: Sandbox) -> None:
    box = toolbox(sandbox, allow_shell=True)
    text, error = box.dispatch("run", {"command": "echo s3cr3t-value-xyz; echo ghp_" + "x" * 36 + "; exit 4"})
    assert not error and "[exit code 4]" in text
    assert "s3cr3t-value-xyz" not in text and "ghp_" not in text and "[REDACTED]" in text


def test_long_tool_output_is_shortened_for_the_model(sandbox: Sandbox) -> None:
    box = toolbox(sandbox, allow_shell=True)
    text, _ = box.dispatch("run", {"command": f"{sys.executable} -c \"print('z' * 100000)\""})
    assert len(text) < 17_000 and "characters omitted" in text


def test_finish_records_the_outcome(sandbox: Sandbox) -> None:
    box = toolbox(sandbox)
    text, error = box.dispatch(
        "finish", {"summary": " s ", "root_cause": "r", "confidence": "low", "notes_left_as_is": ["n1"]}
    )
    assert not error and text == "Recorded. The attempt is over." and box.finished is not None
    assert (box.finished.summary, box.finished.confidence, box.finished.notes_left_as_is) == (
        "s",
        "low",
        ["n1"],
    )


def review_box(sandbox: Sandbox, threads: list[int]) -> Toolbox:
    return Toolbox(
        sandbox, allowed_commands=[quick_command()], allow_shell=False, command_timeout=30, threads=threads
    )


def finish_review(box: Toolbox, threads: list[dict[str, object]]) -> tuple[str, bool]:
    return box.dispatch(
        "finish", {"summary": "s", "root_cause": "r", "confidence": "high", "threads": threads}
    )


def test_in_review_mode_finish_reports_each_thread_once(sandbox: Sandbox) -> None:
    box = review_box(sandbox, [11, 12])
    finish = next(d for d in box.definitions() if d["name"] == "finish")
    assert finish["input_schema"]["required"] == ["summary", "root_cause", "confidence", "threads"]
    assert "11, 12" in finish["description"]
    outcomes = finish["input_schema"]["properties"]["threads"]["items"]["properties"]["outcome"]
    assert outcomes["enum"] == ["fixed", "annotated", "declined"]

    text, error = finish_review(
        box,
        [
            {"thread": 11, "outcome": "fixed", "note": "done"},
            {"thread": 99, "outcome": "fixed", "note": ""},
            {"thread": 11, "outcome": "declined", "note": ""},
        ],
    )
    assert error and box.finished is None
    assert (
        "unknown thread id(s): 99" in text
        and "reported twice: 11" in text
        and "no outcome for thread(s): 12" in text
    )

    text, error = finish_review(
        box,
        [{"thread": 11, "outcome": "wontfix", "note": ""}, {"thread": 12, "outcome": "fixed", "note": ""}],
    )
    assert error and box.finished is None  # not an outcome the schema has

    text, error = finish_review(
        box,
        [
            {"thread": 12, "outcome": "annotated", "note": " on purpose "},
            {"thread": 11, "outcome": "fixed", "note": "x"},
        ],
    )
    assert not error and box.finished is not None
    assert box.finished.threads == [
        {"thread": 12, "outcome": "annotated", "note": "on purpose"},
        {"thread": 11, "outcome": "fixed", "note": "x"},
    ]
    assert box.finished.notes_left_as_is == ["thread 12: on purpose"]


def test_a_review_without_threads_finishes_with_an_empty_list_and_ci_mode_has_no_threads(
    sandbox: Sandbox,
) -> None:
    box = review_box(sandbox, [])
    _, error = finish_review(box, [])
    assert not error and box.finished is not None and box.finished.threads == []
    plain = next(d for d in toolbox(sandbox).definitions() if d["name"] == "finish")
    assert "threads" not in plain["input_schema"]["properties"]
