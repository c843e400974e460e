"""File paths from a log, mapped onto the checkout.

Logs name files as the CI machine saw them: `/home/runner/work/repo/repo/src/a.py`,
`/github/workspace/src/a.py`, `./src/a.py`. Annotations and the agent need them relative to
the repository, and only when the file really is in it.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ci_autofix.triage.model import Diagnosis


def repo_path(raw: str, root: Path) -> str | None:
    """`raw` as a path relative to `root` when it names a file of the checkout, else None."""
    text = raw.strip().replace("\\", "/")
    if not text or "\0" in text:
        return None
    parts = [p for p in PurePosixPath(text).parts if p not in ("/", ".")]
    if ".." in parts:
        return None
    # the longest suffix of the path that names a file in the checkout
    for start in range(len(parts)):
        candidate = "/".join(parts[start:])
        target = root / candidate
        try:
            if target.is_file() and target.resolve().is_relative_to(root.resolve()):
                return candidate
        except OSError:
            continue
    return None


def locate_failures(diagnosis: Diagnosis, root: Path) -> None:
    """Rewrite each failure's file relative to the checkout; drop files that are not in it."""
    for failure in diagnosis.failures:
        if failure.file:
            located = repo_path(failure.file, root)
            if located is None:
                failure.line = failure.column = None
            failure.file = located
