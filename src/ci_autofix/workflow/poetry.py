"""The job's `poetry install`, followed without running poetry: what it would have installed, read
from the failing commit's `pyproject.toml` and `poetry.lock`.

Poetry is repository-controlled configuration that executes plugins, so it is not run here. What
`poetry install` does is read instead: the root's dependencies of the groups the options select
(`--with`, `--without`, `--only`, `--no-dev`; the main group and every group not marked optional
by default), the root's extras (`-E`/`--extras`, `--all-extras`), then the lock's packages they
reach, at the lock's exact versions, through each locked package's own dependencies, extras and
markers (poetry installs what the lock resolved, nothing newer). The result is a requirements
file (`requirements`): one `name==version ; marker` line per package, with the lock's file
hashes, installed with `pip install --no-deps --require-hashes`. pip evaluates the markers (the
conditions along every path that reaches a package, joined) for the environment's Python.

The project itself (unless `--no-root`): for a poetry project, as poetry installs it: a `.pth`
file naming its package directories, and its console scripts (`Root`); a project built by
another backend, `pip install --no-deps -e .`.

Both lock formats are read: poetry 1.x's (`category`, hashes in `[metadata.files]`) and 2.x's
(`files` per package, `groups`, `markers`); keys this reader does not know are ignored. What it
cannot follow (an unreadable lock, a package from git, a URL, a path or another index, an option
it does not know) is said in `PoetryInstall.error`, with the remedy, and nothing is guessed.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field

from ci_autofix.fixers.recipes import Read
from ci_autofix.tooling.versions import Requirement, canonical_name

_NAME_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_VERSION_RE = re.compile(r"^[0-9][0-9A-Za-z.+!_-]*$")
_HASH_RE = re.compile(r"^(?:sha256|sha384|sha512):[0-9a-f]{32,128}$")
# a PEP 508 marker as poetry writes it: no line break, no backslash, nothing a requirements file reads
_MARKER_RE = re.compile(r"^[\w \t.'\"()<>=!~*,+-]+$")
_SCRIPT_NAME_RE = re.compile(r"^[A-Za-z0-9][\w.-]*$")
_REFERENCE_RE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_PEP508_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?\s*(?P<spec>[^;@]*?)\s*(?:;(?P<marker>.*))?$"
)
_POETRY_BACKENDS = frozenset({"poetry.core.masonry.api", "poetry.masonry.api"})
_MAX_CONDITIONS = 32  # distinct paths' conditions kept per package; more, and it is always installed
_HARMLESS = frozenset(
    {"-n", "--no-interaction", "--no-ansi", "--ansi", "-q", "--quiet", "-v", "-vv", "-vvv", "--verbose"}
    | {"--compile", "--sync", "--remove-untracked", "--no-cache", "--no-plugins", "--dev"}
)
_UNLOCKED = frozenset({"pip", "setuptools", "wheel", "distribute"})  # poetry 1.x's "unsafe" packages
_REMEDY = "set `setup-command` to the commands that install what CI's job installed"


@dataclass(frozen=True)
class Locked:
    """One package of the lock, as it is installed: its exact version, the condition (a PEP 508
    marker, empty for always) and the lock's hashes of its files."""

    name: str
    version: str
    marker: str = ""
    hashes: tuple[str, ...] = ()

    def requirement(self) -> str:
        line = f"{self.name}=={self.version}" + (f" ; {self.marker}" if self.marker else "")
        return " ".join([line, *(f"--hash={h}" for h in self.hashes)])


@dataclass(frozen=True)
class Root:
    """The project as poetry installs it: the directories a `.pth` file names (relative to the
    checkout) and the console scripts (`name`, `module:attribute`); `pip` for a project another
    build backend builds (`pip install --no-deps -e .`)."""

    name: str
    paths: tuple[str, ...] = (".",)
    scripts: tuple[tuple[str, str], ...] = ()
    pip: bool = False
    version: str = "0"
    # its entry points other than console scripts: (group, name, `module:attribute`)
    entry_points: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class PoetryInstall:
    """What the job's `poetry install` line installs: the lock's packages and the project."""

    line: str  # the job's command, as shown
    packages: tuple[Locked, ...] = ()
    root: Root | None = None
    error: str = ""  # why it is not followed: the cause, and the remedy
    notes: tuple[str, ...] = ()

    def requirements(self, *, hashed: bool) -> str:
        """The requirements file of the packages with (`hashed`) or without the lock's hashes."""
        chosen = [p for p in self.packages if bool(p.hashes) == hashed]
        return "".join(p.requirement() + "\n" for p in chosen)

    def describe(self) -> str:
        """What is installed for it, for the setup's evidence."""
        root = (
            ""
            if self.root is None
            else ", then the project" + (" (`pip install -e .`)" if self.root.pip else "")
        )
        return f"{self.line} (followed: {len(self.packages)} packages of poetry.lock at its versions{root})"


class _Unfollowed(Exception):
    """Why the `poetry install` cannot be followed (the cause, for the report)."""


@dataclass
class _Options:
    only: list[str] | None = None
    with_: list[str] = field(default_factory=list)
    without: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)
    all_extras: bool = False
    no_root: bool = False
    only_root: bool = False


def is_poetry_install(words: list[str]) -> bool:
    return len(words) >= 2 and words[0].rsplit("/", 1)[-1] == "poetry" and words[1] == "install"


def follow(words: list[str], read: Read) -> PoetryInstall:
    """The `poetry install` of `words` (its options), from `read`'s `pyproject.toml` and `poetry.lock`."""
    line = shlex.join(words)
    try:
        options = _options(words[2:])
        pyproject = _toml(read("pyproject.toml"), "pyproject.toml")
        lock = _toml(read("poetry.lock"), "poetry.lock")
        project = _Project.of(pyproject)
        groups = project.selected(options)
        roots = [d for group in sorted(groups) for d in project.groups.get(group, [])]
        extras = project.extras_selected(options)
        roots = [d for d in roots if not d.optional or canonical_name(d.name) in extras]
        packages = () if options.only_root else _Lock.of(lock).select(roots, project.name)
        root = None if options.no_root else project.root(read)
    except _Unfollowed as why:
        return PoetryInstall(line, error=f"ci-autofix did not follow `{line}`: {why}; {_REMEDY}.")
    unhashed = [p.name for p in packages if not p.hashes]
    notes = (
        (
            f"poetry.lock has no file hashes for {', '.join(f'`{n}`' for n in unhashed[:5])}: installed without a hash check.",
        )
        if unhashed
        else ()
    )
    return PoetryInstall(line, packages, root, notes=notes)


def _options(args: list[str]) -> _Options:
    found = _Options()
    it = iter(args)
    for arg in it:
        name, eq, value = arg.partition("=")
        if name in ("--with", "--without", "--only", "-E", "--extras"):
            value = value if eq else next(it, "")
            if not value:
                raise _Unfollowed(f"`{name}` has no value")
            names = [canonical_name(v) for v in re.split(r"[,\s]+", value) if v]
            if name == "--with":
                found.with_ += names
            elif name == "--without":
                found.without += names
            elif name == "--only":
                found.only = [*(found.only or []), *names]
            else:
                found.extras += names
        elif arg == "--no-dev":
            found.only = [*(found.only or []), "main"]
        elif arg == "--all-extras":
            found.all_extras = True
        elif arg == "--no-root":
            found.no_root = True
        elif arg == "--only-root":
            found.only_root = True
        elif arg not in _HARMLESS:
            raise _Unfollowed(f"its option `{arg}` is not one ci-autofix reads")
    return found


def _toml(text: str | None, name: str) -> dict[str, object]:
    if text is None:
        raise _Unfollowed(f"`{name}` is missing at the failing commit (or larger than ci-autofix reads)")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _Unfollowed(f"`{name}` is not valid TOML ({exc})") from None


def _table(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


# ---- a dependency: the root's or a locked package's --------------------------------------------------------
@dataclass(frozen=True)
class _Dependency:
    name: str
    constraint: str = "*"
    markers: tuple[str, ...] = ()  # each a PEP 508 marker; all must hold
    extras: tuple[str, ...] = ()
    optional: bool = False


def _dependencies(name: str, value: object, where: str) -> list[_Dependency]:
    """The dependency `name: value` of a poetry table: a constraint, a table, or a list of tables
    (one per Python version or platform)."""
    if not _NAME_RE.match(name):
        raise _Unfollowed(f"{where} names the package `{name[:60]}`, which is not a package name")
    if isinstance(value, str):
        return [_Dependency(name, value)]
    if isinstance(value, list):
        return [d for item in value for d in _dependencies(name, item, where)]
    if not isinstance(value, dict):
        raise _Unfollowed(f"{where} gives `{name}` as neither a version nor a table")
    for key in ("git", "url", "path", "file"):
        if key in value:
            raise _Unfollowed(f"{where} installs `{name}` from a {key}, not from PyPI")
    markers = []
    if isinstance(value.get("markers"), str):
        markers.append(_marker(value["markers"], where))
    if isinstance(value.get("python"), str):
        markers.append(_python_marker(value["python"], where))
    if isinstance(value.get("platform"), str):
        markers.append(_marker(f'sys_platform == "{value["platform"]}"', where))
    extras = value.get("extras")
    return [
        _Dependency(
            name,
            str(value.get("version", "*")),
            tuple(markers),
            tuple(canonical_name(str(e)) for e in extras) if isinstance(extras, list) else (),
            value.get("optional") is True,
        )
    ]


def _marker(text: str, where: str) -> str:
    text = " ".join(text.split())
    if not text or re.search(r"\bextra\b", text):  # an extra's condition: `optional` and `extras` decide
        return ""
    if not _MARKER_RE.match(text) or re.search(r"(?:^|\s)-", text):  # pip reads ` -x` as its option
        raise _Unfollowed(f"{where} has the marker `{text[:80]}`, which ci-autofix does not read")
    return text


def _python_marker(constraint: str, where: str) -> str:
    """A poetry Python constraint (`^3.8`, `>=3.6,<4.0`, `~2.7 || ^3.6`) as a marker."""
    alternatives = []
    for part in constraint.split("||"):
        requirement = _requirement(part)
        if requirement is None:
            raise _Unfollowed(
                f"{where} has the Python constraint `{constraint[:60]}`, which ci-autofix does not read"
            )
        if requirement == "*":
            return ""
        clauses = re.findall(r"(===|==|!=|~=|>=|<=|>|<)([^,]+)", requirement)
        alternatives.append(" and ".join(f'python_full_version {op} "{v}"' for op, v in clauses))
    return " or ".join(f"({a})" for a in alternatives) if len(alternatives) > 1 else alternatives[0]


def _requirement(part: str) -> str | None:
    """One `||`-free poetry constraint as PEP 440 clauses (`*` for any), or None if unreadable."""
    part = part.strip()
    if part in ("", "*"):
        return "*"
    clauses = [c for c in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", part) if c]
    specs = []
    for clause in clauses:
        clause = f"=={clause}" if clause[:1].isdigit() else clause
        parsed = Requirement.poetry(clause) if clause[:1] in "^~" else Requirement.parse(clause)
        if parsed is None:
            return None
        specs.append(parsed.spec)
    return ",".join(specs)


def _allows(constraint: str, version: str) -> bool | None:
    """Whether the poetry `constraint` allows `version`; None when it cannot be read."""
    answers = []
    for part in constraint.split("||"):
        requirement = _requirement(part)
        if requirement is None:
            return None
        answers.append(requirement == "*" or Requirement(requirement).allows(version))
    return any(answers)


# ---- the project -------------------------------------------------------------------------------------------
@dataclass
class _Project:
    name: str
    poetry: dict[str, object]
    groups: dict[str, list[_Dependency]]
    optional_groups: set[str]
    extras: dict[str, set[str]]  # extra -> the root's optional dependencies it installs
    backend: str
    scripts: dict[str, object]
    project: dict[str, object]

    @classmethod
    def of(cls, pyproject: dict[str, object]) -> _Project:
        tool = _table(pyproject.get("tool"))
        poetry = _table(tool.get("poetry"))
        project = _table(pyproject.get("project"))
        if not poetry and not project:
            raise _Unfollowed("`pyproject.toml` has neither `[tool.poetry]` nor `[project]`")
        groups: dict[str, list[_Dependency]] = {"main": []}
        optional: set[str] = set()
        for name, value in _table(poetry.get("dependencies")).items():
            if name != "python":
                groups["main"] += _dependencies(name, value, "`[tool.poetry.dependencies]`")
        extras: dict[str, set[str]] = {}
        for text in _list(project.get("dependencies")):
            groups["main"].append(_pep508(str(text), "`[project] dependencies`"))
        for extra, texts in _table(project.get("optional-dependencies")).items():
            deps = [_pep508(str(t), f"`[project.optional-dependencies] {extra}`") for t in _list(texts)]
            groups["main"] += [_Dependency(d.name, d.constraint, d.markers, d.extras, True) for d in deps]
            extras.setdefault(canonical_name(extra), set()).update(canonical_name(d.name) for d in deps)
        dev = _table(poetry.get("dev-dependencies"))
        for name, value in dev.items():
            groups.setdefault("dev", []).extend(
                _dependencies(name, value, "`[tool.poetry.dev-dependencies]`")
            )
        for group, table in _table(poetry.get("group")).items():
            entries = _table(table)
            where = f"`[tool.poetry.group.{group}.dependencies]`"
            deps = [
                d for n, v in _table(entries.get("dependencies")).items() for d in _dependencies(n, v, where)
            ]
            groups.setdefault(canonical_name(group), []).extend(deps)
            if entries.get("optional") is True:
                optional.add(canonical_name(group))
        for extra, names in _table(poetry.get("extras")).items():
            # an extra lists the root's optional dependencies by name (poetry allows a constraint after it)
            found = (m.group("name") for n in _list(names) if (m := _PEP508_RE.match(str(n))))
            extras.setdefault(canonical_name(extra), set()).update(canonical_name(n) for n in found)
        build = _table(pyproject.get("build-system"))
        backend = str(build.get("build-backend", "poetry.core.masonry.api" if poetry else ""))
        scripts = {**_table(project.get("scripts")), **_table(poetry.get("scripts"))}
        name = str(poetry.get("name") or project.get("name") or "")
        return cls(name, poetry, groups, optional, extras, backend, scripts, project)

    def selected(self, options: _Options) -> set[str]:
        known = set(self.groups)
        asked = [*(options.only or []), *options.with_, *options.without]
        if unknown := [g for g in asked if g not in known and g != "main"]:
            raise _Unfollowed(f"the group `{unknown[0]}` is not in `pyproject.toml`")
        if options.only is not None:
            return set(options.only)
        return ({g for g in known if g not in self.optional_groups} | set(options.with_)) - set(
            options.without
        )

    def extras_selected(self, options: _Options) -> set[str]:
        if options.all_extras:
            return {n for names in self.extras.values() for n in names}
        if unknown := [e for e in options.extras if e not in self.extras]:
            raise _Unfollowed(f"the extra `{unknown[0]}` is not in `pyproject.toml`")
        return {n for e in options.extras for n in self.extras[e]}

    def root(self, read: Read) -> Root | None:
        if self.poetry.get("package-mode") is False:
            return None
        if not _NAME_RE.match(self.name):
            raise _Unfollowed("`pyproject.toml` names no project, so the project cannot be installed")
        if self.backend not in _POETRY_BACKENDS:
            return Root(self.name, pip=True)
        packages = self.poetry.get("packages")
        if isinstance(packages, list):
            paths = {str(_table(p).get("from", ".")) or "." for p in packages}
        else:  # poetry's own default: `src/<name>` when it is there
            module = canonical_name(self.name).replace("-", "_")
            paths = {"src"} if read(f"src/{module}/__init__.py") is not None else {"."}
        for path in paths:
            if path.startswith("/") or ".." in path.split("/") or not re.fullmatch(r"[\w./-]+", path):
                raise _Unfollowed(
                    f"the project's package directory `{path[:60]}` is not inside the repository"
                )
        version = str(self.poetry.get("version") or self.project.get("version") or "0")
        return Root(
            self.name,
            tuple(sorted(paths)),
            tuple(self._console_scripts()),
            version=version if _VERSION_RE.match(version) else "0",
            entry_points=tuple(self._entry_points()),
        )

    def _entry_points(self) -> Iterable[tuple[str, str, str]]:
        for group, table in sorted(_table(self.poetry.get("plugins")).items()):
            for name, reference in sorted(_table(table).items()):
                fits = _SCRIPT_NAME_RE.match(group) and _SCRIPT_NAME_RE.match(name)
                if fits and isinstance(reference, str) and _REFERENCE_RE.match(reference):
                    yield group, name, reference

    def _console_scripts(self) -> Iterable[tuple[str, str]]:
        for name, value in sorted(self.scripts.items()):
            table = _table(value)
            reference = value if isinstance(value, str) else table.get("callable") or table.get("reference")
            if table and table.get("type", "console") != "console":
                continue
            reference = re.sub(r"\s*\[[^\]]*\]\s*$", "", str(reference or ""))
            if _SCRIPT_NAME_RE.match(name) and _REFERENCE_RE.match(reference):
                yield name, reference


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _pep508(text: str, where: str) -> _Dependency:
    match = _PEP508_RE.match(text)
    if match is None or "@" in text.split(";")[0]:
        raise _Unfollowed(f"{where} has `{text[:60]}`, which ci-autofix does not read")
    extras = tuple(canonical_name(e) for e in (match.group("extras") or "").split(",") if e.strip())
    marker = _marker(match.group("marker") or "", where)
    return _Dependency(match.group("name"), match.group("spec") or "*", (marker,) if marker else (), extras)


# ---- the lock ----------------------------------------------------------------------------------------------
@dataclass
class _Package:
    name: str
    version: str
    dependencies: list[_Dependency]
    extras: dict[str, list[tuple[str, str]]]  # extra -> (dependency, marker)
    hashes: tuple[str, ...]
    source: str  # "" for PyPI, else the source's type


@dataclass
class _Lock:
    packages: dict[str, list[_Package]]

    @classmethod
    def of(cls, lock: dict[str, object]) -> _Lock:
        entries = lock.get("package")
        if not isinstance(entries, list):
            raise _Unfollowed("`poetry.lock` has no `[[package]]` entries")
        files = _table(_table(lock.get("metadata")).get("files"))  # poetry 1.x: hashes by package name
        old_hashes = {canonical_name(name): _hashes(value) for name, value in files.items()}
        packages: dict[str, list[_Package]] = {}
        for entry in entries:
            table = _table(entry)
            name, version = str(table.get("name", "")), str(table.get("version", ""))
            if not _NAME_RE.match(name) or not _VERSION_RE.match(version):
                raise _Unfollowed(f"`poetry.lock` has a package `{name[:60]}` {version[:30]} it cannot read")
            where = f"`poetry.lock` ({name} {version})"
            deps = [
                d for n, v in _table(table.get("dependencies")).items() for d in _dependencies(n, v, where)
            ]
            extras = {
                canonical_name(extra): [_extra_dependency(str(t), where) for t in _list(texts)]
                for extra, texts in _table(table.get("extras")).items()
            }
            hashes = (
                _hashes(table.get("files")) if "files" in table else old_hashes.get(canonical_name(name), ())
            )
            source = str(_table(table.get("source")).get("type", ""))
            source = (
                ""
                if source in ("", "pypi") or _table(table.get("source")).get("reference") == "pypi"
                else source
            )
            packages.setdefault(canonical_name(name), []).append(
                _Package(name, version, deps, extras, hashes, source)
            )
        return cls(packages)

    def select(self, roots: list[_Dependency], project: str) -> tuple[Locked, ...]:
        """The locked packages `roots` reach, each with the conditions of the paths that reach it
        (a plugin in the dev group that depends on the `project` itself is given the project)."""
        conditions: dict[int, set[frozenset[str]]] = {}
        extras: dict[int, set[str]] = {}
        chosen: dict[int, _Package] = {}
        pending: list[tuple[_Dependency, frozenset[str]]] = [(d, frozenset()) for d in roots]
        while pending:
            dependency, condition = pending.pop()
            if canonical_name(dependency.name) == canonical_name(project):
                continue
            for package in self._locked(dependency):
                key = id(package)
                chosen[key] = package
                reached = condition | frozenset(m for m in dependency.markers if m)
                known = conditions.setdefault(key, set())
                more_extras = set(dependency.extras) - extras.setdefault(key, set())
                new = not any(c <= reached for c in known)
                if new:
                    known -= {c for c in known if reached <= c}
                    known.add(reached)
                    if len(known) > _MAX_CONDITIONS:
                        known.clear()
                        known.add(frozenset())
                if not new and not more_extras:
                    continue
                if package.source:
                    raise _Unfollowed(
                        f"`poetry.lock` installs `{package.name}` from a {package.source} source, not from PyPI"
                    )
                before = {canonical_name(n) for e in extras[key] for n, _ in package.extras.get(e, [])}
                extras[key] |= more_extras
                wanted = {canonical_name(n): m for e in extras[key] for n, m in package.extras.get(e, [])}
                for inner in package.dependencies:
                    name = canonical_name(inner.name)
                    if inner.optional and name not in wanted:
                        continue
                    marker = frozenset([wanted[name]] if inner.optional and wanted[name] else [])
                    # a path that is new goes on everywhere; an extra newly asked for, along every path
                    paths = (
                        set(known) if inner.optional and name not in before else {reached} if new else set()
                    )
                    pending += [(inner, path | marker) for path in paths]
        return tuple(
            Locked(p.name, p.version, _joined(conditions[k]), p.hashes)
            for k, p in sorted(chosen.items(), key=lambda kv: (canonical_name(kv[1].name), kv[1].version))
        )

    def _locked(self, dependency: _Dependency) -> list[_Package]:
        found = self.packages.get(canonical_name(dependency.name))
        if not found and (dependency.markers or canonical_name(dependency.name) in _UNLOCKED):
            return []  # a condition the project never meets, or a package older poetry never locks
        if not found:
            raise _Unfollowed(f"`poetry.lock` has no package `{dependency.name}` (is it out of date?)")
        if len(found) == 1:
            return found
        fitting = [p for p in found if _allows(dependency.constraint, p.version)]
        if not fitting:
            raise _Unfollowed(
                f"`poetry.lock` has no version of `{dependency.name}` that `{dependency.constraint[:40]}` allows"
            )
        return fitting


def _extra_dependency(text: str, where: str) -> tuple[str, str]:
    """An entry of a locked package's extra: `name (>=1.0)` (poetry 1.x) or PEP 508 (2.x)."""
    match = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", text)
    if match is None:
        raise _Unfollowed(f"{where} has the extra entry `{text[:60]}`, which ci-autofix does not read")
    _, _, marker = text.partition(";")
    return match.group(1), _marker(marker, where)


def _hashes(value: object) -> tuple[str, ...]:
    found = []
    for item in _list(value):
        digest = str(_table(item).get("hash", ""))
        if not _HASH_RE.match(digest):
            raise _Unfollowed(f"`poetry.lock` has the file hash `{digest[:40]}`, which is not one pip checks")
        found.append(digest)
    return tuple(dict.fromkeys(found))


def _joined(conditions: set[frozenset[str]]) -> str:
    """The marker that holds when one of `conditions` does (each a set of markers that all hold)."""
    if not conditions or frozenset() in conditions:
        return ""
    each = sorted(" and ".join(f"({m})" for m in sorted(c)) for c in conditions)
    return each[0] if len(each) == 1 else " or ".join(f"({c})" for c in each)
