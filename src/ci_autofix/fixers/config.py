"""What a repository says about its formatters: whether it configures them, which version it pins.

Read from the files at the repository root: `pyproject.toml` (`[tool.ruff]`, `[tool.black]`,
`[tool.isort]`, dependency lists, Poetry), `ruff.toml`/`.ruff.toml`, `.isort.cfg`,
`setup.cfg`/`tox.ini` (`[isort]`), requirements files, lock files (`uv.lock`, `poetry.lock`,
`pdm.lock`: exact versions only), workflows, and `.pre-commit-config.yaml` (read with
a small line parser: the action has no YAML dependency, and the shape of that file is regular).
Every file is untrusted: size-capped, symlinks leaving the repository are not followed, and
versions are only taken in their strict PEP 440 form. Versions the workflows install are read
by `workflows`.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ci_autofix.fixers.catalog import BY_NAME, PACKAGES, Fixer
from ci_autofix.fixers.commands import read_commands
from ci_autofix.tooling.tools import PRE_COMMIT_REPOS, scan_workflow
from ci_autofix.tooling.versions import Requirement, canonical_name, is_version

_MAX_BYTES = 1024 * 1024
_MAX_LOCK_BYTES = 16 * 1024 * 1024
_LOCK_FILES = ("uv.lock", "poetry.lock", "pdm.lock")
_REQUIREMENT_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<spec>[^;#@]*?)\s*(?:[;#@].*)?$"
)
_YAML_KEY_RE = re.compile(
    r"^(?P<indent>\s*)(?:-\s+)?(?P<key>repo|rev|id|args|entry|additional_dependencies)\s*:\s*(?P<value>.*?)\s*$"
)
_YAML_ITEM_RE = re.compile(r"^(?P<indent>\s*)-\s+(?P<value>.*?)\s*$")


@dataclass(frozen=True)
class Pin:
    requirement: Requirement
    source: str  # where it was read, for the report
    pre_commit: bool = False  # the version pre-commit runs (a hook's `rev:`)
    # what CI installed as resolved (a lock file, a requirements or constraints file, a hook's
    # `rev:`, an install in a workflow), rather than what a package's metadata asks for
    locked: bool = False


@dataclass(frozen=True)
class Hook:
    """A pre-commit hook that runs one of our fixers."""

    id: str
    fixer: Fixer
    args: tuple[str, ...] = ()


@dataclass
class RepoConfig:
    evidence: dict[str, list[str]] = field(default_factory=dict)  # package -> where it is configured
    pins: dict[str, list[Pin]] = field(default_factory=dict)  # package -> pins, in reading order
    hooks: list[Hook] = field(default_factory=list)

    def configures(self, package: str) -> bool:
        return bool(self.evidence.get(package))

    def note(self, package: str, where: str) -> None:
        self.evidence.setdefault(package, [])
        if where not in self.evidence[package]:
            self.evidence[package].append(where)

    def pin(self, package: str, *, runs_pre_commit: bool) -> Pin | None:
        """The pin to honour: pre-commit's `rev:` first when the failed step runs pre-commit, and
        only then (a hook's revision is the version pre-commit installs for the hook, not the one a
        step that runs the tool itself installs: sentry-python's `tox -e linters` ran ruff 0.15.0
        with the hook at 0.13.2); exact before ranges; among exact pins, a resolved one (lock files,
        requirements and constraints files, a workflow's install) before one in the project's
        metadata (pyproject, setup.py, setup.cfg, tox.ini)."""
        pins = [p for p in self.pins.get(package, []) if runs_pre_commit or not p.pre_commit]

        def rank(pin: Pin) -> tuple[int, int, int]:
            return (
                0 if pin.pre_commit else 1,
                0 if pin.requirement.exact else 1,
                0 if pin.locked else 1,
            )

        return min(pins, key=rank) if pins else None


def read_repo_config(root: Path) -> RepoConfig:
    config = RepoConfig()
    _workflows(config, root)  # first: among equally exact pins, what CI itself installed wins
    pyproject = _toml(root, "pyproject.toml")
    tool = pyproject.get("tool", {}) if isinstance(pyproject.get("tool"), dict) else {}
    for package in PACKAGES:
        if isinstance(tool.get(package), dict):
            config.note(package, f"pyproject.toml [tool.{package}]")
            required = tool[package].get("required-version")
            if isinstance(required, str) and (req := _required_version(required)):
                _add_pin(config, package, Pin(req, f"pyproject.toml [tool.{package}] required-version"))
    for name in ("ruff.toml", ".ruff.toml"):
        if _read(root, name) is not None:
            config.note("ruff", name)
            required = _toml(root, name).get("required-version")
            if isinstance(required, str) and (req := _required_version(required)):
                _add_pin(config, "ruff", Pin(req, f"{name} required-version"))
    if _read(root, ".isort.cfg") is not None:
        config.note("isort", ".isort.cfg")
    for name in ("setup.cfg", "tox.ini"):
        if (text := _read(root, name)) is not None and _has_isort_section(text):
            config.note("isort", f"{name} [isort]")
    for source, line in _requirement_lines(root):
        _requirement(config, line, source, locked=True)
    for source, line in _setup_requirements(root):
        _requirement(config, line, source)
    for source, item in _pyproject_dependencies(pyproject):
        if isinstance(item, str):
            _requirement(config, item, source)
    _poetry(config, tool.get("poetry"))
    _locks(config, root)
    _pre_commit(config, root)
    _other_ecosystems(config, root)
    return config


# The Go, Rust and Node tools' own configuration files, besides a package.json that depends on them.
_OWN_FILES = {
    "gofmt": ("go.mod", "go.work"),  # gofmt has no configuration: a Go module is one that uses it
    "goimports": ("go.mod", "go.work"),  # nor goimports (its `-local` is on the command line)
    "rustfmt": ("Cargo.toml", "rustfmt.toml", ".rustfmt.toml"),  # `cargo fmt` formats every crate
    "prettier": (".prettierrc", ".prettierrc.json", ".prettierrc.yaml", ".prettierrc.yml", ".prettierrc.js",
                 ".prettierrc.cjs", ".prettierrc.mjs", ".prettierrc.toml", "prettier.config.js",
                 "prettier.config.cjs", "prettier.config.mjs"),
    "eslint": ("eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts", ".eslintrc",
               ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json", ".eslintrc.yaml", ".eslintrc.yml"),
    "@biomejs/biome": ("biome.json", "biome.jsonc"),
}  # fmt: skip


def _other_ecosystems(config: RepoConfig, root: Path) -> None:
    """Where the repository configures gofmt, goimports, rustfmt, prettier, eslint and biome."""
    for package, names in _OWN_FILES.items():
        for name in names:
            if _read(root, name) is not None:
                config.note(package, name)
    try:
        manifest = json.loads(_read(root, "package.json") or "{}")
    except json.JSONDecodeError:
        return
    if not isinstance(manifest, dict):
        return
    for package in ("prettier", "eslint", "@biomejs/biome"):
        for key in ("devDependencies", "dependencies"):
            listed = manifest.get(key)
            if isinstance(listed, dict) and package in listed:
                config.note(package, f"package.json {key}")
        if isinstance(manifest.get(package) or manifest.get(f"{package}Config"), dict | str):
            config.note(package, "package.json")


def _add_pin(config: RepoConfig, package: str, pin: Pin) -> None:
    config.pins.setdefault(package, []).append(pin)


def _required_version(text: str) -> Requirement | None:
    # black's `required-version = "24"` means any 24.x; ruff's is a specifier or a version
    if re.fullmatch(r"\d+", text.strip()):
        return Requirement.parse(f"=={text.strip()}.*")
    return Requirement.parse(text)


# ---- files ---------------------------------------------------------------------------------------
def _read(root: Path, rel: str, limit: int = _MAX_BYTES) -> str | None:
    path = root / rel
    try:
        resolved = path.resolve()
        if root.resolve() not in resolved.parents or not resolved.is_file():
            return None
        if resolved.stat().st_size > limit:
            return None
        return resolved.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _toml(root: Path, rel: str, limit: int = _MAX_BYTES) -> dict[str, Any]:
    text = _read(root, rel, limit)
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _has_isort_section(text: str) -> bool:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return bool(re.search(r"(?m)^\[(?:tool:)?isort\]", text))
    return parser.has_section("isort") or parser.has_section("tool:isort")


def _requirement_files(root: Path) -> Iterator[str]:
    seen: set[str] = set()
    patterns = (
        "*requirements*.txt",
        "*constraints*.txt",
        "requirements*/*.txt",
        "requirements*/**/*.txt",
    )
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            rel = path.relative_to(root).as_posix()
            if rel not in seen and ".git/" not in rel:
                seen.add(rel)
                yield rel


def _requirement_lines(root: Path) -> Iterator[tuple[str, str]]:
    for rel in _requirement_files(root):
        text = _read(root, rel)
        for line in (text or "").splitlines():
            line = re.split(r"\s+--", line, maxsplit=1)[0].rstrip("\\ ")  # pip-compile: `x==1 \` `--hash=...`
            if line.strip() and not line.lstrip().startswith(("#", "-")):
                yield rel, line


def _requirement(config: RepoConfig, line: str, source: str, *, locked: bool = False) -> None:
    match = _REQUIREMENT_RE.match(line)
    if not match:
        return
    package = canonical_name(match.group("name"))
    if package not in PACKAGES:
        return
    config.note(package, source)
    if requirement := Requirement.parse(match.group("spec")):
        _add_pin(config, package, Pin(requirement, source, locked=locked))


def _setup_requirements(root: Path) -> Iterator[tuple[str, str]]:
    """Requirement strings of `setup.py` (`install_requires`, `extras_require`, `tests_require`:
    literal values only, read with `ast`, never run), `setup.cfg` (`[options]` and
    `[options.extras_require]`) and `tox.ini` (each `[testenv*]`'s `deps`)."""
    text = _read(root, "setup.py")
    if text is not None:
        yield from (("setup.py", r) for r in _setup_py(text))
    for name in ("setup.cfg", "tox.ini"):
        text = _read(root, name)
        if text is None:
            continue
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        for section in parser.sections():
            keys: tuple[str, ...] = ()
            if name == "setup.cfg" and section == "options":
                keys = ("install_requires", "tests_require")
            elif name == "setup.cfg" and section == "options.extras_require":
                keys = tuple(parser.options(section))
            elif name == "tox.ini" and (section == "testenv" or section.startswith("testenv:")):
                keys = ("deps",)
            for key in keys:
                for line in parser.get(section, key, fallback="").splitlines():
                    if line.strip() and not line.lstrip().startswith(("#", "-")):
                        yield f"{name} [{section}] {key}", line.strip()


def _setup_py(text: str) -> list[str]:
    """The requirement strings of a `setup(...)` call's requirement arguments: literals, or
    module-level names assigned a literal, joined with `+` (anything else is skipped)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    names: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    found: list[str] = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        called = (
            func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        )
        if called != "setup":
            continue
        for keyword in call.keywords:
            if keyword.arg in ("install_requires", "extras_require", "tests_require"):
                found += _strings(keyword.value, names, depth=0)
    return found


def _strings(node: ast.expr, names: dict[str, ast.expr], *, depth: int) -> list[str]:
    """The strings of a literal list, tuple, dict (its values) or `+` of them; names are looked up
    once each level (a name bound to itself ends at the depth limit)."""
    if depth > 8:
        return []
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, ast.Name):
        return _strings(names[node.id], names, depth=depth + 1) if node.id in names else []
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        items: list[ast.expr] = list(node.elts)
    elif isinstance(node, ast.Dict):
        items = list(node.values)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        items = [node.left, node.right]
    else:
        return []
    return [text for item in items for text in _strings(item, names, depth=depth + 1)]


def _pyproject_dependencies(pyproject: dict[str, Any]) -> Iterator[tuple[str, object]]:
    project = pyproject.get("project")
    if isinstance(project, dict):
        yield from (("pyproject.toml [project.dependencies]", d) for d in _list(project.get("dependencies")))
        extras = project.get("optional-dependencies")
        for extra, deps in extras.items() if isinstance(extras, dict) else ():
            yield from ((f"pyproject.toml [project.optional-dependencies] {extra}", d) for d in _list(deps))
    groups = pyproject.get("dependency-groups")
    for group, deps in groups.items() if isinstance(groups, dict) else ():
        yield from ((f"pyproject.toml [dependency-groups] {group}", d) for d in _list(deps))
    tool = pyproject.get("tool")
    pdm = tool.get("pdm") if isinstance(tool, dict) else None
    dev = pdm.get("dev-dependencies") if isinstance(pdm, dict) else None
    for group, deps in dev.items() if isinstance(dev, dict) else ():
        yield from ((f"pyproject.toml [tool.pdm.dev-dependencies] {group}", d) for d in _list(deps))


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _poetry(config: RepoConfig, poetry: object) -> None:
    if not isinstance(poetry, dict):
        return
    tables: list[tuple[str, object]] = [
        ("dependencies", poetry.get("dependencies")),
        ("dev-dependencies", poetry.get("dev-dependencies")),
    ]
    groups = poetry.get("group")
    for name, group in groups.items() if isinstance(groups, dict) else ():
        if isinstance(group, dict):
            tables.append((f"group.{name}.dependencies", group.get("dependencies")))
    for table, deps in tables:
        for name, value in deps.items() if isinstance(deps, dict) else ():
            package = canonical_name(str(name))
            if package not in PACKAGES:
                continue
            source = f"pyproject.toml [tool.poetry.{table}]"
            config.note(package, source)
            spec = value.get("version") if isinstance(value, dict) else value
            if isinstance(spec, str) and (requirement := Requirement.poetry(spec)):
                _add_pin(config, package, Pin(requirement, source))


def _workflows(config: RepoConfig, root: Path) -> None:
    """Pinned installs in workflows and the tools' own actions configure the tool, and pin it."""
    directory = root / ".github" / "workflows"
    if not directory.is_dir():
        return
    for path in sorted([*directory.glob("*.yml"), *directory.glob("*.yaml")]):
        rel = path.relative_to(root).as_posix()
        for found in scan_workflow(rel, _read(root, rel) or ""):
            if found.requirement is None:
                config.note(found.package, f"{rel} (uses its action)")
                continue
            config.note(found.package, f"{rel} (installs {found.package}{found.requirement.spec})")
            _add_pin(config, found.package, Pin(found.requirement, rel, locked=True))


def _locks(config: RepoConfig, root: Path) -> None:
    """The exact versions a lock file resolved (what `uv run`, `poetry run` and `pdm run` use in CI)."""
    for name in _LOCK_FILES:
        packages = _toml(root, name, _MAX_LOCK_BYTES).get("package")
        for entry in packages if isinstance(packages, list) else ():
            if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
                continue
            package = canonical_name(str(entry.get("name", "")))
            if package in PACKAGES and is_version(entry["version"]):
                _add_pin(config, package, Pin(Requirement(f"=={entry['version']}"), name, locked=True))
    pipfile = _read(root, "Pipfile.lock", _MAX_LOCK_BYTES)
    try:
        locked = json.loads(pipfile) if pipfile else {}
    except ValueError:
        locked = {}
    for section in ("default", "develop"):
        entries = locked.get(section) if isinstance(locked, dict) else None
        for name, entry in entries.items() if isinstance(entries, dict) else ():
            package = canonical_name(str(name))
            version = entry.get("version") if isinstance(entry, dict) else None
            if package in PACKAGES and isinstance(version, str) and is_version(version.removeprefix("==")):
                requirement = Requirement(f"=={version.removeprefix('==')}")
                _add_pin(config, package, Pin(requirement, f"Pipfile.lock [{section}]", locked=True))


# ---- pre-commit ------------------------------------------------------------------------------------
@dataclass
class _Repo:
    url: str
    rev: str = ""
    hooks: list[dict[str, Any]] = field(default_factory=list)


def _pre_commit(config: RepoConfig, root: Path) -> None:
    for name in (".pre-commit-config.yaml", ".pre-commit-config.yml"):
        text = _read(root, name)
        if text is None:
            continue
        for repo in _pre_commit_repos(text):
            _pre_commit_repo(config, name, repo)
        return


def _pre_commit_repo(config: RepoConfig, name: str, repo: _Repo) -> None:
    package = next((pkg for marker, pkg in PRE_COMMIT_REPOS if marker in repo.url.lower()), None)
    owner_name = "/".join(repo.url.rstrip("/").removesuffix(".git").split("/")[-2:])
    for hook in repo.hooks:
        fixer = _hook_fixer(str(hook.get("id", "")), str(hook.get("entry", "")), package)
        if fixer is None:
            continue
        config.hooks.append(Hook(str(hook["id"]), fixer, tuple(hook.get("args", ()))))
        config.note(fixer.package, f"{name} hook {hook['id']}")
        rev = repo.rev.removeprefix("v")
        if package == fixer.package and is_version(rev):
            requirement = Requirement.parse(rev)
            assert requirement is not None
            source = f"{name} ({owner_name} rev {repo.rev})"
            _add_pin(config, fixer.package, Pin(requirement, source, pre_commit=True, locked=True))
        for dependency in hook.get("additional_dependencies", ()):
            match = _REQUIREMENT_RE.match(str(dependency))
            if not match or canonical_name(match.group("name")) != fixer.package:
                continue
            if requirement := Requirement.parse(match.group("spec")):
                source = f"{name} hook {hook['id']}"
                _add_pin(config, fixer.package, Pin(requirement, source, pre_commit=True, locked=True))


def _hook_fixer(hook_id: str, entry: str, package: str | None) -> Fixer | None:
    by_id = [f for f in BY_NAME.values() if hook_id in f.hook_ids and (package in (None, f.package))]
    if by_id:
        return by_id[0]
    if entry:
        invocations = read_commands([entry]).invocations
        if invocations:
            return invocations[0].fixer
    return None


def _pre_commit_repos(text: str) -> list[_Repo]:
    repos: list[_Repo] = []
    list_key: tuple[str, int] | None = None  # a key whose value is a block list below it
    for raw in text.splitlines():
        line = _strip_comment(raw)
        if not line.strip():
            continue
        key_match = _YAML_KEY_RE.match(line)
        item = _YAML_ITEM_RE.match(line)
        if list_key and item and not key_match and len(item.group("indent")) >= list_key[1] and repos:
            if repos[-1].hooks:
                repos[-1].hooks[-1].setdefault(list_key[0], []).append(_scalar(item.group("value")))
            continue
        list_key = None
        if not key_match:
            continue
        key, value = key_match.group("key"), key_match.group("value")
        if key == "repo":
            repos.append(_Repo(_scalar(value)))
        elif not repos:
            continue
        elif key == "rev":
            repos[-1].rev = _scalar(value)
        elif key == "id":
            repos[-1].hooks.append({"id": _scalar(value)})
        elif repos[-1].hooks:
            hook = repos[-1].hooks[-1]
            if key == "entry":
                hook["entry"] = _scalar(value)
            elif value.startswith("["):
                hook[key] = _flow_list(value)
            elif not value:
                hook[key] = []
                list_key = (key, len(key_match.group("indent")))
            else:
                hook[key] = _scalar(value)
    return repos


def pre_commit_hooks(text: str) -> list[tuple[str, str, dict[str, Any], Fixer | None]]:
    """Every hook of a `.pre-commit-config.yaml` text, in order: (its repository's URL, its `rev`,
    its mapping, the fixer it runs or None)."""
    found = []
    for repo in _pre_commit_repos(text):
        package = next((pkg for marker, pkg in PRE_COMMIT_REPOS if marker in repo.url.lower()), None)
        for hook in repo.hooks:
            fixer = _hook_fixer(str(hook.get("id", "")), "", package) if package else None
            found.append((repo.url, repo.rev, hook, fixer))
    return found


def _strip_comment(line: str) -> str:
    return re.sub(r"(^|\s)#.*$", "", line)


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _flow_list(value: str) -> list[str]:
    inner = value.strip().removeprefix("[").removesuffix("]")
    return [_scalar(part) for part in _split_commas(inner) if part.strip()]


def _split_commas(text: str) -> Iterable[str]:
    part, quote = "", ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == ",":
            yield part
            part = ""
            continue
        part += char
    yield part
