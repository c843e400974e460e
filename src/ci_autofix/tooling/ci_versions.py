"""The tool versions CI ran: what the failed job printed, and what the package index had
released when the failing commit was made.

The job's log is untrusted text. A version is read from it only in its strict PEP 440 form
(`tooling.versions`), only for a package we ask about, and it is only ever a version (the
`==<version>` of a requirement we build), never a command. The lines that say which version ran:

- an installer's report: pip's `Successfully installed black-24.2.0 ruff-0.11.2`, uv's
  ` + ruff==0.11.2`, Poetry's `- Installing ruff (0.11.2)`;
- the tool's own `--version` output: `ruff 0.11.2`, `black, 24.2.0 (compiled: yes)`, isort's
  banner line `VERSION 5.13.2`;
- pre-commit's `[INFO] Installing environment for https://github.com/astral-sh/ruff-pre-commit@v0.4.1`.

The last such line wins (a later install replaced an earlier one).

For a range, or no pin at all, the version is the newest final release the range allows that
the index had when CI ran: the runner's timestamp on the log's first line (a job can run hours or
days after its commit, and a release in between is what it installed), else, or when that is
earlier, the failing commit's date; when it had none, the newest pre-release, as pip picks
(black's releases before 22.1.0 were all betas: an unpinned `black` in 2020 installed 19.10b0): the upload times of PyPI's JSON API
(`<index>/<name>/json`). The index is ours (`INDEX_ENV`, PyPI by default; empty turns the lookup
off), never a URL the repository names.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ci_autofix.git import Git
from ci_autofix.tooling.tools import PRE_COMMIT_REPOS
from ci_autofix.tooling.versions import VERSION, Requirement, canonical_name, is_final, is_version, newest
from ci_autofix.triage.normalize import clean_line

INDEX_ENV = "CI_AUTOFIX_INDEX_JSON_URL"
PYPI_JSON = "https://pypi.org/pypi"
_MAX_LOG_BYTES = 64 * 1024 * 1024  # of one job's log read for versions
_MAX_INDEX_BYTES = 64 * 1024 * 1024  # of one package's JSON (ruff's lists every file of every release)
_INDEX_TIMEOUT = 20.0
_LINE_CHARS = 160  # of a log line quoted as the source of a version

_PIP_RE = re.compile(r"^Successfully installed (?P<list>.+)$")
_UV_RE = re.compile(rf"^\s*\+\s*(?P<name>[A-Za-z0-9][\w.-]*)==(?P<version>{VERSION})$")
_POETRY_RE = re.compile(
    rf"^\s*-\s*(?:Installing|Updating) (?P<name>[A-Za-z0-9][\w.-]*) \((?:\S+ -> )?(?P<version>{VERSION})\)$"
)
_OWN_RE = (
    ("ruff", re.compile(rf"^ruff (?P<version>{VERSION})$")),
    ("black", re.compile(rf"^black, (?:version )?(?P<version>{VERSION})(?: \(compiled: \w+\))?$")),
    ("isort", re.compile(rf"^\s*VERSION (?P<version>{VERSION})$")),
)
_PRE_COMMIT_RE = re.compile(
    r"^\[INFO\] (?:Installing|Initializing) environment for (?P<url>https://\S+?)@(?P<rev>[\w.+-]+?)\.?$"
)


@dataclass(frozen=True)
class Printed:
    """A version the failed job's log printed, and the line that printed it (cut short)."""

    version: str
    line: str


def printed_versions(lines: Iterable[str], packages: Collection[str] | None = None) -> dict[str, Printed]:
    """The version of each package (of `packages`, when given) the log's `lines` say was installed
    or ran (the last wins)."""
    found: dict[str, Printed] = {}

    def seen(name: str, version: str, line: str) -> None:
        package = canonical_name(name)
        if (packages is None or package in packages) and is_version(version):
            found[package] = Printed(version, line.strip()[:_LINE_CHARS])

    for raw in lines:
        line = clean_line(raw).rstrip()
        if match := _PIP_RE.match(line):
            for item in match.group("list").split():
                name, _, version = item.rpartition("-")
                seen(name, version, line)
        elif match := _UV_RE.match(line) or _POETRY_RE.match(line):
            seen(match.group("name"), match.group("version"), line)
        elif match := _PRE_COMMIT_RE.match(line):
            url = match.group("url").lower()
            package = next((pkg for marker, pkg in PRE_COMMIT_REPOS if marker in url), None)
            if package:
                seen(package, match.group("rev").removeprefix("v"), line)
        else:
            for package, pattern in _OWN_RE:
                if match := pattern.match(line):
                    seen(package, match.group("version"), line)
    return found


def log_lines(raw: bytes | str | Path) -> Iterator[str]:
    """The lines of one downloaded job log (its bytes, text, or the file it was streamed to), at
    most `_MAX_LOG_BYTES` of it."""
    if isinstance(raw, Path):
        try:
            with raw.open("rb") as handle:
                data = handle.read(_MAX_LOG_BYTES)
        except OSError:
            return
    else:
        data = raw.encode("utf-8", "replace") if isinstance(raw, str) else raw[:_MAX_LOG_BYTES]
    yield from data.decode("utf-8", "replace").splitlines()


_STAMP_RE = re.compile(r"^\ufeff?(?P<stamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?Z ")


def ran_at(line: str) -> datetime | None:
    """When a job ran, from the timestamp the runner put on a line of its log (UTC), else None."""
    match = _STAMP_RE.match(line)
    if match is None:
        return None
    try:
        return datetime.fromisoformat(match.group("stamp")).replace(tzinfo=UTC)
    except ValueError:
        return None


def commit_date(git: Git, sha: str) -> datetime | None:
    """When `sha` was committed (its committer date): CI ran it then, with what the index had."""
    result = git.run("log", "-1", "--format=%cI", sha, check=False)
    try:
        return datetime.fromisoformat(result.output.strip()) if result.ok else None
    except ValueError:
        return None


def index_url() -> str:
    """The JSON API of the package index we ask: ours, from our environment, never the repository's."""
    return os.environ.get(INDEX_ENV, PYPI_JSON).strip()


class IndexUnknown(Exception):
    """Why the index cannot say which release was newest (a sentence for the evidence)."""


def newest_at(package: str, requirement: Requirement | None, date: datetime, index: str) -> str:
    """The newest final release of `package` that `requirement` allows and that the index had at
    `date` (the first upload of any of its files), else its newest pre-release (pip's rule: a
    pre-release is picked only when no final release fits); raises `IndexUnknown` with the reason."""
    url = f"{index.rstrip('/')}/{package}/json"
    if not url.startswith(("https://", "http://")):
        raise IndexUnknown(f"the package index URL {index!r} is not an http(s) URL")
    try:
        with urllib.request.urlopen(url, timeout=_INDEX_TIMEOUT) as response:  # noqa: S310 (ours: http(s) only)
            data = json.loads(response.read(_MAX_INDEX_BYTES + 1)[:_MAX_INDEX_BYTES])
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise IndexUnknown(f"the package index ({index}) could not be read for {package}: {exc}") from None
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict):
        raise IndexUnknown(f"the package index ({index}) lists no releases of {package}")
    when = date if date.tzinfo else date.replace(tzinfo=UTC)
    finals: list[str] = []
    pre_releases: list[str] = []
    for version, files in releases.items():
        if not (isinstance(version, str) and is_version(version) and ".dev" not in version):
            continue
        if requirement is not None and not requirement.allows(version):
            continue
        uploaded = _first_upload(files)
        if uploaded is not None and uploaded <= when:
            (finals if is_final(version) else pre_releases).append(version)
    found = newest(finals) or newest(pre_releases)
    if found is None:
        fits = f" allowed by `{requirement.spec}`" if requirement else ""
        raise IndexUnknown(f"the package index ({index}) had no release of {package}{fits} on {when.date()}")
    return found


def _first_upload(files: object) -> datetime | None:
    times = []
    for entry in files if isinstance(files, list) else ():
        if not isinstance(entry, dict) or entry.get("yanked") is True:
            continue
        stamp = entry.get("upload_time_iso_8601") or entry.get("upload_time")
        try:
            uploaded = datetime.fromisoformat(str(stamp))
        except ValueError:
            continue
        times.append(uploaded if uploaded.tzinfo else uploaded.replace(tzinfo=UTC))
    return min(times, default=None)


@dataclass
class CIRun:
    """What the failed run tells about the tool versions it ran: the versions its log printed and
    when it ran (the failing commit's date, or the log's later timestamp), with the index to ask
    about releases at that date. Each version
    decided for a tool is recorded in `decided`, for the evidence."""

    printed: dict[str, Printed] = field(default_factory=dict)
    date: datetime | None = None
    index: str = ""  # empty: the index is not asked
    dated: str = "the failing commit's date"  # what `date` is, for the evidence
    decided: dict[str, tuple[str, str]] = field(default_factory=dict)  # package -> (version, where read)
    _asked: dict[tuple[str, str], str | IndexUnknown] = field(default_factory=dict)

    @classmethod
    def read(cls, logs: Sequence[bytes | str | Path], date: datetime | None, index: str) -> CIRun:
        """The versions the `logs` printed; the date is when the job ran (its log's first timestamp,
        to the second) when that is not before `date` (the failing commit's)."""
        printed: dict[str, Printed] = {}
        dated = "the failing commit's date"
        for raw in logs:
            lines = log_lines(raw)
            first = next(lines, "")
            ran = ran_at(first)
            if ran is not None and (date is None or ran >= date):
                date, dated = ran, "when the failed job ran"
            printed.update(printed_versions(itertools.chain([first], lines)))
        return cls(printed, date, index, dated)

    @classmethod
    def of(cls, logs: Sequence[bytes | str | Path], git: Git, sha: str) -> CIRun:
        """The failed jobs' `logs`, the date of the failing commit `sha`, and our index."""
        return cls.read(logs, commit_date(git, sha), index_url())

    @property
    def as_of(self) -> datetime | None:
        """When CI ran, for resolving what the job installed as it was resolved then (pip's
        `--uploaded-prior-to`); None when that is not known or the index is not asked (an empty
        `INDEX_ENV` turns release dates off, these too)."""
        return self.date if self.index else None

    def released(self, package: str, requirement: Requirement | None) -> str:
        """The newest release when CI ran (`date`) that fits; raises `IndexUnknown`."""
        if self.date is None:
            raise IndexUnknown("the failing commit's date is not known")
        if not self.index:
            raise IndexUnknown("the package index is not asked (its URL is empty)")
        key = (package, requirement.spec if requirement else "")
        if key not in self._asked:
            try:
                self._asked[key] = newest_at(package, requirement, self.date, self.index)
            except IndexUnknown as why:
                self._asked[key] = why
        answer = self._asked[key]
        if isinstance(answer, IndexUnknown):
            raise answer
        return answer

    def record(self, package: str, requirement: Requirement | None, source: str | None) -> None:
        version = (requirement.exact or requirement.spec) if requirement else "any version"
        self.decided[package] = (version, source or "no pin; the version installed here")

    def described(self) -> list[tuple[str, str, str]]:
        """Each tool decided: (package, version, where that was read)."""
        return [(package, *self.decided[package]) for package in sorted(self.decided)]
