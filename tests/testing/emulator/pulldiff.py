"""A pull request's diff as GitHub uses it to place review comments.

GitHub shows a pull request as the diff from the merge base of base and head to the head
(`git diff base...head`, three lines of context, renames detected). A review comment may sit only
on a line inside one of its hunks: on the RIGHT side a line of the head's file that the hunk's new
range covers (context or added), on the LEFT side a line of the base's file that its old range
covers (context or deleted). This module computes those hunks from the bare repository with git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.testing.emulator.bare import git

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    lines: tuple[str, ...]  # the header, then each line as git prints it (" x", "+x", "-x", "\\ No newline…")

    def covers(self, side: str, line: int) -> bool:
        start, count = (
            (self.new_start, self.new_lines) if side == "RIGHT" else (self.old_start, self.old_lines)
        )
        return start <= line < start + count

    def excerpt(self, side: str, line: int) -> str:
        """The hunk from its header down to `line` of `side`: GitHub's `diff_hunk` of a comment."""
        old, new = self.old_start, self.new_start
        out = [self.lines[0]]
        for text in self.lines[1:]:
            out.append(text)
            tag = text[:1]
            if tag == "\\":
                continue
            here = new if side == "RIGHT" else old
            on_side = tag in (" +" if side == "RIGHT" else " -")
            if on_side and here == line:
                break
            if tag in " -":
                old += 1
            if tag in " +":
                new += 1
        return "\n".join(out)


@dataclass(frozen=True)
class FileDiff:
    old_path: str | None  # None for a file the pull request adds
    new_path: str | None  # None for a file the pull request deletes
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The path a review comment names: the head's, or the base's for a deleted file."""
        return self.new_path or self.old_path or ""

    def hunk_at(self, side: str, line: int) -> Hunk | None:
        return next((h for h in self.hunks if h.covers(side, line)), None)

    def position(self, hunk: Hunk, side: str, line: int) -> int:
        """The deprecated `position`: lines below the file's first `@@` header, counting the
        headers of later hunks ("continues to increase through … additional hunks")."""
        before = sum(len(h.lines) for h in self.hunks[: self.hunks.index(hunk)])
        return before + hunk.excerpt(side, line).count("\n")


def pull_diff(bare: Path, base_sha: str, head_sha: str) -> dict[str, FileDiff]:
    """The files of `git diff <merge base>..head`, by the path a review comment uses."""
    result = git(bare, "merge-base", base_sha, head_sha, check=False)
    merge_base = result.stdout.decode().strip() or base_sha
    out = git(
        bare,
        "-c",
        "core.quotePath=false",
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--find-renames",
        "--unified=3",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        merge_base,
        head_sha,
    ).stdout.decode("utf-8", errors="replace")
    return {f.path: f for f in _parse(out)}


def _path(text: str, prefix: str) -> str | None:
    text = text.rstrip("\t")
    if text == "/dev/null":
        return None
    return text.removeprefix(prefix)


def _parse(text: str) -> list[FileDiff]:
    files: list[FileDiff] = []
    old: str | None = None
    new: str | None = None
    hunks: list[Hunk] = []
    current: list[str] | None = None

    def close_hunk() -> None:
        nonlocal current
        if current:
            m = _HUNK.match(current[0])
            assert m is not None
            hunks.append(
                Hunk(
                    int(m[1]),
                    int(m[2]) if m[2] is not None else 1,
                    int(m[3]),
                    int(m[4]) if m[4] is not None else 1,
                    tuple(current),
                )
            )
        current = None

    def close_file() -> None:
        nonlocal hunks
        close_hunk()
        if old is not None or new is not None:
            files.append(FileDiff(old, new, hunks))
        hunks = []

    for line in text.split("\n"):
        if line.startswith("diff --git "):
            close_file()
            old = new = None
        elif current is None and line.startswith("--- "):
            old = _path(line[4:], "a/")
        elif current is None and line.startswith("+++ "):
            new = _path(line[4:], "b/")
        elif line.startswith("@@ "):
            close_hunk()
            current = [line]
        elif current is not None and line[:1] in (" ", "+", "-", "\\"):
            current.append(line)
    close_file()
    return files


@dataclass(frozen=True)
class ChangedFile:
    """One entry of `GET …/pulls/{n}/files` (a `diff-entry`)."""

    status: str  # added | removed | modified | renamed
    filename: str  # the head's path (the base's for a removed file)
    previous_filename: str | None  # the base's path of a renamed file
    patch: str | None  # the hunks, as GitHub shows them; None for a binary file or a pure rename
    additions: int
    deletions: int


def pull_files(bare: Path, base_sha: str, head_sha: str) -> list[ChangedFile]:
    """The files of the pull request's diff (from the merge base, renames found), in git's order."""
    result = git(bare, "merge-base", base_sha, head_sha, check=False)
    merge_base = result.stdout.decode().strip() or base_sha
    listed = git(
        bare,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--find-renames",
        "--name-status",
        "-z",
        merge_base,
        head_sha,
    ).stdout.decode("utf-8", errors="replace")
    fields = listed.split("\0")
    hunks = pull_diff(bare, base_sha, head_sha)
    statuses = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "T": "changed", "C": "copied"}
    out: list[ChangedFile] = []
    i = 0
    while i < len(fields) and fields[i]:
        code = fields[i]
        moved = code[0] in "RC"
        old, new = fields[i + 1], fields[i + 2] if moved else fields[i + 1]
        i += 3 if moved else 2
        status = statuses.get(code[0], "modified")
        filename = old if status == "removed" else new
        diff = hunks.get(filename)
        lines = [line for h in diff.hunks for line in h.lines] if diff else []
        out.append(
            ChangedFile(
                status=status,
                filename=filename,
                previous_filename=old if moved else None,
                patch="\n".join(lines) if lines else None,
                additions=sum(1 for line in lines if line.startswith("+")),
                deletions=sum(1 for line in lines if line.startswith("-")),
            )
        )
    return out
