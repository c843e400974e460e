"""The repository's files as the agent sees them: git's view (ignored files left out), inside the sandbox.

Listing and searching stop at the attempt's `Deadline` when they are given one (the agent's tools
are): then they raise `ToolFailure`, and the tool call ends the attempt (`Toolbox.dispatch`).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from ci_autofix.agent.deadline import Deadline
from ci_autofix.agent.failure import ToolFailure
from ci_autofix.agent.matcher import Matcher, PatternError, TooSlow
from ci_autofix.sandbox import Sandbox, SandboxViolation

MAX_FILES = 50_000
MAX_SEARCH_FILE_BYTES = 1024 * 1024
# one search reads at most this much, and matches for at most this long
MAX_SEARCH_FILES = 5_000
MAX_SEARCH_TOTAL_BYTES = 50 * 1024 * 1024
SEARCH_SECONDS = 5.0
_SKIP_DIRS = {
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
}


def repo_files(sandbox: Sandbox, deadline: Deadline | None = None) -> list[str]:
    """Workspace-relative paths of tracked and untracked, not ignored, files."""
    until = deadline or Deadline.never()
    root = sandbox.root
    if sandbox.git_dir is not None or (root / ".git").exists():
        # our git (our git directory and configuration), never the work tree's own `.git`
        git = sandbox.git()
        git.timeout = max(min(git.timeout, until.remaining()), 0.001)
        result = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard", check=False)
        if result.ok and not result.truncated:
            names = sorted({name for name in result.output.split("\0") if name})
            return [n for n in names if (root / n).is_file() or (root / n).is_symlink()][:MAX_FILES]
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        if until.passed():
            raise ToolFailure("listing the repository's files stopped at the attempt's deadline")
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        base = Path(directory).relative_to(root)
        found.extend((base / f).as_posix() for f in sorted(files))
        if len(found) >= MAX_FILES:
            break
    return found[:MAX_FILES]


def _under(rel: str, prefix: str) -> bool:
    return prefix in ("", ".") or rel == prefix or rel.startswith(prefix.rstrip("/") + "/")


def _readable(sandbox: Sandbox, rel: str) -> Path | None:
    try:
        return sandbox.resolve(rel)
    except SandboxViolation:
        return None


def list_tree(
    sandbox: Sandbox,
    path: str = ".",
    *,
    max_depth: int = 2,
    limit: int = 500,
    deadline: Deadline | None = None,
) -> list[str]:
    """Files and directories under `path`, `max_depth` levels deep, directories ending in `/`."""
    prefix = sandbox.relative(path).as_posix()
    prefix = "" if prefix == "." else prefix
    if prefix and not (sandbox.root / prefix).is_dir():
        raise ToolFailure(f"{prefix} is not a directory")
    entries: list[str] = []
    seen: set[str] = set()
    for rel in repo_files(sandbox, deadline):
        if not _under(rel, prefix):
            continue
        parts = rel[len(prefix) :].lstrip("/").split("/")
        for depth in range(1, min(len(parts), max_depth) + 1):
            is_dir = depth < len(parts)
            entry = "/".join(filter(None, [prefix, *parts[:depth]])) + ("/" if is_dir else "")
            if entry not in seen:
                seen.add(entry)
                entries.append(entry)
    entries.sort()
    if len(entries) > limit:
        return [*entries[:limit], f"[... {len(entries) - limit} more entries: list a subdirectory]"]
    return entries


@dataclass(frozen=True)
class SearchLimits:
    """What one search may read, show and spend."""

    max_matches: int = 100  # shown (all are counted)
    max_line: int = 200  # characters of a matching line shown
    max_files: int = MAX_SEARCH_FILES  # read
    max_bytes: int = MAX_SEARCH_TOTAL_BYTES  # read
    seconds: float = SEARCH_SECONDS  # matching, in all


def search(
    sandbox: Sandbox,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    *,
    limits: SearchLimits = SearchLimits(),
    deadline: Deadline | None = None,
) -> str:
    """Lines matching `pattern` under `path`, as `path:line: text`.

    One search reads at most `limits.max_files` files and `limits.max_bytes` bytes (then says where
    it stopped) and matches for at most `limits.seconds` in all: a pattern that takes longer is a
    `ToolFailure` that tells the model to simplify it. It stops at `deadline`, the attempt's, when
    that comes sooner.
    """
    try:
        matcher = Matcher(pattern, seconds=limits.seconds, deadline=deadline)
    except PatternError as exc:
        raise ToolFailure(f"invalid regular expression {pattern!r}: {exc} (Python `re` syntax)") from None
    prefix = sandbox.relative(path).as_posix()
    prefix = "" if prefix == "." else prefix
    lines_out: list[str] = []
    total = 0
    files_hit = 0
    files_read = 0
    scanned = 0
    for rel in repo_files(sandbox, deadline):
        if not _under(rel, prefix):
            continue
        if matcher.deadline.passed():
            raise _too_slow(limits.seconds, rel)
        if glob and not (fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel.rsplit("/", 1)[-1], glob)):
            continue
        if files_read >= limits.max_files or scanned >= limits.max_bytes:
            read = f"{files_read} files" if files_read >= limits.max_files else f"{_size(scanned)}"
            lines_out.append(f"[... stopped after {read}: narrow the path or glob]")
            break
        target = _readable(sandbox, rel)
        if target is None or not target.is_file() or target.stat().st_size > MAX_SEARCH_FILE_BYTES:
            continue
        data = target.read_bytes()
        files_read += 1
        scanned += len(data)
        if b"\0" in data[:8192]:
            continue
        hit = False
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
            try:
                matched = matcher.search(line)
            except TooSlow:
                raise _too_slow(limits.seconds, f"{rel}:{number}") from None
            if matched:
                total += 1
                hit = True
                if len(lines_out) < limits.max_matches:
                    shown = line if len(line) <= limits.max_line else line[: limits.max_line] + " [...]"
                    lines_out.append(f"{rel}:{number}: {shown}")
        files_hit += hit
    if not total:
        where = f" under {prefix}" if prefix else ""
        return f"No match for {pattern!r}{where}" + (f" in files matching {glob!r}" if glob else "") + "."
    more = (
        f"\n[... {total - len(lines_out)} more matches not shown: narrow the pattern, path or glob]"
        if total > len(lines_out)
        else ""
    )
    return f"{total} matches in {files_hit} files:\n" + "\n".join(lines_out) + more


def _too_slow(seconds: float, where: str) -> ToolFailure:
    return ToolFailure(
        f"the pattern took too long (the search stopped after {seconds:g} s, at {where}); "
        "simplify it: avoid nested or overlapping repetition such as `(a+)+` or `(a|aa)+`, "
        "prefer a literal word or an anchored pattern, or narrow the path or glob."
    )


def _size(count: int) -> str:
    return f"{count / 1024 / 1024:.0f} MB" if count >= 1024 * 1024 else f"{count} bytes"
