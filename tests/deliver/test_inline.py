"""The inline-suggestion hunk mapping, on real diffs of real git repositories.

Each test makes a repository with a base commit, a PR head commit and a fix commit, takes
`git diff <base> <head>` (the PR's diff) and `git diff <head> <fix>` (the fix's), and checks what
`inline_suggestions` makes of them. `_commit_suggestions` does what GitHub's "Commit suggestion"
does (the lines start_line..line of the head file replaced by the suggestion's content, each with
the ending of the lines it replaces) and compares the result with the fix commit's file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from ci_autofix.deliver.inline import Inline, Unmapped, inline_suggestions
from tests.testing.git import Files, commit, init_repo, run

LINES = [f"line {n:02d}" for n in range(1, 41)]  # a 40-line file: hunks far apart stay apart


def text(lines: list[str], eol: str = "\n") -> str:
    return "".join(f"{line}{eol}" for line in lines)


def edit(lines: list[str], changes: Mapping[int, str | None], eol: str = "\n") -> str:
    """`lines` with line n (1-based) replaced by `changes[n]`, or dropped for None."""
    out = [changes.get(n, line) for n, line in enumerate(lines, 1)]
    return text([line for line in out if line is not None], eol)


class Scenario:
    """A repository with base → head (the PR) → fix, and the two diffs as git prints them."""

    def __init__(self, tmp_path: Path, base: Files, head: Files, fix: Files, *quote: str) -> None:
        self.repo = tmp_path / "repo"
        self.home = tmp_path / "home"
        self.home.mkdir(parents=True)
        self.base = init_repo(self.repo, base)
        self.head = commit(self.repo, head, "PR")
        self.fix = commit(self.repo, fix, "Fix", allow_empty=not fix)
        self.quote = quote

    def diff(self, old: str, new: str) -> str:
        out = run(self.repo, *self.quote, "diff", old, new, home=self.home).stdout
        return out.decode("utf-8", "surrogateescape")

    @property
    def pr_diff(self) -> str:
        return self.diff(self.base, self.head)

    @property
    def fix_diff(self) -> str:
        return self.diff(self.head, self.fix)

    def map(self, note: str = "") -> tuple[list[Inline], list[Unmapped]]:
        return inline_suggestions(self.pr_diff, self.fix_diff, note=note)

    def show(self, sha: str, path: str) -> str:
        return run(self.repo, "show", f"{sha}:{path}", home=self.home).stdout.decode()


def content(body: str) -> list[str]:
    """The lines a suggestion's body puts in place (between its fence lines)."""
    lines = body.split("\n")
    assert lines[0].endswith("suggestion"), body
    fence = lines[0].removesuffix("suggestion")
    assert fence and set(fence) == {"`"}, body
    return lines[1 : lines.index(fence, 1)]


def commit_suggestion(head: str, inline: Inline) -> str:
    """What "Commit suggestion" writes: head's lines start_line..line replaced by the content,
    each new line given the ending of the first line it replaces (none for a last line without)."""
    pieces = head.split("\n")  # piece i is line i + 1, its "\r" kept
    start = inline.start_line or inline.line
    cr = "\r" if pieces[start - 1].endswith("\r") else ""
    new = [line + cr for line in content(inline.body)]
    if inline.line == len(pieces) and new:  # the file's last line, without an ending: so stays the new one
        new[-1] = new[-1].removesuffix(cr)
    pieces[start - 1 : inline.line] = new
    return "\n".join(pieces)


def assert_commits_to_fix(s: Scenario, path: str, inlines: list[Inline]) -> None:
    result = s.show(s.head, path)
    for inline in sorted(inlines, key=lambda i: -i.line):  # bottom up: line numbers stay the head's
        assert inline.path == path
        result = commit_suggestion(result, inline)
    assert result == s.show(s.fix, path)


# -- what a hunk maps to -------------------------------------------------------------------------


def test_a_multi_line_replacement_is_a_start_line_to_line_suggestion(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {19: "pr 19", 20: "pr 20"})},
        {"app.py": edit(LINES, {19: "pr 19", 20: "pr 20", 21: "fix 21", 22: "fix 22"})},
    )
    inlines, unmapped = s.map()
    # the fix hunk's context (lines 18-20 and 23-25) is left out: the PR's hunk shows 16-23 only
    assert inlines == [Inline("app.py", 22, 21, "```suggestion\nfix 21\nfix 22\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "app.py", inlines)


def test_a_single_line_has_no_start_line(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},
        {"app.py": edit(LINES, {20: "fix 20"})},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("app.py", 20, None, "```suggestion\nfix 20\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "app.py", inlines)


def test_context_between_two_changes_is_reproduced_in_the_suggestion(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {18: "pr 18", 22: "pr 22"})},
        {"app.py": edit(LINES, {18: "fix 18", 21: None, 22: "fix 22"})},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("app.py", 22, 18, "```suggestion\nfix 18\nline 19\nline 20\nfix 22\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "app.py", inlines)


def test_an_insertion_is_widened_to_the_line_before(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},
        {"app.py": edit(LINES, {20: "pr 20\nnew a\nnew b"})},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("app.py", 20, None, "```suggestion\npr 20\nnew a\nnew b\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "app.py", inlines)


def test_an_insertion_at_the_top_of_a_file_is_widened_to_the_line_after(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {1: "pr 01"})},
        {"app.py": edit(LINES, {1: "# header\npr 01"})},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("app.py", 1, None, "```suggestion\n# header\npr 01\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "app.py", inlines)


def test_an_insertion_whose_line_before_is_outside_the_diff_takes_the_line_after(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},  # the PR's hunk shows lines 17-23
        {"app.py": edit(LINES, {16: "line 16\nnew", 20: "pr 20"})},  # inserted after line 16: between the two
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("app.py", 17, None, "```suggestion\nnew\nline 17\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "app.py", inlines)


def test_a_deletion_is_an_empty_suggestion_over_the_deleted_lines(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20", 21: "pr 21"})},
        {"app.py": edit(LINES, {20: None, 21: None})},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("app.py", 21, 20, "```suggestion\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "app.py", inlines)


def test_the_note_follows_the_suggestion_block(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},
        {"app.py": edit(LINES, {20: "fix 20"})},
    )
    inlines, _ = s.map(note="From ci-autofix: see the suggestion PR.")
    assert [i.body for i in inlines] == [
        "```suggestion\nfix 20\n```\n\nFrom ci-autofix: see the suggestion PR."
    ]


# -- what does not map ---------------------------------------------------------------------------


def test_a_hunk_outside_the_pr_diff_is_unmapped_and_one_inside_still_maps(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {5: "pr 05"})},
        {"app.py": edit(LINES, {5: "fix 05", 30: "fix 30"})},
    )
    inlines, unmapped = s.map()
    assert [(i.line, i.start_line) for i in inlines] == [(5, None)]
    assert unmapped == [Unmapped("app.py", 30, 1, "outside the pull request's diff")]


def test_a_hunk_reaching_past_the_pr_hunk_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},  # the PR's hunk shows lines 17-23
        {"app.py": edit(LINES, {20: "pr 20", 22: "fix 22", 23: "fix 23", 24: "fix 24"})},
    )
    inlines, unmapped = s.map()
    assert inlines == []
    assert unmapped == [
        Unmapped(
            "app.py", 22, 3, "reaches outside the pull request's diff (its hunk there shows lines 17-23)"
        )
    ]


def test_a_hunk_straddling_two_pr_hunks_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {10: "pr 10", 20: "pr 20"})},  # hunks 7-13 and 17-23
        {"app.py": edit(LINES, {10: "pr 10", 20: "pr 20"} | {n: f"fix {n}" for n in range(12, 19)})},
    )
    inlines, unmapped = s.map()
    assert inlines == []
    assert unmapped == [
        Unmapped(
            "app.py", 12, 7, "spans 2 hunks of the pull request's diff; a suggestion must lie inside one"
        )
    ]


def test_a_file_the_pr_does_not_touch_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES), "other.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},
        {"other.py": edit(LINES, {20: "fix 20"})},
    )
    inlines, unmapped = s.map()
    assert inlines == []
    assert unmapped == [
        Unmapped(
            "other.py", 20, 1, "outside the pull request's diff: the pull request does not change this file"
        )
    ]


def test_a_binary_file_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"logo.png": b"\x89PNG\0\1\2"},
        {"logo.png": b"\x89PNG\0\1\3"},
        {"logo.png": b"\x89PNG\0\1\4"},
    )
    assert "Binary files" in s.fix_diff
    assert s.map() == ([], [Unmapped("logo.png", 0, 0, "binary file")])


def test_a_mode_change_is_unmapped_and_its_content_still_maps(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"run.sh": text(LINES)},
        {"run.sh": edit(LINES, {20: "pr 20"})},
        {"run.sh": edit(LINES, {20: "fix 20"})},
    )
    (s.repo / "run.sh").chmod(0o755)
    fix = commit(s.repo, {}, "Fix: executable")
    inlines, unmapped = inline_suggestions(s.pr_diff, s.diff(s.head, fix))
    assert [(i.line, i.body) for i in inlines] == [(20, "```suggestion\nfix 20\n```")]
    assert unmapped == [
        Unmapped("run.sh", 0, 0, "mode change (100644 to 100755), which a suggestion cannot do")
    ]


def test_a_mode_only_change_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"run.sh": text(LINES)}, {"run.sh": edit(LINES, {20: "pr 20"})}, {})
    (s.repo / "run.sh").chmod(0o755)
    fix = commit(s.repo, {}, "Fix: executable")
    assert inline_suggestions(s.pr_diff, s.diff(s.head, fix)) == (
        [],
        [Unmapped("run.sh", 0, 0, "mode change (100644 to 100755), which a suggestion cannot do")],
    )


def test_files_the_fix_deletes_or_adds_are_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},
        {"app.py": None, "new.py": "x = 1\n"},
    )
    inlines, unmapped = s.map()
    assert inlines == []
    assert sorted(unmapped, key=lambda u: u.path) == [
        Unmapped("app.py", 0, 0, "the fix deletes this file, which a suggestion cannot do"),
        Unmapped(
            "new.py",
            0,
            0,
            "the fix adds this file; a suggestion can only change lines the pull request's head has",
        ),
    ]


def test_diffs_of_different_heads_do_not_map(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},
        {"app.py": edit(LINES, {20: "fix 20"})},
    )
    other = Scenario(
        tmp_path / "other",
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "other 20"})},
        {"app.py": edit(LINES, {20: "fix 20"})},
    )
    inlines, unmapped = inline_suggestions(other.pr_diff, s.fix_diff)
    assert inlines == []
    assert [(u.old_start, u.why) for u in unmapped] == [
        (
            20,
            "line 20 differs between the fix's diff and the pull request's diff; they are not diffs of the same head commit",
        )
    ]


# -- paths ----------------------------------------------------------------------------------------


def test_a_file_renamed_in_the_pr_is_commented_on_under_its_new_path(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"old/name.py": text(LINES)},
        {"old/name.py": None, "new/name.py": edit(LINES, {20: "pr 20"})},
        {"new/name.py": edit(LINES, {20: "fix 20"})},
    )
    assert "rename from old/name.py" in s.pr_diff
    inlines, unmapped = s.map()
    assert inlines == [Inline("new/name.py", 20, None, "```suggestion\nfix 20\n```")]
    assert unmapped == []


def test_a_rename_by_the_fix_is_unmapped_and_its_content_still_maps(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},
        {"app.py": None, "main.py": edit(LINES, {20: "fix 20"})},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("app.py", 20, None, "```suggestion\nfix 20\n```")]
    assert unmapped == [
        Unmapped("app.py", 0, 0, "the fix renames the file to main.py, which a suggestion cannot do")
    ]


@pytest.mark.parametrize("quote", [(), ("-c", "core.quotePath=false")], ids=["quoted", "unquoted"])
def test_a_non_ascii_path_is_read_quoted_or_not(tmp_path: Path, quote: tuple[str, ...]) -> None:
    s = Scenario(
        tmp_path,
        {"src/café.py": text(LINES)},
        {"src/café.py": edit(LINES, {20: "pr 20"})},
        {"src/café.py": edit(LINES, {20: "fix 20 → ü"})},
        *quote,
    )
    quoted = '"a/src/caf\\303\\251.py"' in s.fix_diff
    assert quoted == (not quote)
    inlines, unmapped = s.map()
    assert inlines == [Inline("src/café.py", 20, None, "```suggestion\nfix 20 → ü\n```")]
    assert unmapped == []


def test_a_path_with_spaces_and_quotes(tmp_path: Path) -> None:
    name = 'dir with space/say "hi".py'
    s = Scenario(
        tmp_path,
        {name: text(LINES)},
        {name: edit(LINES, {20: "pr 20"})},
        {name: edit(LINES, {20: "fix 20"})},
    )
    assert [i.path for i in s.map()[0]] == [name]


# -- the suggestion's text -----------------------------------------------------------------------


def test_code_holding_a_fence_gets_a_longer_fence(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"README.md": text(LINES)},
        {"README.md": edit(LINES, {20: "pr 20", 21: "pr 21", 22: "pr 22"})},
        {"README.md": edit(LINES, {20: "```python", 21: "x = `1`", 22: "```"})},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("README.md", 22, 20, "````suggestion\n```python\nx = `1`\n```\n````")]
    assert unmapped == []
    assert_commits_to_fix(s, "README.md", inlines)


def test_a_longer_run_of_backticks_gets_a_longer_fence(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"doc.md": text(LINES)},
        {"doc.md": edit(LINES, {20: "pr 20"})},
        {"doc.md": edit(LINES, {20: "a ````` b"})},
    )
    assert [i.body for i in s.map()[0]] == ["``````suggestion\na ````` b\n``````"]


def test_a_crlf_file_gets_a_suggestion_without_cr(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"win.txt": text(LINES, "\r\n")},
        {"win.txt": edit(LINES, {20: "pr 20", 21: "pr 21"}, "\r\n")},
        {"win.txt": edit(LINES, {20: "fix 20", 21: "pr 21\r\nnew"}, "\r\n")},
    )
    assert "\r" in s.fix_diff
    inlines, unmapped = s.map()
    assert inlines == [Inline("win.txt", 21, 20, "```suggestion\nfix 20\npr 21\nnew\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "win.txt", inlines)  # each new line takes the file's CRLF


def test_a_fix_that_changes_line_endings_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"win.txt": text(LINES, "\r\n")},
        {"win.txt": edit(LINES, {20: "pr 20"}, "\r\n")},
        {"win.txt": edit(LINES, {20: "fix 20\n"}, "\r\n").replace("fix 20\n\r\n", "fix 20\n")},
    )
    inlines, unmapped = s.map()
    assert inlines == []
    assert unmapped == [
        Unmapped(
            "win.txt", 20, 1, "the fix changes line endings (CRLF and LF), which a suggestion cannot show"
        )
    ]


def test_a_fix_that_adds_the_final_newline_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES).rstrip("\n")},
        {"app.py": edit(LINES, {40: "pr 40"}).rstrip("\n")},
        {"app.py": edit(LINES, {40: "pr 40"})},
    )
    assert "\\ No newline at end of file" in s.fix_diff
    inlines, unmapped = s.map()
    assert inlines == []
    assert unmapped == [
        Unmapped(
            "app.py",
            40,
            1,
            "the fix changes whether the file ends with a newline, which a suggestion cannot show",
        )
    ]


def test_a_last_line_without_a_newline_maps_when_it_stays_so(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES).rstrip("\n")},
        {"app.py": edit(LINES, {40: "pr 40"}).rstrip("\n")},
        {"app.py": edit(LINES, {40: "fix 40"}).rstrip("\n")},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("app.py", 40, None, "```suggestion\nfix 40\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "app.py", inlines)


# -- the input ------------------------------------------------------------------------------------


def test_an_empty_fix_diff_maps_nothing() -> None:
    assert inline_suggestions("", "") == ([], [])


def test_text_that_is_not_a_git_diff_is_refused() -> None:
    with pytest.raises(ValueError, match="not a git diff"):
        inline_suggestions("", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")


def test_a_symbolic_link_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(tmp_path, {"app.py": text(LINES)}, {"app.py": edit(LINES, {20: "pr 20"})}, {})
    (s.repo / "link").symlink_to("app.py")
    head = commit(s.repo, {}, "PR: a link")
    (s.repo / "link").unlink()
    (s.repo / "link").symlink_to("other.py")
    fix = commit(s.repo, {}, "Fix: the link")
    assert inline_suggestions(s.diff(s.base, head), s.diff(head, fix)) == (
        [],
        [Unmapped("link", 0, 0, "a symbolic link or submodule, which a suggestion cannot change")],
    )


def test_a_carriage_return_inside_a_line_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20"})},
        {"app.py": edit(LINES, {20: "fix\r20"})},
    )
    assert s.map() == (
        [],
        [Unmapped("app.py", 20, 1, "a carriage return inside a line, which a suggestion cannot show")],
    )


def test_text_that_is_not_utf8_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"latin1.txt": text(LINES)},
        {"latin1.txt": edit(LINES, {20: "pr 20"})},
        {"latin1.txt": edit(LINES, {20: "caf\xe9"}).encode("latin-1")},
    )
    assert s.map() == ([], [Unmapped("latin1.txt", 20, 1, "not UTF-8 text")])


def test_lines_that_look_like_file_headers_are_hunk_lines(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"q.sql": text(LINES)},
        {"q.sql": edit(LINES, {20: "-- pr comment", 21: "++ pr"})},
        {"q.sql": edit(LINES, {20: "++ fix", 21: "-- fix comment"})},
    )
    assert "\n--- pr comment\n" in s.fix_diff and "\n+++ fix\n" in s.fix_diff
    inlines, unmapped = s.map()
    assert inlines == [Inline("q.sql", 21, 20, "```suggestion\n++ fix\n-- fix comment\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "q.sql", inlines)


def test_a_form_feed_line_does_not_split_a_line(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {20: "pr 20\x0c", 21: "\u2028pr 21"})},
        {"app.py": edit(LINES, {20: "fix 20\x0c", 21: "\u2028fix 21"})},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("app.py", 21, 20, "```suggestion\nfix 20\x0c\n\u2028fix 21\n```")]
    assert unmapped == []


@pytest.mark.parametrize(
    ("pr_line", "fix", "expected"),
    [
        (20, {20: "pr 20\nnew"}, Inline("app.py", 20, None, "```suggestion\npr 20\nnew\n```")),
        (2, {1: "new\nline 01", 2: "pr 02"}, Inline("app.py", 1, None, "```suggestion\nnew\nline 01\n```")),
    ],
    ids=["middle", "top"],
)
def test_an_insertion_in_a_fix_diff_without_context(
    tmp_path: Path, pr_line: int, fix: dict[int, str], expected: Inline
) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {pr_line: f"pr {pr_line:02d}"})},
        {"app.py": edit(LINES, {pr_line: f"pr {pr_line:02d}"} | fix)},
    )
    zero = run(s.repo, "diff", "-U0", s.head, s.fix, home=s.home).stdout.decode()
    assert ",0 +" in zero  # git says where the insertion goes, with no context line to show it
    inlines, unmapped = inline_suggestions(s.pr_diff, zero)
    assert inlines == [expected]
    assert unmapped == []
    assert_commits_to_fix(s, "app.py", inlines)


def test_a_file_the_pr_adds_maps_anywhere(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"new.py": text(LINES[:10])},
        {"new.py": edit(LINES[:10], {5: "fix 05"})},
    )
    assert "new file mode" in s.pr_diff
    assert s.map() == ([Inline("new.py", 5, None, "```suggestion\nfix 05\n```")], [])


def test_a_crlf_file_without_a_final_newline(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"win.txt": text(LINES, "\r\n").removesuffix("\r\n")},
        {"win.txt": edit(LINES, {40: "pr 40"}, "\r\n").removesuffix("\r\n")},
        {"win.txt": edit(LINES, {39: "fix 39", 40: "fix 40"}, "\r\n").removesuffix("\r\n")},
    )
    inlines, unmapped = s.map()
    assert inlines == [Inline("win.txt", 40, 39, "```suggestion\nfix 39\nfix 40\n```")]
    assert unmapped == []
    assert_commits_to_fix(s, "win.txt", inlines)


def test_a_last_line_ending_in_a_lone_carriage_return_is_unmapped(tmp_path: Path) -> None:
    s = Scenario(
        tmp_path,
        {"app.py": text(LINES)},
        {"app.py": edit(LINES, {40: "pr 40"})},
        {"app.py": edit(LINES, {40: "fix 40"}).removesuffix("\n") + "\r"},
    )
    assert s.map() == (
        [],
        [Unmapped("app.py", 40, 1, "a carriage return inside a line, which a suggestion cannot show")],
    )
