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


def git_blob_reader(run: Callable[[str], tuple[bool, str]]) -> BlobReader:
    """A reader over `run(oid) -> (ok, output)`, e.g. `git cat-file blob <oid>` in our own repository."""

    def read(oid: str) -> str | None:
        if not _OID.match(oid):
            return None
        ok, output = run(oid)
        return output if ok else None

    return read


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
