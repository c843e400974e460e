"""The runtime versions a failed job and its repository declare, and where each came from.

Read from the job's setup steps (`actions/setup-node`, `actions/setup-go`, `dtolnay/rust-toolchain`,
`actions-rust-lang/setup-rust-toolchain`, `actions/setup-java`: their version inputs and the files
their `*-version-file` inputs name), then from the repository's own files (`.nvmrc`, `.node-version`,
`package.json`, `go.mod`, `.go-version`, `rust-toolchain.toml`, `rust-toolchain`, `.tool-versions`,
`mise.toml`, `.java-version`). The job's input comes first, then the file it names, then the
repository's files; except for Rust, where a toolchain file in the repository overrides what the
step installed (rustup gives the file precedence over its default, so that is what the job ran).

Everything read here is untrusted: a value is kept only when `versions.parse` accepts it (for Rust,
a channel name or version); a file is read only when it is a regular file inside the checkout (no
symlink, no `..`), and is never quoted back (a link to a secret would otherwise print it).
"""

from __future__ import annotations

import json
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ci_autofix.toolchains import versions

RUNTIMES = ("node", "go", "rust", "java")
_MAX_FILE = 256 * 1024
_EXPRESSION = re.compile(r"^\$\{\{\s*matrix\.([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}$")
_RUST = re.compile(
    r"^(?:stable|beta|nightly|nightly-\d{4}-\d{2}-\d{2}|beta-\d{4}-\d{2}-\d{2}|\d{1,3}\.\d{1,4}(?:\.\d{1,4})?)$"
)
_RUST_HOST = re.compile(r"-(?:x86_64|aarch64)-unknown-linux-gnu$")
_JAVA = re.compile(r"^\d{1,3}(?:\.\d{1,5}){0,3}$")
_PACKAGE_MANAGER = re.compile(
    r"^(npm|pnpm|yarn)@(\d{1,4}\.\d{1,4}\.\d{1,6})(?:\+sha(?:1|224|256|384|512)\.[0-9a-fA-F]{40,128})?$"
)
_TOOL_NAMES = {"node": ("node", "nodejs"), "go": ("go", "golang"), "rust": ("rust",), "java": ("java",)}
_ACTIONS = {
    "actions/setup-node": ("node", "node-version", "node-version-file"),
    "actions/setup-go": ("go", "go-version", "go-version-file"),
    "dtolnay/rust-toolchain": ("rust", "toolchain", None),
    "actions-rust-lang/setup-rust-toolchain": ("rust", "toolchain", None),
    "actions/setup-java": ("java", "java-version", "java-version-file"),
}
# A runtime the repository needs even when it declares no version, and the version it then gets.
_PROJECT_FILES = {
    "node": ("package.json", "lts/*"),
    "go": ("go.mod", "stable"),
    "rust": ("Cargo.toml", "stable"),
}


@dataclass(frozen=True)
class Declared:
    """One runtime's version as declared: the checked spec and where it was read."""

    runtime: str
    spec: str
    source: str


@dataclass(frozen=True)
class PackageManager:
    """`packageManager` of package.json (`pnpm@9.1.0`), which corepack runs."""

    name: str
    version: str
    source: str = "package.json packageManager"


@dataclass(frozen=True)
class Declarations:
    runtimes: tuple[Declared, ...]
    package_manager: PackageManager | None = None
    notes: tuple[str, ...] = ()  # what was passed over, and why

    def get(self, runtime: str) -> Declared | None:
        return next((d for d in self.runtimes if d.runtime == runtime), None)


def valid(runtime: str, text: str) -> str | None:
    """`text` as a spec of `runtime` when it is one, else None."""
    text = text.strip()
    if runtime == "rust":
        text = _RUST_HOST.sub("", text)
        return text if _RUST.match(text) else None
    if runtime == "java":
        return text if _JAVA.match(text) else None
    if runtime == "go":
        text = text.removeprefix("go") if re.match(r"^go\d", text) else text
    try:
        versions.parse(text)
    except versions.BadSpec:
        return None
    return text


def declared(
    root: Path, job: Mapping[str, object], *, matrix: Mapping[str, object] | None = None
) -> Declarations:
    """What `job` (a mapping as `yaml.safe_load` gives it) and the checkout at `root` declare."""
    notes: list[str] = []
    reader = _Reader(root.resolve(), notes)
    found: dict[str, Declared] = {}
    for step in _setup_steps(job):
        runtime, input_name, file_input = _ACTIONS[step.action]
        label = f"`{_shown(step.uses)}`"
        value = _input(step.inputs.get(input_name), matrix, f"{label} input `{input_name}`", notes)
        ref = step.uses.partition("@")[2]
        if value is None and step.action == "dtolnay/rust-toolchain" and valid("rust", ref):
            value = ref  # dtolnay/rust-toolchain@1.80: the ref names the toolchain
            input_name = "ref"
        if value is not None:
            spec = valid(runtime, value)
            if spec is not None:
                found[runtime] = Declared(runtime, spec, f"{label} input `{input_name}`")
                continue
            notes.append(f"{label} input `{input_name}` is not a {runtime} version; passed over")
        name = _input(step.inputs.get(file_input or ""), matrix, f"{label} input `{file_input}`", notes)
        if name is not None:
            from_file = reader.version_file(runtime, name)
            if from_file is not None:
                found[runtime] = Declared(runtime, from_file[0], f"{from_file[1]} (named by {label})")
    for runtime in RUNTIMES:
        from_repo = reader.repository(runtime)
        # rustup reads a toolchain file (not .tool-versions or mise.toml) over what the step set
        rustup_file = from_repo is not None and from_repo.source.startswith("rust-toolchain")
        if from_repo is not None and (runtime not in found or rustup_file):
            if runtime in found and found[runtime].spec != from_repo.spec:
                notes.append(
                    f"rust: {from_repo.source} overrides {found[runtime].source}, as rustup does on the runner"
                )
            found[runtime] = from_repo
        if runtime not in found and runtime in _PROJECT_FILES:
            project, default = _PROJECT_FILES[runtime]
            if reader.text(project) is not None:
                found[runtime] = Declared(runtime, default, f"nothing declared ({project}): the default")
    return Declarations(
        tuple(found[r] for r in RUNTIMES if r in found), reader.package_manager(), tuple(notes)
    )


@dataclass(frozen=True)
class _Step:
    uses: str
    action: str
    inputs: Mapping[str, object]


def _setup_steps(job: Mapping[str, object]) -> list[_Step]:
    steps = job.get("steps")
    found = []
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict) or not isinstance(step.get("uses"), str):
            continue
        uses = step["uses"].strip()
        action = uses.partition("@")[0].lower()
        if action in _ACTIONS:
            inputs = step.get("with")
            found.append(_Step(uses, action, inputs if isinstance(inputs, dict) else {}))
    return found


def _input(value: object, matrix: Mapping[str, object] | None, where: str, notes: list[str]) -> str | None:
    """A step input as text (YAML numbers as the runner passes them: `1.20` is `1.2`), with
    `${{ matrix.X }}` replaced from `matrix`; None when absent or unresolved."""
    if value is None or isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value).strip()
    if "${{" in text:
        match = _EXPRESSION.match(text)
        key = match[1] if match else None
        if matrix is not None and key is not None and isinstance(matrix.get(key), str | int | float):
            return str(matrix[key]).strip()
        notes.append(f"{where} is an expression only the runner resolves; passed over")
        return None
    return text or None


class _Reader:
    """The checkout's version files, read safely (regular files inside the checkout, size-capped)."""

    def __init__(self, root: Path, notes: list[str]) -> None:
        self.root = root
        self.notes = notes

    def text(self, name: str) -> str | None:
        rel = PurePosixPath(name.strip())
        if not name.strip() or rel.is_absolute() or ".." in rel.parts or "\0" in name:
            self.notes.append(f"`{_shown(name)}` is not a path inside the repository; passed over")
            return None
        path = self.root / rel
        try:
            st = path.lstat()
            if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_FILE:
                self.notes.append(f"`{_shown(name)}` is not a regular file of the repository; passed over")
                return None
            if any(p.is_symlink() for p in path.parents if self.root in p.parents):
                self.notes.append(f"`{_shown(name)}` is reached through a symbolic link; passed over")
                return None
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def version_file(self, runtime: str, name: str) -> tuple[str, str] | None:
        """The version in the file a step's `*-version-file` input names, by the file's kind."""
        base = PurePosixPath(name).name
        readers: dict[str, Callable[[str], tuple[str, str] | None]] = {
            "package.json": lambda n: self._package_json(n),
            "go.mod": lambda n: self._go_mod(n),
            "go.work": lambda n: self._go_mod(n),
            ".tool-versions": lambda n: self._tool_versions(runtime, n),
            "mise.toml": lambda n: self._mise(runtime, n),
        }
        read = readers.get(base)
        found = read(name) if read is not None else self._plain(runtime, name)
        if found is None and self.text(name) is not None:
            self.notes.append(f"`{_shown(name)}` declares no {runtime} version we can read; passed over")
        return found

    def repository(self, runtime: str) -> Declared | None:
        order: dict[str, tuple[Callable[[], tuple[str, str] | None], ...]] = {
            "node": (
                lambda: self._plain("node", ".nvmrc"),
                lambda: self._plain("node", ".node-version"),
                lambda: self._tool_versions("node", ".tool-versions"),
                lambda: self._mise("node", "mise.toml"),
                lambda: self._package_json("package.json"),
            ),
            "go": (
                lambda: self._go_mod("go.mod"),
                lambda: self._plain("go", ".go-version"),
                lambda: self._tool_versions("go", ".tool-versions"),
                lambda: self._mise("go", "mise.toml"),
            ),
            "rust": (
                lambda: self._rust_toolchain("rust-toolchain.toml"),
                lambda: self._rust_toolchain("rust-toolchain"),
                lambda: self._tool_versions("rust", ".tool-versions"),
                lambda: self._mise("rust", "mise.toml"),
            ),
            "java": (
                lambda: self._plain("java", ".java-version"),
                lambda: self._tool_versions("java", ".tool-versions"),
                lambda: self._mise("java", "mise.toml"),
            ),
        }
        for read in order[runtime]:
            found = read()
            if found is not None:
                return Declared(runtime, *found)
        return None

    def package_manager(self) -> PackageManager | None:
        data = self._json("package.json")
        value = data.get("packageManager") if data else None
        if not isinstance(value, str):
            return None
        match = _PACKAGE_MANAGER.match(value.strip())
        if not match:
            self.notes.append("package.json packageManager is not `npm|pnpm|yarn@X.Y.Z`; passed over")
            return None
        return PackageManager(match[1], match[2])

    # ---- one reader per kind of file ---------------------------------------------------------------
    def _checked(self, runtime: str, value: str, source: str) -> tuple[str, str] | None:
        spec = valid(runtime, value)
        if spec is None:
            self.notes.append(f"{source} is not a {runtime} version; passed over")
            return None
        return spec, source

    def _plain(self, runtime: str, name: str) -> tuple[str, str] | None:
        text = self.text(name)
        if text is None:
            return None
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                return self._checked(runtime, line, _shown(name))
        return None

    def _json(self, name: str) -> dict[str, object] | None:
        text = self.text(name)
        if text is None:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            self.notes.append(f"{_shown(name)} is not valid JSON; passed over")
            return None
        return data if isinstance(data, dict) else None

    def _package_json(self, name: str) -> tuple[str, str] | None:
        data = self._json(name) or {}
        volta, engines = data.get("volta"), data.get("engines")
        for table, key in ((volta, "volta.node"), (engines, "engines.node")):
            value = table.get("node") if isinstance(table, dict) else None
            if isinstance(value, str):
                return self._checked("node", value, f"{_shown(name)} {key}")
        return None

    def _go_mod(self, name: str) -> tuple[str, str] | None:
        text = self.text(name)
        if text is None:
            return None
        toolchain = re.search(r"^toolchain\s+(go\d[^\s/]*)\s*(?://.*)?$", text, re.M)
        if toolchain:
            return self._checked("go", toolchain[1], f"{_shown(name)} toolchain")
        go = re.search(r"^go\s+(\S+)\s*(?://.*)?$", text, re.M)
        return self._checked("go", go[1], f"{_shown(name)} go") if go else None

    def _rust_toolchain(self, name: str) -> tuple[str, str] | None:
        text = self.text(name)
        if text is None:
            return None
        if name.endswith(".toml") or "[toolchain]" in text:
            try:
                table = tomllib.loads(text).get("toolchain")
            except tomllib.TOMLDecodeError:
                self.notes.append(f"{_shown(name)} is not valid TOML; passed over")
                return None
            channel = table.get("channel") if isinstance(table, dict) else None
            return (
                self._checked("rust", channel, f"{_shown(name)} channel")
                if isinstance(channel, str)
                else None
            )
        line = text.strip().splitlines()[0] if text.strip() else ""
        return self._checked("rust", line, _shown(name)) if line else None

    def _tool_versions(self, runtime: str, name: str) -> tuple[str, str] | None:
        text = self.text(name)
        for line in (text or "").splitlines():
            words = line.split("#", 1)[0].split()
            if len(words) >= 2 and words[0] in _TOOL_NAMES[runtime]:
                return self._checked(runtime, words[1], f"{_shown(name)} {words[0]}")
        return None

    def _mise(self, runtime: str, name: str) -> tuple[str, str] | None:
        text = self.text(name)
        if text is None:
            return None
        try:
            tools = tomllib.loads(text).get("tools")
        except tomllib.TOMLDecodeError:
            self.notes.append(f"{_shown(name)} is not valid TOML; passed over")
            return None
        for key in _TOOL_NAMES[runtime] if isinstance(tools, dict) else ():
            value = tools.get(key) if isinstance(tools, dict) else None
            if isinstance(value, list) and value:
                value = value[0]
            if isinstance(value, dict):
                value = value.get("version")
            if isinstance(value, str):
                return self._checked(runtime, value, f"{_shown(name)} tools.{key}")
        return None


def _shown(name: str) -> str:
    """A file name for a note: letters, digits and `._/@-` only, short (it may come from the
    workflow, and notes end up in Markdown)."""
    return re.sub(r"[^A-Za-z0-9._/@-]", "?", name.strip())[:80]
