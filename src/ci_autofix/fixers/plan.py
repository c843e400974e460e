"""Which fixers to run for a failure, on which paths, at which version."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ci_autofix.errors import UserError
from ci_autofix.fixers.catalog import BY_NAME, FIXERS, Fixer
from ci_autofix.fixers.commands import CommandFacts, Invocation, fix_arguments, read_commands
from ci_autofix.fixers.config import RepoConfig, read_repo_config
from ci_autofix.sandbox import Sandbox, SandboxViolation
from ci_autofix.tooling.ci_versions import CIRun, IndexUnknown
from ci_autofix.tooling.versions import Requirement
from ci_autofix.triage.model import Diagnosis

REPOSITORY = "."
# Failures that name no tool: they neither select nor rule out a fixer; the command decides.
_UNSPECIFIC_TOOLS = frozenset({"", "generic", "unknown", "error", "exit-code"})
_HOOK_FAILED_RE = re.compile(r"\.{3,}\s*Failed\s*\n\s*-\s*hook id:\s*(?P<id>[\w.-]+)")


@dataclass(frozen=True)
class FixerSpec:
    """One fixer to run: the command arguments after the tool's own, the paths it may change, the version."""

    name: str
    package: str
    args: tuple[str, ...]  # options kept from the failing command, then the paths
    scope: tuple[str, ...]  # repository-relative paths the fixer may change ("." is the repository)
    requirement: Requirement | None  # the version the repository pins; None: any (else the default)
    pin_source: str | None  # where that pin was read
    reason: str  # why this fixer was planned, for the report

    @property
    def fixer(self) -> Fixer:
        return BY_NAME[self.name]


def parse_requested(requested: Sequence[str]) -> list[str] | None:
    """The `fixers` input: None for `auto`, [] for `none`, else the names in running order."""
    names = [n.strip().lower() for n in requested if n.strip()]
    if not names or names == ["auto"]:
        return None
    if names == ["none"]:
        return []
    accepted = ", ".join(f"`{f.name}`" for f in FIXERS)
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        word = "is" if len(unknown) == 1 else "are"
        raise UserError(
            f"The `fixers` input names {', '.join(repr(u) for u in unknown)}, which {word} not a known fixer.",
            f"Set `fixers` to `auto` (the default), `none`, or a comma-separated list of: {accepted}.",
        )
    return [f.name for f in FIXERS if f.name in names]


def plan_fixers(
    root: Path,
    diagnosis: Diagnosis,
    requested: Sequence[str],
    commands: Sequence[str],
    ci: CIRun | None = None,
) -> list[FixerSpec]:
    """`commands`: the failed steps' commands and actions from the workflow (never the log's text);
    `ci`: what the failed run says about the versions it ran (`pinned`)."""
    names = parse_requested(requested)
    if names == []:
        return []
    config = read_repo_config(root)
    facts = read_commands(commands, root)
    reasons = (
        _auto(diagnosis, facts, config) if names is None else {n: "requested in `fixers`" for n in names}
    )
    pre_commit = bool(facts.pre_commit)
    plan = []
    for fixer in FIXERS:
        if fixer.name not in reasons:
            continue
        args, scope = _arguments(root, fixer, facts, config, pre_commit)
        # a program fixer runs what the ladder provisioned or the repository installed: no PyPI pin
        requirement, source = (None, None) if fixer.program else pinned(fixer.package, facts, config, ci)
        plan.append(
            FixerSpec(fixer.name, fixer.package, args, scope, requirement, source, reasons[fixer.name])
        )
    return plan


def pinned(
    package: str, facts: CommandFacts, config: RepoConfig, ci: CIRun | None = None
) -> tuple[Requirement | None, str | None]:
    """The version `package` runs at, for the fixer and for verification alike, and where that was
    read (recorded in `ci`). The one place that decides, in this order:

    1. a version on the failing command line itself (`uvx ruff@0.8.6`);
    2. the version the failed job printed (`ci.printed`: an install line, `--version` output, a
       pre-commit hook's revision);
    3. the repository's exact pin (`RepoConfig.pin`: a hook's `rev:` only when the failed step runs
       pre-commit; lock files, requirements and constraints files before the project's metadata);
    4. for a range or no pin, the newest release the range allows when CI ran (the log's timestamp,
       else the failing commit's date)
       (the package index's upload times); when the index cannot say, the range itself (the tool
       installed here when it fits, else the newest the range allows) and a note saying why.

    Without `ci` (no failed run to read), 2 and 4 are skipped: the pin, or none."""
    requirement, source = _decide(package, facts, config, ci)
    if ci is not None:
        ci.record(package, requirement, source)
    return requirement, source


def _decide(
    package: str, facts: CommandFacts, config: RepoConfig, ci: CIRun | None
) -> tuple[Requirement | None, str | None]:
    inline = next((i.pin for i in facts.invocations if i.fixer.package == package and i.pin), None)
    if inline:
        return Requirement(f"=={inline}"), "the failing command"
    if ci is not None and (printed := ci.printed.get(package)):
        return Requirement(f"=={printed.version}"), f"the failed job's log: {printed.line}"
    pin = config.pin(package, runs_pre_commit=bool(facts.pre_commit))
    if ci is None or (pin is not None and pin.requirement.exact):
        return (pin.requirement, pin.source) if pin else (None, None)
    requirement = pin.requirement if pin else None
    fits = f"{requirement.spec} ({pin.source})" if requirement and pin else "no pin"
    try:
        version = ci.released(package, requirement)
    except IndexUnknown as why:
        return requirement, f"{fits}; the newest release as of {ci.dated} is not known: {why}"
    day = ci.date.date() if ci.date else "?"
    return Requirement(f"=={version}"), f"the newest release on {day} ({ci.dated}) for {fits}"


def _auto(diagnosis: Diagnosis, facts: CommandFacts, config: RepoConfig) -> dict[str, str]:
    """Fixers whose tool the failure shows failing, kept when the repository configures the tool."""
    if diagnosis.is_infra:  # the step died of the infrastructure, not of its check
        return {}
    failed: dict[str, str] = {}
    specific = [f for f in diagnosis.failures if f.tool.lower() not in _UNSPECIFIC_TOOLS]
    for failure in specific:
        for fixer in FIXERS:
            if failure.tool.lower() in fixer.failure_tools and failure.kind.lower() in fixer.failure_kinds:
                failed.setdefault(fixer.name, f"the log shows {failure.tool} failing ({failure.kind})")
    hooks_failed = {m.group("id") for m in _HOOK_FAILED_RE.finditer(diagnosis.excerpt)}
    for hook in config.hooks:
        if hook.id in hooks_failed:
            failed.setdefault(hook.fixer.name, f"the pre-commit hook `{hook.id}` failed")
    if not specific:
        for invocation in facts.invocations:
            if invocation.checking:
                failed.setdefault(invocation.fixer.name, f"the failing step ran `{_show(invocation)}`")
        for run in facts.pre_commit:
            if hooks_failed:
                break
            for hook in config.hooks:
                if not run.hooks or hook.id in run.hooks:
                    failed.setdefault(
                        hook.fixer.name, f"the failing step ran pre-commit with hook `{hook.id}`"
                    )
    return {
        name: f"{reason}; the repository configures {BY_NAME[name].package} "
        f"({', '.join(config.evidence[BY_NAME[name].package][:3])})"
        for name, reason in failed.items()
        if config.configures(BY_NAME[name].package)
    }


def _show(invocation: Invocation) -> str:
    fixer = invocation.fixer
    sub = fixer.command[0] if fixer.package in ("ruff", "@biomejs/biome") or fixer.program == "cargo" else ""
    tool = fixer.program.rsplit("/", 1)[-1] if fixer.program else fixer.package
    return " ".join(p for p in (tool, sub, *invocation.args) if p)


def _arguments(
    root: Path, fixer: Fixer, facts: CommandFacts, config: RepoConfig, pre_commit: bool
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Options and paths from the failing command (or the pre-commit hook), and the resulting scope."""
    invocations = [i for i in facts.invocations if i.fixer is fixer]
    if invocations:
        options: list[str] = []
        paths: list[str] = []
        patterns: dict[str, str] = {}  # a glob the tool expands itself -> the directory it stays in
        whole = False
        for invocation in invocations:
            parsed = fix_arguments(fixer, invocation.args)
            options = options or list(parsed.options)
            inside = _inside(root, parsed.paths)
            globbed = _patterns(root, parsed.paths) if fixer.expands_globs else {}
            whole = whole or not (inside or globbed)
            paths += inside
            patterns.update(globbed)
        if not fixer.takes_paths:
            return tuple(options), (REPOSITORY,)
        if whole:
            return (*options, REPOSITORY), (REPOSITORY,)
        targets = tuple(dict.fromkeys([*paths, *patterns]))
        return (*options, *targets), tuple(dict.fromkeys([*paths, *patterns.values()]))
    hook = next((h for h in config.hooks if h.fixer is fixer), None) if pre_commit else None
    options = list(fix_arguments(fixer, hook.args).options) if hook else []
    return (*options, *([REPOSITORY] if fixer.takes_paths else [])), (REPOSITORY,)


_GLOB = re.compile(r"[*?\[{]")


def _patterns(root: Path, paths: Sequence[str]) -> dict[str, str]:
    """The glob patterns among `paths` (`'src/**/*.ts'`, `'{src,test}/**/*'`), each with the directory
    before its first wildcard, when that is inside the repository: the tool expands them itself, and
    what it writes stays in that directory. A pattern with `..` or an absolute one is dropped."""
    sandbox = Sandbox(root)
    kept: dict[str, str] = {}
    for raw in paths:
        match = _GLOB.search(raw)
        if match is None or raw.startswith(("/", "!")) or ".." in raw.split("/"):
            continue
        base = raw[: match.start()].rpartition("/")[0] or REPOSITORY
        try:
            rel = sandbox.relative(base)
        except SandboxViolation:
            continue
        if (sandbox.root / rel).is_dir():
            kept[raw] = str(rel) if str(rel) != "." else REPOSITORY
    return kept


def _inside(root: Path, paths: Sequence[str]) -> list[str]:
    """The paths that name something inside the repository, repository-relative; [] if none does."""
    sandbox = Sandbox(root)
    kept = []
    for raw in paths:
        try:
            rel = sandbox.relative(raw)
        except SandboxViolation:
            continue
        if (sandbox.root / rel).exists():
            kept.append(str(rel) if str(rel) != "." else REPOSITORY)
    return kept
