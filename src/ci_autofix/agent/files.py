"""The repository's files as the agent sees them: git's view (ignored files left out), inside the sandbox."""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from ci_autofix import shell
from ci_autofix.agent.failure import ToolFailure
from ci_autofix.sandbox import Sandbox, SandboxViolation

MAX_FILES = 50_000
MAX_SEARCH_FILE_BYTES = 1024 * 1024
MAX_SEARCH_TOTAL_BYTES = 200 * 1024 * 1024
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


def repo_files(sandbox: Sandbox) -> list[str]:
    """Workspace-relative paths of tracked and untracked, not ignored, files."""
    root = sandbox.root
    if (root / ".git").exists():
        result = shell.run(
            [
                "git",
                "-c",
                f"safe.directory={root}",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.quotePath=false",
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            cwd=root,
            env=shell.scrubbed_env(),
            timeout=60,
            max_output=64 * 1024 * 1024,
        )
        if result.ok and not result.truncated:
            names = sorted({name for name in result.output.split("\0") if name})
            return [n for n in names if (root / n).is_file() or (root / n).is_symlink()][:MAX_FILES]
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
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


def list_tree(sandbox: Sandbox, path: str = ".", *, max_depth: int = 2, limit: int = 500) -> list[str]:
    """Files and directories under `path`, `max_depth` levels deep, directories ending in `/`."""
    prefix = sandbox.relative(path).as_posix()
    prefix = "" if prefix == "." else prefix
    if prefix and not (sandbox.root / prefix).is_dir():
        raise ToolFailure(f"{prefix} is not a directory")
    entries: list[str] = []
    seen: set[str] = set()
    for rel in repo_files(sandbox):
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


def search(
    sandbox: Sandbox,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    *,
    max_matches: int = 100,
    max_line: int = 200,
) -> str:
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolFailure(f"invalid regular expression {pattern!r}: {exc} (Python `re` syntax)") from None
    prefix = sandbox.relative(path).as_posix()
    prefix = "" if prefix == "." else prefix
    lines_out: list[str] = []
    total = 0
    files_hit = 0
    scanned = 0
    for rel in repo_files(sandbox):
        if not _under(rel, prefix):
            continue
        if scanned > MAX_SEARCH_TOTAL_BYTES:
            lines_out.append(
                f"[... stopped after {MAX_SEARCH_TOTAL_BYTES // 1024 // 1024} MB: narrow the path or glob]"
            )
            break
        if glob and not (fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(rel.rsplit("/", 1)[-1], glob)):
            continue
        target = _readable(sandbox, rel)
        if target is None or not target.is_file() or target.stat().st_size > MAX_SEARCH_FILE_BYTES:
            continue
        data = target.read_bytes()
        scanned += len(data)
        if b"\0" in data[:8192]:
            continue
        hit = False
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
            if regex.search(line):
                total += 1
                hit = True
                if len(lines_out) < max_matches:
                    shown = line if len(line) <= max_line else line[:max_line] + " [...]"
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
