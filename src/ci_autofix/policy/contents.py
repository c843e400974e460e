"""Whole files for the rules that need more than a hunk: read through the blob ids of the diff.

`git diff --full-index` names each side of a file by its blob id (`index <old>..<new>`). When
`check_diff` is given a `read_blob` callable (the ladder passes one that runs `git cat-file
blob` in its own repository), each file gets its old and new text. Without one, an added file's
text is its `+` lines and a deleted file's its `-` lines (the diff holds them whole); a modified
file keeps only its hunks, and the rules fall back to them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from ci_autofix.errors import UserError
from ci_autofix.git import Git
from ci_autofix.policy.diff import FileDiff

BlobReader = Callable[[str], str | bytes | None]
_OID = re.compile(r"^[0-9a-f]{7,64}$")


def attach(files: Sequence[FileDiff], read_blob: BlobReader | None) -> None:
    """Set `old_text` and `new_text` on each file where they can be known."""
    for file in files:
        if file.binary:
            continue
        if file.status == "added":
            file.new_text = _joined(file, new=True)
        elif file.status == "deleted":
            file.old_text = _joined(file, new=False)
        if read_blob is None:
            continue
        if file.old_text is None and file.old_blob:
            file.old_text = _read(read_blob, file.old_blob)
        if file.new_text is None and file.new_blob:
            file.new_text = _read(read_blob, file.new_blob)


def git_blob_reader(git: Git) -> BlobReader:
    """`git cat-file blob <oid>` in `git`'s repository (our own git: no repository config, hooks or
    filters run; `cat-file blob` applies no textconv or filter anyway)."""

    def read(oid: str) -> str | None:
        if not _OID.match(oid):
            return None
        result = git.run("cat-file", "blob", oid, check=False)
        return result.output if result.ok else None

    return read


def repo_blob_reader(repo: Path) -> BlobReader:
    """A `git_blob_reader` for the repository at `repo`; a UserError when it is not one."""
    git = Git(repo)
    if not repo.is_dir() or not git.run("rev-parse", "--git-dir", check=False).ok:
        raise UserError(
            f"--repo {repo} is not a git repository.",
            "Pass the checkout the diff was made in (the one `git diff --full-index` ran in), or drop --repo.",
        )
    return git_blob_reader(git)


def _read(read_blob: BlobReader, oid: str) -> str | None:
    try:
        data = read_blob(oid)
    except OSError:
        return None
    if isinstance(data, bytes):
        return data.decode("utf-8", "surrogateescape")
    return data


def _joined(file: FileDiff, *, new: bool) -> str:
    lines = [line.text for hunk in file.hunks for line in hunk.side(new)]
    return "".join(text + "\n" for text in lines)
