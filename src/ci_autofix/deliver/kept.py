"""The work of a halted attempt, kept for a human: nothing of it is proposed or pushed.

When a halt comes after a change exists (a policy block, a failed verification, a budget or a
model outage after the agent edited files), its diff, the verification evidence and the agent's
transcript are shown collapsed in the job summary (capped), and written in full, redacted, under
`RUNNER_TEMP/ci-autofix/run-<id>-<attempt>/` with their paths in the outputs `patch-path` and
`transcript-path`, so the workflow can keep them (`actions/upload-artifact` under `if: always()`).
In a container action the runner mounts `RUNNER_TEMP` at `/github/runner_temp`: the files are
written there and the outputs name them by the runner's path, which the next steps see.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from ci_autofix.deliver.report import clip
from ci_autofix.errors import Kept
from ci_autofix.markdown import fence, html_code
from ci_autofix.redact import Redacted

CONTAINER_TEMP = Path("/github/runner_temp")
MAX_SUMMARY_CHARS = 20_000


def summary(kept: Kept) -> str:
    """The kept work as collapsed sections of the job summary."""
    parts = []
    if kept.diff:
        parts.append(
            _details("The change that was not proposed", fence(clip(kept.diff, MAX_SUMMARY_CHARS), "diff"))
        )
    if kept.evidence:  # open: its output tail says whether the fix or the environment failed
        parts.append(kept.evidence.replace("### Verification", "### Its verification", 1))
    if kept.transcript:
        text = json.dumps(kept.transcript, indent=1, ensure_ascii=False)
        parts.append(
            _details(
                f"The agent's transcript ({len(kept.transcript)} messages)",
                fence(clip(text, MAX_SUMMARY_CHARS), "json"),
            )
        )
    return "\n\n".join(parts)


def write(
    kept: Kept, runner_temp: Path | None, name: str, redact: Callable[[str], Redacted]
) -> dict[str, str]:
    """Write the kept work under the runner's temp dir, owned like that dir (so the runner can
    clean it up); the outputs that name the files. Every step goes through a directory handle
    opened without following links, so nothing swapped in on the way redirects a write."""
    if runner_temp is None:
        return {}
    inside = CONTAINER_TEMP if CONTAINER_TEMP.is_dir() else runner_temp
    top = os.open(inside, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        owner = os.fstat(top)
        ours = _directory(top, "ci-autofix", owner, fresh=False)
        try:
            run = _directory(ours, name, owner, fresh=True)
        finally:
            os.close(ours)
        try:
            return _files(kept, run, owner, redact, runner_temp / "ci-autofix" / name)
        finally:
            os.close(run)
    finally:
        os.close(top)


def _directory(parent: int, name: str, owner: os.stat_result, *, fresh: bool) -> int:
    """A handle on `name` in `parent`: made now (`fresh`: it must be), or an existing one that only
    its owner (us, or the temp dir's owner) may write."""
    try:
        os.mkdir(name, 0o755, dir_fd=parent)
    except FileExistsError:
        if fresh:
            raise
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    info = os.fstat(fd)
    if info.st_uid not in (os.geteuid(), owner.st_uid) or info.st_mode & 0o022:
        os.close(fd)
        raise PermissionError(
            f"{name} in the runner's temp dir belongs to someone else, or others may write it"
        )
    if os.geteuid() == 0:
        os.fchown(fd, owner.st_uid, owner.st_gid)
    return fd


def _files(
    kept: Kept, directory: int, owner: os.stat_result, redact: Callable[[str], Redacted], shown: Path
) -> dict[str, str]:
    files = {
        "patch-path": ("fix.patch", kept.diff),
        "evidence-path": ("evidence.md", kept.evidence),
        "transcript-path": (
            "transcript.json",
            json.dumps(kept.transcript, indent=1, ensure_ascii=False) if kept.transcript else "",
        ),
    }
    outputs = {}
    for output, (filename, text) in files.items():
        if not text:
            continue
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(filename, flags, 0o644, dir_fd=directory)
        if os.geteuid() == 0:
            os.fchown(fd, owner.st_uid, owner.st_gid)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(redact(text).text)
        outputs[output] = str(shown / filename)
    return outputs


def _details(title: str, body: str) -> str:
    return f"<details><summary>{html_code(title)}</summary>\n\n{body}\n\n</details>"
