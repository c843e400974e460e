"""The failed jobs' whole logs, for the agent's `logs` tool: written once, read in our process only.

`JobLogs.write(directory, logs, secrets)` stores each job's log as triage reads it (timestamps,
ANSI colours and the `gh run view --log` prefix removed by `triage.normalize`; `##[group]` and
`##[endgroup]` markers removed, `##[error]` and `##[warning]` kept to search for) with every
secret masked (`redact`, with the run's secrets), in a file of
`directory`, which it makes (0700, files 0600). The ladder puts that directory in the work area
next to the copy, never inside it (`Workarea.logs_dir`): as root it is ours alone, so neither the
agent's edits nor code run for the repository as the sandbox's uid can read or change it. The
tool reads the files here, with our own rights, never through the sandbox.

Line numbers are those of the stored log: one stored line per line of the downloaded log (a
masked multi-line secret, such as a private key, becomes one line). Every text a reader returns
wraps log text as untrusted data (`prompts.untrusted`), as the excerpt is.
"""

from __future__ import annotations

import io
import os
import re
from array import array
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_autofix.agent.deadline import Deadline
from ci_autofix.agent.failure import ToolFailure
from ci_autofix.agent.matcher import Matcher, PatternError, TooSlow
from ci_autofix.agent.prompts import untrusted
from ci_autofix.redact import redact
from ci_autofix.triage.logfile import normal_text, read_chunks
from ci_autofix.triage.normalize import clean_lines, shorten

READ_LINES = 400  # at most this many lines per read
READ_CHARS = 12_000  # and this many characters (under the tool results' cap, so nothing is cut mid-way)
SEARCH_SECONDS = 5.0  # one search matches for at most this long, over every line it reads
MAX_MATCHES = 100
MAX_CONTEXT = 10
BLOCK_BYTES = 256 * 1024  # a search tries the pattern on this much of a log at once
SEARCH_LINE_CHARS = 400  # a matching (or context) line is shown at most this long
_GROUP_MARKER = re.compile(r"^##\[(?:group|endgroup)\]", re.M)
PIECE_BYTES = 4 * 1024 * 1024  # the log is cleaned and masked this much at a time
MAX_NAME_CHARS = 100  # of a job's name (the repository's words, shown in our own lines)
_UNSAFE_NAME = re.compile(r"[^\w .,:;/@#+=()\[\]{}-]")


@dataclass(frozen=True)
class JobLog:
    """One failed job's log as it was downloaded (untrusted: its bytes, or the file they were
    streamed to), and the job's name."""

    name: str
    raw: bytes | str | Path


@dataclass(frozen=True)
class _Stored:
    name: str
    path: Path
    starts: array[int]  # the byte offset of each line's start, then the file's size

    @property
    def lines(self) -> int:
        return len(self.starts) - 1


class JobLogs:
    """The stored logs of one run's failed jobs, and the three things the tool does with them."""

    def __init__(self, jobs: Sequence[_Stored]) -> None:
        self.jobs = list(jobs)

    @classmethod
    def write(
        cls,
        directory: Path,
        logs: Sequence[JobLog],
        secrets: Sequence[str] = (),
        *,
        piece_bytes: int = PIECE_BYTES,
    ) -> JobLogs:
        """Normalise, mask and write `logs` to `directory`, which must not exist yet, `piece_bytes`
        of a log at a time (what it holds besides the logs themselves)."""
        directory.mkdir(mode=0o700)  # refuses a directory (or a link) someone else made first
        directory.chmod(0o700)  # whatever the umask
        stored: list[_Stored] = []
        names: set[str] = set()
        for number, log in enumerate(logs, start=1):
            name = _unique(_safe_name(log.name) or f"job {number}", names)
            path = directory / f"{number:03d}.log"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            starts = array("q", [0])
            size = 0
            with os.fdopen(fd, "wb") as out:
                for piece in _normalised(log.raw, secrets, piece_bytes):
                    data = piece.encode("utf-8")
                    out.write(data)
                    at = data.find(b"\n")
                    while at != -1:
                        starts.append(size + at + 1)
                        at = data.find(b"\n", at + 1)
                    size += len(data)
            if starts[-1] != size:
                starts.append(size)  # a last line without a newline
            stored.append(_Stored(name, path, starts))
        return cls(stored)

    @property
    def names(self) -> list[str]:
        return [job.name for job in self.jobs]

    def listing(self) -> str:
        """The jobs and their line counts (job names are the repository's words: untrusted)."""
        return "\n".join(f"- `{job.name}`: {job.lines} lines" for job in self.jobs)

    def list_jobs(self) -> str:
        head = (
            f"{len(self.jobs)} failed job log(s); read one by its name with action `read`, or `search` them:"
        )
        return head + "\n" + untrusted("ci-log jobs", self.listing())

    def read(self, job: str, start: int = 1, end: int | None = None) -> str:
        """Lines `start` to `end` (1-based, inclusive) of one job, at most `READ_LINES` lines and
        `READ_CHARS` characters; the result says when it was shortened and how to read on."""
        found = self._job(job)
        if found.lines == 0:
            return f"The log of `{found.name}` is empty."
        if start < 1 or start > found.lines:
            raise ToolFailure(
                f"`start` must be between 1 and {found.lines} (the log of `{found.name}` has {found.lines} lines)"
            )
        last = found.lines if end is None else end
        if last < start:
            raise ToolFailure(f"`end` ({last}) is before `start` ({start})")
        last = min(last, found.lines, start + READ_LINES - 1)
        shown: list[str] = []
        size = 0
        for number, line in _lines(found, start, last):
            text = f"{number}: {line}"
            if shown and size + len(text) + 1 > READ_CHARS:
                break
            shown.append(text)
            size += len(text) + 1
        stop = start + len(shown) - 1
        wanted = found.lines if end is None else min(end, found.lines)
        status = f"lines {start}-{stop} of {found.lines} of `{found.name}`"
        if stop < wanted:
            status += (
                f" (shortened: at most {READ_LINES} lines or {READ_CHARS:,} characters per read; "
                f"read on with start={stop + 1})"
            )
        return status + "\n" + untrusted(f"ci-log {found.name}", "\n".join(shown))

    def search(
        self,
        pattern: str,
        job: str | None = None,
        *,
        ignore_case: bool = False,
        context: int = 0,
        max_matches: int = 30,
        seconds: float = SEARCH_SECONDS,
        deadline: Deadline | None = None,
    ) -> str:
        """Lines matching `pattern` in one job (or all), `context` lines around each, grep-style
        (`job:line: text` for a match, `job-line- text` around it), at most `max_matches`; matched
        for at most `seconds`, or until `deadline` (the attempt's) when that comes sooner."""
        jobs = [self._job(job)] if job is not None else self.jobs
        context = min(max(context, 0), MAX_CONTEXT)
        max_matches = min(max(max_matches, 1), MAX_MATCHES)
        try:
            matcher = Matcher(pattern, seconds=seconds, ignore_case=ignore_case, deadline=deadline)
        except PatternError as exc:
            raise ToolFailure(f"invalid regular expression {pattern!r}: {exc} (Python `re` syntax)") from None
        out: list[str] = []
        matches = 0
        more = False
        for stored in jobs:
            found, more = _scan(stored, matcher, context, max_matches - matches, out)
            matches += found
            if more:
                break
        where = f"`{jobs[0].name}`" if job is not None else f"{len(jobs)} job log(s)"
        if not matches:
            return f"No match for {pattern!r} in {where}."
        head = f"{matches} match(es) for {pattern!r} in {where}"
        if more:
            head += f" (stopped at {max_matches}, `max_matches`: narrow the pattern or search one job)"
        return head + ":\n" + untrusted("ci-log search", _capped("\n".join(out)))

    def _job(self, name: str) -> _Stored:
        wanted = " ".join(name.split())
        for job in self.jobs:
            if job.name == wanted:
                return job
        near = [job for job in self.jobs if wanted.lower() in job.name.lower()]
        if len(near) == 1:
            return near[0]
        raise ToolFailure(
            f"there is no job log named {name!r}; the jobs are: " + ", ".join(f"`{n}`" for n in self.names)
        )


def _lines(job: _Stored, first: int, last: int) -> Iterator[tuple[int, str]]:
    """Lines `first` to `last` (1-based, inclusive) of the stored file, read with our rights."""
    if last < first:
        return
    with job.path.open("rb") as f:
        f.seek(job.starts[first - 1])
        for number in range(first, last + 1):
            yield number, f.readline().decode("utf-8", "replace").rstrip("\n")


def _scan(job: _Stored, matcher: Matcher, context: int, room: int, out: list[str]) -> tuple[int, bool]:
    """Append to `out` the first `room` matches in `job` with their context; returns how many it
    found and whether there were more."""
    before: deque[tuple[int, str]] = deque(maxlen=context or None)
    after = 0  # context lines still to show after the last match
    last = 0  # the last line shown
    found = 0

    def show(number: int, text: str, mark: str) -> None:
        nonlocal last
        if last and number > last + 1:
            out.append("--")
        out.append(f"{job.name}{mark}{number}{mark} {shorten(text, SEARCH_LINE_CHARS)}")
        last = number

    for first, lines in _blocks(job):
        number = first
        try:
            if not matcher.may_match_a_line("\n".join(lines)):  # most of a log: no line matches
                shown = lines[:after]
                for number, line in enumerate(shown, start=first):
                    show(number, line, "-")
                after -= len(shown)
                if context:
                    rest = lines[len(shown) :]
                    before.extend(enumerate(rest[-context:], start=first + len(lines) - len(rest[-context:])))
                continue
            for number, line in enumerate(lines, start=first):
                if matcher.search(line):
                    if found >= room:
                        return found, True
                    found += 1
                    while before:
                        show(*before.popleft(), "-")
                    show(number, line, ":")
                    after = context
                elif after:
                    show(number, line, "-")
                    after -= 1
                elif context:
                    before.append((number, line))
        except TooSlow:
            raise ToolFailure(
                f"the pattern took too long (the search stopped after {matcher.seconds:g} s, at line {number} of "
                f"`{job.name}`); simplify it: avoid nested or overlapping repetition such as `(a+)+` "
                "or `(a|aa)+`, prefer a literal word or an anchored pattern, or search one job."
            ) from None
    return found, False


def _blocks(job: _Stored) -> Iterator[tuple[int, list[str]]]:
    """The stored log's lines, a block of about `BLOCK_BYTES` at a time, with the first one's number."""
    number = 1
    with job.path.open("rb") as f:
        while number <= job.lines:
            data = f.read(BLOCK_BYTES)
            if not data:
                return
            if not data.endswith(b"\n"):
                data += f.readline()  # to the end of its last line
            lines = data.decode("utf-8", "replace").removesuffix("\n").split("\n")
            yield number, lines
            number += len(lines)


def _safe_name(name: str) -> str:
    """A job's name (the repository's words) as our own lines show it: one line, short, and
    nothing that could end a code span or open and close a delimiter (backticks, `<`, `>`)."""
    return _UNSAFE_NAME.sub("_", " ".join(name.split()))[:MAX_NAME_CHARS]


def _normalised(raw: bytes | str | Path, secrets: Sequence[str], piece_bytes: int) -> Iterator[str]:
    """The log as stored, in pieces of whole lines (read as triage reads a log, `logfile.read_chunks`):
    cleaned by triage's cleaner (`normalize.clean_lines`), `##[group]` markers dropped, then every
    secret masked. A piece that opens a private key block is joined to the next until the block
    ends, so it is masked whole."""
    pending = ""
    first = True
    for chunk, more in _pieces(raw, max(piece_bytes, 1)):
        pending += _GROUP_MARKER.sub("", clean_lines(normal_text(chunk, first)))
        first = False
        if more and _opens_a_key(pending):
            continue
        yield redact(pending, secrets)
        pending = ""
    if pending:
        yield redact(pending, secrets)


def _pieces(raw: bytes | str | Path, size: int) -> Iterator[tuple[bytes, bool]]:
    """The log's chunks (a file read a piece at a time, never whole), each with whether more follows."""
    with (
        raw.open("rb")
        if isinstance(raw, Path)
        else io.BytesIO(raw.encode("utf-8") if isinstance(raw, str) else raw) as stream
    ):
        held: bytes | None = None
        for _offset, chunk in read_chunks(stream, size):
            if held is not None:
                yield held, True
            held = chunk
        if held is not None:
            yield held, False


def _opens_a_key(text: str) -> bool:
    """Whether `text` ends inside a private key block (`-----BEGIN ... PRIVATE KEY-----` with no end yet)."""
    begin = text.rfind("-----BEGIN ")
    return begin != -1 and "PRIVATE KEY" in text[begin : begin + 80] and "-----END " not in text[begin:]


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name} ({n})", n + 1
    taken.add(candidate)
    return candidate


def _capped(text: str) -> str:
    if len(text) <= READ_CHARS:
        return text
    cut = text.rfind("\n", 0, READ_CHARS)
    return (
        text[: cut if cut > 0 else READ_CHARS]
        + "\n[... more matching lines left out: narrow the pattern or lower `context`]"
    )
