"""File-level rules: what happens to whole files, and how big the diff is."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ci_autofix.paths import path_matches
from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.diff import FileDiff, is_gitlink_mode, is_symlink_mode
from ci_autofix.policy.model import Finding
from ci_autofix.policy.source import is_collected_test, is_test_path
from ci_autofix.policy.table import finding


def check(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    for file in files:
        yield from _test_files(file)
        yield from _protected(file, limits.protected)
        yield from _kind(file)
    yield from _size(files, limits)


def _test_files(file: FileDiff) -> Iterator[Finding]:
    if file.status == "deleted" and file.is_test:
        yield finding(
            "test-file-deleted", "This test file is deleted; a fix must not remove tests.", file.path
        )
    # a rename is a deletion plus an addition: out of what the runner collects, the tests are gone
    if (
        file.status == "renamed"
        and file.old_path
        and (is_test_path(file.old_path) or is_collected_test(file.old_path))
        and not is_test_path(file.path)
    ) or (
        file.status == "renamed"
        and file.old_path
        and is_collected_test(file.old_path)
        and not is_collected_test(file.path)
    ):
        yield finding(
            "test-file-renamed-away",
            f"This test file is renamed from {file.old_path} to a name the test runners no longer collect.",
            file.path,
        )


def _protected(file: FileDiff, patterns: Sequence[str]) -> Iterator[Finding]:
    for path in dict.fromkeys(p for p in (file.old_path, file.path) if p):
        pattern = next((p for p in patterns if p.strip() and path_matches(path, p)), None)
        if pattern is not None:
            yield finding(
                "protected-path", f"This path is protected ({pattern}); a fix may not change it.", path
            )


def _kind(file: FileDiff) -> Iterator[Finding]:
    if is_gitlink_mode(file.old_mode) or is_gitlink_mode(file.new_mode):
        yield finding(
            "submodule-change", f"A submodule is {file.status}; a fix may not touch submodules.", file.path
        )
        return
    if is_symlink_mode(file.old_mode) or is_symlink_mode(file.new_mode):
        yield finding(
            "symlink", f"A symbolic link is {file.status}; a fix may not create or change links.", file.path
        )
    elif file.binary:
        yield finding(
            "binary-file",
            f"A binary file is {file.status}; its content cannot be reviewed in a diff.",
            file.path,
        )
    if (
        file.status not in ("added", "deleted")
        and file.old_mode
        and file.new_mode
        and file.old_mode != file.new_mode
    ):
        yield finding(
            "mode-change", f"The file mode changes from {file.old_mode} to {file.new_mode}.", file.path
        )


def _size(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    changed = sum(len(f.added) + len(f.removed) for f in files)
    if changed > limits.max_changed_lines:
        yield finding(
            "too-many-changed-lines",
            f"The diff changes {changed} lines, more than the limit of "
            f"{limits.max_changed_lines} (max-changed-lines); a CI fix should be small.",
        )
    if len(files) > limits.max_files:
        yield finding(
            "too-many-files",
            f"The diff changes {len(files)} files, more than the limit of {limits.max_files} (max-files).",
        )
