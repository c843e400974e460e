"""The failing PR's diff rebuilt from GitHub's file list (`inline_failing.pr_diff`): its files'
patches read back by git's rules, so the fix's hunks map onto the PR's lines by the head's paths,
including names git must quote, a renamed file, and none for files the head no longer has."""

from __future__ import annotations

from pathlib import Path

from ci_autofix.deliver.inline import inline_suggestions
from ci_autofix.deliver.inline_failing import pr_diff
from ci_autofix.github import PullFile
from tests.testing.git import commit, git, init_repo

ODD = 'dir/my "odd"\tfile.py'


def test_the_prs_files_become_a_diff_the_fix_maps_onto(tmp_path: Path) -> None:
    head = {ODD: "a\nB\nc\n", "new.py": "x\nY\n"}
    files = [
        PullFile(ODD, "modified", None, "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"),
        PullFile("new.py", "renamed", "old.py", "@@ -1,2 +1,2 @@\n x\n-y\n+Y"),
        PullFile("gone.py", "removed", None, "@@ -1 +0,0 @@\n-z"),
        PullFile("logo.png", "added", None, None),
    ]
    init_repo(tmp_path, head)
    commit(tmp_path, {ODD: "a\nBB\nc\n", "new.py": "x\nYY\n"}, "the fix")
    fix_diff = git(tmp_path, "diff", "HEAD~1", "HEAD", strip=False)
    assert '"a/dir/my \\"odd\\"\\tfile.py"' in fix_diff  # git quotes it too

    inline, unmapped = inline_suggestions(pr_diff(files), fix_diff)
    assert [(i.path, i.line, i.body) for i in inline] == [
        (ODD, 2, "```suggestion\nBB\n```"),
        ("new.py", 2, "```suggestion\nYY\n```"),
    ]
    assert unmapped == []


def test_a_line_the_pr_did_not_change_is_not_suggested(tmp_path: Path) -> None:
    init_repo(tmp_path, {"a.py": "1\n2\n3\n4\n5\n6\n7\n8\n9\n"})
    commit(tmp_path, {"a.py": "1\n2\n3\n4\n5\n6\n7\n8\nNINE\n"}, "the fix")
    fix_diff = git(tmp_path, "diff", "HEAD~1", "HEAD", strip=False)
    pr = [PullFile("a.py", "modified", None, "@@ -1,4 +1,4 @@\n-one\n+1\n 2\n 3\n 4")]
    inline, unmapped = inline_suggestions(pr_diff(pr), fix_diff)
    assert inline == [] and [u.path for u in unmapped] == ["a.py"]


# U+2028 and U+0085 end a line for `str.splitlines`, not for git: a PR author can put them in a file's
# name or its content to cut the PR's diff where git does not, so reading it back must split on "\n"
LINE_BREAKING = "a\u2028b\x85c.py"


def test_a_name_holding_unicode_line_breaks_reads_as_git_wrote_it(tmp_path: Path) -> None:
    init_repo(tmp_path, {LINE_BREAKING: "x = 1\n"})
    commit(tmp_path, {LINE_BREAKING: "x = 2\n"}, "the fix")
    fix_diff = git(tmp_path, "diff", "HEAD~1", "HEAD", strip=False)
    pr = [PullFile(LINE_BREAKING, "modified", None, "@@ -1 +1 @@\n-x = 0\n+x = 1")]
    inline, unmapped = inline_suggestions(pr_diff(pr), fix_diff)
    assert [(i.path, i.line, i.body) for i in inline] == [(LINE_BREAKING, 1, "```suggestion\nx = 2\n```")]
    assert unmapped == []


def test_a_line_holding_unicode_line_breaks_cannot_start_a_file_or_a_hunk(tmp_path: Path) -> None:
    planted = "s = 'p\u2028diff --git a/evil.py b/evil.py\u2028@@ -1,9 +1,9 @@'"
    init_repo(tmp_path, {"a.py": f"x = 1\n{planted}\n"})
    commit(tmp_path, {"a.py": f"x = 2\n{planted}\n"}, "the fix")
    fix_diff = git(tmp_path, "diff", "HEAD~1", "HEAD", strip=False)
    pr = [PullFile("a.py", "modified", None, f"@@ -1,2 +1,2 @@\n-x = 0\n+x = 1\n {planted}")]
    inline, unmapped = inline_suggestions(pr_diff(pr), fix_diff)
    assert [(i.path, i.line, i.body) for i in inline] == [("a.py", 1, "```suggestion\nx = 2\n```")]
    assert unmapped == []
