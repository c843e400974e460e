"""The runtimes a failed job needs, provisioned before any repository code runs, and the report of it.

`provision` reads what the job and the repository declare (`declared`), resolves each runtime
against its publisher's index (`sources`) and installs it (`install`); `Provisioned` says what was
installed, from where, with which checksum and in how long, what could not be had, and gives the
PATH entries and variables commands need (the toolchains read-only, their caches in the sandbox's
HOME, and `GOTOOLCHAIN=local` so `go` never fetches another toolchain the repository names).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ci_autofix.markdown import code_span
from ci_autofix.toolchains.declared import Declarations, Declared, declared
from ci_autofix.toolchains.errors import ToolchainError
from ci_autofix.toolchains.install import Installed, install
from ci_autofix.toolchains.sources import Platform, Sources, resolve

PROVISIONED = ("node", "go", "rust")
_NAMES = {"node": "Node.js", "go": "Go", "rust": "Rust", "java": "Java"}


@dataclass(frozen=True)
class Runtime:
    """One runtime provisioned: as declared, as installed, with the note when it is not the declared one."""

    declared: Declared
    installed: Installed
    seconds: float
    note: str | None = None

    @property
    def bin(self) -> Path:
        return self.installed.home / "bin"


@dataclass(frozen=True)
class Unprovisioned:
    """A runtime the job declares that could not be provisioned, and why."""

    declared: Declared
    error: ToolchainError

    def describe(self) -> str:
        """One paragraph of plain text: which runtime, why it was refused or could not be had, what to do."""
        return (
            f"{_NAMES[self.declared.runtime]} `{self.declared.spec}` ({self.declared.source}) could not be "
            f"provisioned: {self.error.cause.rstrip('.')}. What to do: {self.error.remedy}"
        )


@dataclass(frozen=True)
class Provisioned:
    runtimes: tuple[Runtime, ...] = ()
    failures: tuple[Unprovisioned, ...] = ()
    notes: tuple[str, ...] = ()  # what was declared but passed over, and why

    def get(self, runtime: str) -> Runtime | None:
        return next((r for r in self.runtimes if r.declared.runtime == runtime), None)

    @property
    def path(self) -> tuple[str, ...]:
        """The directories to put first on PATH, in this order."""
        return tuple(str(r.bin) for r in self.runtimes)

    def environment(self, home: Path, base_path: str) -> dict[str, str]:
        """The variables commands run with: PATH (ours first, then `base_path`) and each runtime's
        own, its caches under `home` (the sandbox's HOME, which it can write)."""
        env = {"PATH": ":".join([*self.path, base_path] if base_path else self.path)}
        for runtime in self.runtimes:
            name = runtime.declared.runtime
            if name == "node":
                env |= {"COREPACK_ENABLE_DOWNLOAD_PROMPT": "0", "npm_config_update_notifier": "false"}
            elif name == "go":
                env |= {
                    "GOROOT": str(runtime.installed.home),
                    "GOPATH": str(home / "go"),
                    "GOMODCACHE": str(home / "go" / "pkg" / "mod"),
                    "GOCACHE": str(home / ".cache" / "go-build"),
                    "GOTOOLCHAIN": "local",
                    "GOTELEMETRY": "off",
                }
            elif name == "rust":
                env |= {"CARGO_HOME": str(home / ".cargo"), "RUSTUP_HOME": str(home / ".rustup")}
        return env

    def to_markdown(self) -> str:
        """The summary's section: a table of what was provisioned, then what could not be."""
        if not (self.runtimes or self.failures or self.notes):
            return ""
        lines = ["#### Toolchains", ""]
        if self.runtimes:
            lines += [
                "| Runtime | Version | Declared | Declared by | Downloaded from | SHA-256 | Seconds |",
                "|---|---|---|---|---|---|---|",
            ]
            for r in self.runtimes:
                digests = ", ".join(d[:16] for d in r.installed.sha256)
                cached = " (already installed)" if r.installed.cached else ""
                lines.append(
                    f"| {_NAMES[r.declared.runtime]} | {r.installed.version} "
                    f"| {code_span(r.declared.spec, table=True)} | {code_span(r.declared.source, table=True)} "
                    f"| {code_span(_where(r.installed.urls), table=True)}{cached} "
                    f"| {code_span(digests, table=True)} | {r.seconds:.1f} |"
                )
            lines.append("")
        for r in self.runtimes:
            if r.note:
                lines.append(f"- {_NAMES[r.declared.runtime]}: {code_span(r.note)}")
        for f in self.failures:
            lines.append(
                f"- {_NAMES[f.declared.runtime]} {code_span(f.declared.spec)} was not provisioned: "
                f"{code_span(f.error.cause)} {code_span(f.error.remedy)}"
            )
        lines += [f"- {code_span(note)}" for note in self.notes]
        return "\n".join(lines).rstrip() + "\n"


def _where(urls: tuple[str, ...]) -> str:
    """One URL as it is; several (Rust's components) as their directory and file names."""
    if len(urls) == 1:
        return urls[0]
    base = urls[0].rsplit("/", 1)[0] + "/"
    if all(u.startswith(base) for u in urls):
        return base + " (" + ", ".join(u.removeprefix(base) for u in urls) + ")"
    return " ".join(urls)


def provision(
    root: Path,
    job: Mapping[str, object],
    *,
    dest: Path,
    mirror: str | None = None,
    matrix: Mapping[str, object] | None = None,
    where: Platform | None = None,
) -> Provisioned:
    """Install the runtimes `job` (a parsed workflow job) and the checkout at `root` declare into
    `dest`, from the publishers (or `mirror`, ci-autofix's own setting, never the repository's)."""
    return provision_declared(declared(root, job, matrix=matrix), dest=dest, mirror=mirror, where=where)


def provision_declared(
    declarations: Declarations, *, dest: Path, mirror: str | None = None, where: Platform | None = None
) -> Provisioned:
    sources = Sources.of(mirror)
    platform = where or Platform.here()
    runtimes: list[Runtime] = []
    failures: list[Unprovisioned] = []
    notes = list(declarations.notes)
    for wanted in declarations.runtimes:
        if wanted.runtime not in PROVISIONED:
            notes.append(
                f"{_NAMES[wanted.runtime]} {wanted.spec} ({wanted.source}) is declared, "
                "but ci-autofix does not provision it yet"
            )
            continue
        started = time.monotonic()
        try:
            release = resolve(wanted.runtime, wanted.spec, sources, platform)
            installed = install(release, dest)
        except ToolchainError as exc:
            failures.append(Unprovisioned(wanted, exc))
            continue
        runtimes.append(Runtime(wanted, installed, time.monotonic() - started, release.note))
    return Provisioned(tuple(runtimes), tuple(failures), tuple(notes))
