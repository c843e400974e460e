"""Running the planned fixers in the checkout, and finding out what each one changed."""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ci_autofix.fixers.catalog import Fixer
from ci_autofix.fixers.install import Installer, Unavailable
from ci_autofix.fixers.plan import REPOSITORY, FixerSpec
from ci_autofix.git import Git
from ci_autofix.redact import redact
from ci_autofix.sandbox import Sandbox

_DELETED = "deleted"
_LINK = "link:"


@dataclass(frozen=True, kw_only=True)
class FixerRun:
    """What one fixer did: built once, when it ended (or was skipped)."""

    name: str
    version: str | None
    argv: list[str] = field(default_factory=list)
    exit_code: int | None = None
    changed_files: list[str] = field(default_factory=list)  # repository-relative, changed and kept
    output_tail: str = ""  # redacted
    skipped_reason: str | None = None  # set when the fixer did not run, or its changes were undone
    restored: list[str] = field(default_factory=list)  # out of scope or protected: changed, then put back
    pin_source: str | None = None  # where the version came from; None: no pin

    @property
    def ran(self) -> bool:
        return self.skipped_reason is None


def run_fixers(sandbox: Sandbox, plan: list[FixerSpec], *, tools_dir: Path, timeout: float) -> list[FixerRun]:
    """Run each fixer in order; a fixer that cannot be installed is skipped with the reason."""
    tools = tools_dir.resolve()
    if tools == sandbox.root or sandbox.root in tools.parents:
        raise ValueError(
            f"tools_dir {tools_dir} is inside the repository; installed tools would become part of the fix"
        )
    git = sandbox.git()  # ours: never the work tree's own .git
    toolbox = Installer(tools_dir, timeout=timeout)
    runs = []
    for spec in plan:
        if spec.fixer.program:  # a provisioned runtime's program, or the repository's node_modules
            executable, version = _program(sandbox, spec.fixer), None
            if executable is None:
                runs.append(FixerRun(name=spec.name, version=None, skipped_reason=_absent(spec.fixer)))
                continue
        else:
            tool = toolbox.tool(spec.package, spec.requirement)
            if isinstance(tool, Unavailable):
                version = tool.version or (spec.requirement.exact if spec.requirement else None)
                runs.append(
                    FixerRun(
                        name=spec.name,
                        version=version,
                        skipped_reason=tool.reason,
                        pin_source=spec.pin_source,
                    )
                )
                continue
            executable, version = str(tool.executable), tool.version
        argv = [executable, *spec.fixer.command, *spec.args]
        before = _state(git, sandbox.root)
        saved = {
            p: (sandbox.root / p).read_bytes()
            for p, h in before.items()
            if h != _DELETED and not h.startswith(_LINK)
        }
        result = sandbox.run(argv, timeout=timeout)
        after = _state(git, sandbox.root)
        changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        undo = [p for p in changed if result.timed_out or not _allowed(sandbox, spec, p)]
        _restore(git, sandbox.root, undo, before, saved)
        reason = None
        if result.timed_out:
            reason = f"{spec.name} {result.describe()}; its changes were undone"
        elif result.not_found:
            reason = result.describe()
        runs.append(
            FixerRun(
                name=spec.name,
                version=version,
                argv=argv,
                exit_code=result.exit_code,
                changed_files=[p for p in changed if p not in undo],
                output_tail=redact(result.tail(30)),
                skipped_reason=reason,
                restored=[] if result.timed_out else undo,
                pin_source=spec.pin_source,
            )
        )
    return runs


def _program(sandbox: Sandbox, fixer: Fixer) -> str | None:
    """How to run `fixer.program` in `sandbox`: from its PATH (the provisioned runtimes first), or
    from the checkout (the repository's own `node_modules/.bin`, never a global one); None when absent."""
    if "/" in fixer.program:
        return f"./{fixer.program}" if os.path.lexists(sandbox.root / fixer.program) else None
    return fixer.program if shutil.which(fixer.program, path=sandbox.env().get("PATH", "")) else None


def _absent(fixer: Fixer) -> str:
    if fixer.name == "goimports":
        return (
            "`goimports` is not installed here: it is not part of the Go distribution, and ci-autofix "
            "does not install it (gofmt, which is, still runs when the step names it)"
        )
    if "/" in fixer.program:
        return (
            f"`{fixer.program}` is not in the checkout: ci-autofix runs the repository's own {fixer.package}, "
            "installed from its lockfile (`npm ci`), and none was installed"
        )
    return (
        f"`{fixer.program}` is not installed here: the toolchain the failed job sets up could not be "
        "provisioned (see the verification's Toolchains section)"
    )


def _allowed(sandbox: Sandbox, spec: FixerSpec, path: str) -> bool:
    if sandbox.protected_by(path):
        return False
    return any(
        scope == REPOSITORY or path == scope or path.startswith(scope.rstrip("/") + "/")
        for scope in spec.scope
    )


def _state(git: Git, root: Path) -> dict[str, str]:
    """Every path that differs from HEAD (tracked changes, untracked files), with a hash of its content."""
    out = git.run("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames").output
    state = {}
    for entry in out.split("\0"):
        if len(entry) < 4:
            continue
        path = entry[3:]
        file = root / path
        if file.is_symlink():
            state[path] = _LINK + str(file.readlink())
        elif file.is_file():
            state[path] = hashlib.sha256(file.read_bytes()).hexdigest()
        else:
            state[path] = _DELETED
    return state


def _restore(git: Git, root: Path, paths: list[str], before: dict[str, str], saved: dict[str, bytes]) -> None:
    """Put `paths` back as they were before the fixer ran: HEAD's version, or the state recorded then."""
    for path in paths:
        file = root / path
        earlier = before.get(path)
        if root.resolve() not in file.parent.resolve().parents and file.parent.resolve() != root.resolve():
            continue  # a directory on the way was swapped for a link out of the repository: touch nothing
        if file.is_symlink():
            file.unlink()
        if earlier is None:
            if git.run("cat-file", "-e", f"HEAD:{path}", check=False).ok:
                git.run("checkout", "HEAD", "--", path, env={"GIT_LITERAL_PATHSPECS": "1"})
            elif file.is_file():
                file.unlink()
        elif earlier == _DELETED or earlier.startswith(_LINK):
            if file.is_file():
                file.unlink()
            if earlier.startswith(_LINK):
                file.parent.mkdir(parents=True, exist_ok=True)
                file.symlink_to(earlier.removeprefix(_LINK))
        else:
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(saved[path])  # an existing file keeps its mode
