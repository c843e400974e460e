"""Version pins read from a repository, and whether a version satisfies them.

Pins come from files the repository controls, so they are parsed strictly: only plain
PEP 440 release versions and comparison clauses are accepted, and only those ever reach a
`pip install` argument. A pin we cannot read is ignored (the tool installed, or its default version, is used instead).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VERSION = r"\d+(?:\.\d+){0,3}(?:(?:a|b|rc)\d+)?(?:\.post\d+)?(?:\.dev\d+)?"
_VERSION_RE = re.compile(rf"^{VERSION}$")
_CLAUSE_RE = re.compile(rf"^(?P<op>===|==|!=|~=|>=|<=|>|<)\s*(?P<version>{VERSION})(?P<star>\.\*)?$")
_PART_RE = re.compile(
    r"^(?P<release>\d+(?:\.\d+)*)(?P<pre>(?:a|b|rc)\d+)?(?:\.post(?P<post>\d+))?(?:\.dev(?P<dev>\d+))?$"
)
_PRE_RANK = {"a": 0, "b": 1, "rc": 2}


def canonical_name(name: str) -> str:
    """A package (or extra, or group) name as pip and poetry compare them (PEP 503): runs of `-`,
    `_` and `.` are one `-`, and case does not count."""
    return re.sub(r"[-_.]+", "-", name).lower()


def is_version(text: str) -> bool:
    return _VERSION_RE.fullmatch(text) is not None


def is_final(version: str) -> bool:
    """A release, not a pre-release or a development version (what pip picks unless asked)."""
    match = _PART_RE.fullmatch(version)
    return match is not None and not match.group("pre") and not match.group("dev")


def newest(versions: list[str]) -> str | None:
    """The highest of `versions` (each a strict version), by PEP 440 order."""
    return max(versions, key=_key, default=None)


def _key(version: str) -> tuple[tuple[int, ...], tuple[int, int], int, int]:
    match = _PART_RE.fullmatch(version)
    if not match:
        raise ValueError(f"not a version: {version!r}")
    release = tuple(int(p) for p in match.group("release").split("."))
    release = release + (0,) * (4 - len(release))
    pre = match.group("pre")
    pre_key = (_PRE_RANK[pre.rstrip("0123456789")], int(pre.lstrip("abrc"))) if pre else (9, 0)
    post = int(match.group("post") or -1)
    dev = int(match.group("dev")) if match.group("dev") else 1 << 30
    return release, pre_key, post, dev


@dataclass(frozen=True)
class Requirement:
    """A version requirement on one tool: `==0.8.6`, `>=24,<25`. Always normalised and validated."""

    spec: str

    @classmethod
    def parse(cls, text: str) -> Requirement | None:
        """Comma-separated comparison clauses, or a bare version (meaning `==`); None if unreadable."""
        text = text.strip()
        if not text or text == "*":
            return None
        if is_version(text):
            return cls(f"=={text}")
        clauses = [c.strip() for c in text.split(",") if c.strip()]
        if not clauses:
            return None
        normalised = []
        for clause in clauses:
            match = _CLAUSE_RE.fullmatch(clause.replace(" ", ""))
            if not match:
                return None
            normalised.append(f"{match.group('op')}{match.group('version')}{match.group('star') or ''}")
        return cls(",".join(normalised))

    @classmethod
    def poetry(cls, text: str) -> Requirement | None:
        """Poetry's caret and tilde forms (`^24.2`, `~1.2.3`), else a PEP 440 specifier."""
        text = text.strip()
        if text[:1] in "^~" and text[1:2] != "=" and is_version(text[1:]):
            release = [int(p) for p in re.split(r"[^\d]", text[1:].split(".dev")[0]) if p][:3]
            if text[0] == "^":
                index = next((i for i, p in enumerate(release) if p != 0), len(release) - 1)
            else:
                index = 0 if len(release) == 1 else 1
            upper = [*release[:index], release[index] + 1]
            return cls(f">={text[1:]},<{'.'.join(map(str, upper))}")
        return cls.parse(text)

    @property
    def exact(self) -> str | None:
        """The one version this requirement allows, when it is a plain `==X`."""
        match = _CLAUSE_RE.fullmatch(self.spec)
        if match and "," not in self.spec and match.group("op") in ("==", "===") and not match.group("star"):
            return match.group("version")
        return None

    def allows(self, version: str) -> bool:
        if not is_version(version):
            return False
        return all(_clause_allows(clause, version) for clause in self.spec.split(","))


def _clause_allows(clause: str, version: str) -> bool:
    match = _CLAUSE_RE.fullmatch(clause)
    if not match:
        return False
    op, target, star = match.group("op"), match.group("version"), bool(match.group("star"))
    if star:
        prefix = target.split(".")
        same = version.split(".")[: len(prefix)] == prefix
        return same if op == "==" else not same if op == "!=" else False
    have, want = _key(version), _key(target)
    if op in ("==", "==="):
        return have == want
    if op == "!=":
        return have != want
    if op == ">=":
        return have >= want
    if op == "<=":
        return have <= want
    # PEP 440: `<V` excludes V's pre-releases, `>V` excludes V's post-releases (unless V is one).
    if op == ">":
        return have > want and not (have[0] == want[0] and want[2] < 0 <= have[2])
    if op == "<":
        pre = have[1] != (9, 0) or have[3] < 1 << 30
        return have < want and not (have[0] == want[0] and want[1] == (9, 0) and pre)
    # ~=X.Y.Z: >= X.Y.Z and == X.Y.*
    parts = target.split(".")
    if len(parts) < 2:
        return False
    prefix = [str(int(p)) for p in _key(target)[0][: len(parts) - 1]]
    return have >= want and [str(p) for p in _key(version)[0][: len(prefix)]] == prefix
