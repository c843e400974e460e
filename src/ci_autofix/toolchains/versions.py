"""Version specs as the setup actions read them, parsed strictly, and matched against a publisher's releases.

A spec is what a workflow or a repository file declares: an exact version (`20.11.0`, `v20.11.0`),
a partial one (`20`, `1.21`), an x-range (`20.x`), an npm/semver range (`^20.1`, `>=18 <21 || 22`),
or an alias (`lts/*`, `lts/iron`, `node`, `latest`, `stable`). Anything else is refused: repository
text only reaches a URL as a version taken from the publisher's own index (or, for Rust, a channel
name checked here), never as itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Version = tuple[int, int, int]

_NUMBER = r"(?:0|[1-9]\d{0,5})"
_PART = rf"(?:{_NUMBER}|[xX*])"
_TOKEN = re.compile(rf"^(>=|<=|>|<|=|\^|~)?v?({_PART})(?:\.({_PART}))?(?:\.({_PART}))?$")
_EXACT = re.compile(rf"^v?({_NUMBER})\.({_NUMBER})\.({_NUMBER})$")
_ALIAS = re.compile(r"^(?:lts/\*|lts/[a-z]{3,16}|lts/-[1-9]|node|latest|current|stable|oldstable)$")
_MAX_SPEC = 120
_INFINITY = (10**9, 0, 0)


class BadSpec(ValueError):
    """Text that is not a version spec we accept."""


@dataclass(frozen=True)
class Comparator:
    op: str  # one of >=, <, ==
    version: Version

    def admits(self, version: Version) -> bool:
        if self.op == ">=":
            return version >= self.version
        if self.op == "<":
            return version < self.version
        return version == self.version


@dataclass(frozen=True)
class Spec:
    """A parsed spec: an alias, or alternatives (`||`) of comparator sets that must all hold."""

    text: str
    alias: str | None = None
    alternatives: tuple[tuple[Comparator, ...], ...] = ()

    def admits(self, version: Version) -> bool:
        return any(all(c.admits(version) for c in group) for group in self.alternatives)

    @property
    def anchor(self) -> Version:
        """The version the spec is nearest to: its lowest admitted bound (for the fallback)."""
        lows = [c.version for group in self.alternatives for c in group if c.op in (">=", "==")]
        return min(lows) if lows else (0, 0, 0)


def parse(text: str) -> Spec:
    """The spec `text` declares, or `BadSpec`: digits and dots, x-ranges, semver ranges, known aliases."""
    text = text.strip()
    if not text or len(text) > _MAX_SPEC or not text.isascii() or not text.isprintable():
        raise BadSpec(f"{text[:40]!r} is not a version")
    if _ALIAS.match(text.lower()):
        return Spec(text, alias=text.lower())  # nvm and setup-node read lts/Iron as lts/iron
    alternatives = []
    for alternative in text.split("||"):
        alternatives.append(tuple(_comparators(alternative)))
    return Spec(text, alternatives=tuple(alternatives))


def exact(text: str) -> Version | None:
    """`X.Y.Z` (or `vX.Y.Z`) as a version, or None."""
    match = _EXACT.match(text.strip())
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def render(version: Version) -> str:
    return ".".join(str(n) for n in version)


def _comparators(alternative: str) -> list[Comparator]:
    words = alternative.split()
    if not words:
        raise BadSpec("an empty alternative in a version range")
    if len(words) == 3 and words[1] == "-":  # a hyphen range: 1.2.3 - 2.3.4
        low, high = _token(words[0]), _token(words[2])
        if low[0] or high[0]:
            raise BadSpec(f"{alternative.strip()!r} mixes an operator into a hyphen range")
        return [Comparator(">=", _fill(low[1])), *_upper_inclusive(high[1])]
    found: list[Comparator] = []
    for word in words:
        op, parts = _token(word)
        found += _desugar(op, parts)
    return found


def _token(word: str) -> tuple[str, list[int | None]]:
    match = _TOKEN.match(word)
    if not match:
        raise BadSpec(f"{word[:40]!r} is not a version")
    parts: list[int | None] = []
    for raw in match.groups()[1:]:
        if raw is None or raw in "xX*":
            parts.append(None)
        else:
            parts.append(int(raw))
    # anything after a wildcard is a wildcard too (1.x.3 is 1.x)
    if None in parts:
        parts[parts.index(None) :] = [None] * (3 - parts.index(None))
    return match[1] or "", parts


def _fill(parts: Sequence[int | None]) -> Version:
    a, b, c = (p or 0 for p in parts)
    return (a, b, c)


def _bump(parts: Sequence[int | None]) -> Version:
    """The first version after everything `parts` (a partial version) covers."""
    known = [p for p in parts if p is not None]
    if not known:
        return _INFINITY
    if len(known) == 1:
        return (known[0] + 1, 0, 0)
    if len(known) == 2:
        return (known[0], known[1] + 1, 0)
    return (known[0], known[1], known[2] + 1)


def _bare(parts: list[int | None]) -> list[Comparator]:
    if parts[0] is None:
        return [Comparator(">=", (0, 0, 0))]
    if None not in parts:
        return [Comparator("==", _fill(parts))]
    return [Comparator(">=", _fill(parts)), Comparator("<", _bump(parts))]


def _upper_inclusive(parts: list[int | None]) -> list[Comparator]:
    """`<= parts`: below the first version after everything `parts` covers."""
    return [] if parts[0] is None else [Comparator("<", _bump(parts))]


def _desugar(op: str, parts: list[int | None]) -> list[Comparator]:
    low = _fill(parts)
    if op in ("", "="):
        return _bare(parts)
    if op == ">=":
        return [Comparator(">=", low)]
    if op == ">":
        return [Comparator(">=", _bump(parts) if None in parts else (low[0], low[1], low[2] + 1))]
    if op == "<":
        return [Comparator("<", low)]
    if op == "<=":
        return _upper_inclusive(parts)
    if op == "~":
        known = [p for p in parts if p is not None]
        return [Comparator(">=", low), Comparator("<", _bump(known[:2] if len(known) > 1 else known))]
    # ^: the leftmost non-zero part may not change
    known = [p for p in parts if p is not None]
    if not known:
        return [Comparator(">=", (0, 0, 0))]
    if known[0] != 0 or len(known) == 1:
        high = (known[0] + 1, 0, 0)
    elif len(known) == 2 or known[1] != 0:
        high = (0, known[1] + 1, 0)
    else:
        high = (0, 0, known[2] + 1)
    return [Comparator(">=", low), Comparator("<", high)]


def newest(spec: Spec, versions: Iterable[Version]) -> Version | None:
    """The newest of `versions` the (non-alias) spec admits."""
    admitted = [v for v in versions if spec.admits(v)]
    return max(admitted) if admitted else None


def nearest(target: Version, versions: Iterable[Version]) -> Version | None:
    """The version closest to `target`: same major first, then same minor, then the closest patch,
    the newer one on a tie."""

    def distance(v: Version) -> tuple[int, int, int, int]:
        return (
            abs(v[0] - target[0]),
            abs(v[1] - target[1]) if v[0] == target[0] else 0,
            abs(v[2] - target[2]) if v[:2] == target[:2] else 0,
            -v[0] * 10**12 - v[1] * 10**6 - v[2],
        )

    candidates = list(versions)
    return min(candidates, key=distance) if candidates else None
