"""A failed step's script as it can be replayed here: each command that runs its tools through a
runner CI set up is read through to the tool invocations inside it.

CI's runners make environments we do not have and need not have: `uv run`, `poetry run`,
`hatch run` and `pdm run` run a command in an environment they synced; `tox -e lint` and
`nox -s lint` install their session's dependencies and run its commands. Here the prepared
environment (first on PATH, with the tools at the versions CI ran) takes their place, so:

- a wrapper is peeled off (`uv run --frozen ruff check .` is `ruff check .`); a `pdm run` or
  `hatch run` of a script the project defines is that script's command; a tool uv fetches for
  the run (`uvx nox -s lint`, `uv tool run ...`, without options or a version) is that command;
- `tox -e E` / `nox -s S` is its commands (`fixers.recipes`), and what it installs first joins
  the job's setup (`pip install` words, for the prepared environment);
- a repository script the step runs (`./scripts/lint.sh`, `bash scripts/lint.sh`) is repository
  code: it is read, never run as ours, and inlined only when it is plain commands (`set` options,
  comments and lines of plain words: no variable, substitution, operator or redirection); it then
  runs in a subshell, as its own process did. Otherwise it runs as written, and the note says why.

Only a line of plain words is read through; the files are read from the failing commit's git
objects (`Read`), never from a working tree code could have changed. Every substitution, and
every command left as written, is said in `notes`: the evidence shows what was replayed.
"""

from __future__ import annotations

import posixpath
import re
import shlex
import tomllib
from dataclasses import dataclass, field

from ci_autofix.fixers.catalog import BLACK, ISORT, RUFF_CHECK, RUFF_FORMAT, Fixer
from ci_autofix.fixers.commands import line_tokens, pre_commit_hooks_named, skip_options
from ci_autofix.fixers.config import pre_commit_hooks
from ci_autofix.fixers.recipes import Read, Session, nox_session, script_lines, tox_env

_WRAPPERS = frozenset({"uv", "poetry", "pdm", "hatch"})
_ELSEWHERE = frozenset(
    {"--directory", "--project", "-p", "-C", "--cwd"}
)  # a wrapper run in another directory
_DEPTH = 4
_OPERATORS = frozenset(";&|()<>")
_WORD_RE = re.compile(r"^[\w@%+=:,./*?\[\]^-]+$")  # left unquoted: globs stay globs, as written
_SET_RE = re.compile(r"^set(?:\s+[-+][A-Za-z]+(?:\s+pipefail)?)+$")


@dataclass
class Replayed:
    """A step's script as it is replayed here, what it installs first, and what was read through."""

    script: str
    installs: list[str] = field(default_factory=list)  # `python -m pip install ...` for the environment
    notes: list[str] = field(default_factory=list)


def replay(script: str, read: Read) -> Replayed:
    """`script` with each plain command line that runs a wrapper, a session or a repository script
    replaced by the commands inside it."""
    out = Replayed("")
    lines: list[str] = []
    for line in script.split("\n"):
        words = plain_words(line)
        resolved = _resolve(words, read, out, 0) if words else None
        lines += resolved if resolved is not None else [line]
    out.script = "\n".join(lines)
    return out


def plain_words(line: str) -> list[str] | None:
    """The words of a line that is one simple command of plain words (no operator, redirection,
    variable or substitution), else None; None too for a blank or comment line."""
    words = line_tokens(line)
    if words is None or any(set(w) & _OPERATORS or "$" in w or "`" in w for w in words):
        return None
    return words


def _join(words: list[str]) -> str:
    return " ".join(w if _WORD_RE.match(w) else shlex.quote(w) for w in words)


def _resolve(words: list[str], read: Read, out: Replayed, depth: int) -> list[str] | None:
    """The lines `words` stands for, or None to keep it as written."""
    if depth > _DEPTH:
        return None
    head = posixpath.basename(words[0])
    shown = _join(words)
    if head in _WRAPPERS and words[1:2] == ["run"]:
        return _wrapper(head, words, read, out, depth)
    if head == "uvx" or (head == "uv" and words[1:3] == ["tool", "run"]):
        return _tool_run(words[1 if head == "uvx" else 3 :], shown, read, out, depth)
    if head == "tox" or head == "nox":
        return _session(head, words, read, out, depth)
    if head == "pre-commit" and words[1:2] == ["run"]:
        return _pre_commit(words, read, out)
    path = words[1] if head in ("bash", "sh") and len(words) > 1 else words[0] if "/" in words[0] else ""
    if path and not path.startswith("-"):
        return _repository_script(path, shown, read, out, depth)
    return None


def _wrapper(head: str, words: list[str], read: Read, out: Replayed, depth: int) -> list[str] | None:
    shown = _join(words)
    rest = skip_options(words[2:])
    own = words[2 : len(words) - len(rest)]  # the wrapper's options, not the command's
    if any(w.split("=", 1)[0] in _ELSEWHERE for w in own if w.startswith("-")):
        out.notes.append(f"`{shown}` runs in another directory, so it is run as written.")
        return None
    if not rest:
        return None
    defined = _project_script(head, rest[0], read)
    if defined is not None:
        if not defined:
            out.notes.append(
                f"`{shown}` runs the project's script `{rest[0]}`, which is not plain commands, so it is run as written."
            )
            return None
        lines = [_join(w) for w in defined]
        out.notes.append(f"`{shown}` runs the project's script `{rest[0]}`: {_listed(lines)}.")
        return _each(defined, read, out, depth)
    out.notes.append(
        f"`{shown}` runs `{_join(rest)}` in the environment {head} set up in CI: here it runs in "
        "ci-autofix's prepared environment, with the tools at the versions CI ran."
    )
    return _each([rest], read, out, depth)


def _tool_run(rest: list[str], shown: str, read: Read, out: Replayed, depth: int) -> list[str] | None:
    """`uvx TOOL ARGS` (`uv tool run`): TOOL ARGS, when uv is given no option and no version (those
    choose a package or a version the prepared environment may not hold)."""
    if not rest:
        return None
    if rest[0].startswith("-") or "@" in rest[0] or "=" in rest[0]:
        out.notes.append(f"`{shown}` chooses the tool's package or version itself, so it is run as written.")
        return None
    out.notes.append(
        f"`{shown}` runs `{_join(rest)}` as a tool uv fetched in CI: here it runs in ci-autofix's prepared "
        "environment, with the tools at the versions CI ran."
    )
    return _each([rest], read, out, depth)


def _project_script(head: str, name: str, read: Read) -> list[list[str]] | None:
    """A `pdm run` or `hatch run` script the project defines in pyproject.toml: its commands (empty
    when they are not plain), or None when `name` is not one."""
    if head not in ("pdm", "hatch"):
        return None
    env, _, script = name.rpartition(":") if head == "hatch" else ("", "", name)
    try:
        pyproject = tomllib.loads(read("pyproject.toml") or "")
    except tomllib.TOMLDecodeError:
        return None
    tool = pyproject.get("tool", {})
    if head == "pdm":
        table = tool.get("pdm", {}).get("scripts", {})
    else:
        table = tool.get("hatch", {}).get("envs", {}).get(env or "default", {}).get("scripts", {})
    if not isinstance(table, dict) or script not in table:
        return None if not env else []
    return _script_commands(table, script, 0)


_ARGS_RE = re.compile(r"\{args(?::(?P<default>[^{}]*))?\}")


def _script_commands(table: dict[str, object], script: str, depth: int) -> list[list[str]]:
    """A project script's commands, with `{args}` given nothing (its default, if any) and a command
    that names another script of the same table read through, as hatch and pdm run them; empty when
    one is not plain words."""
    value = table[script]
    if isinstance(value, dict):
        value = value.get("cmd")
    texts = [value] if isinstance(value, str) else value if isinstance(value, list) else None
    if texts is None or depth > _DEPTH or not all(isinstance(t, str) for t in texts):
        return []
    commands: list[list[str]] = []
    for text in texts:
        words = plain_words(_ARGS_RE.sub(lambda m: m.group("default") or "", str(text)))
        if not words or any("{" in w for w in words):
            return []
        if words[0] in table and words[0] != script:
            inner = _script_commands(table, words[0], depth + 1)
            if not inner:
                return []
            commands += [[*inner[-1], *words[1:]] if i == len(inner) - 1 else c for i, c in enumerate(inner)]
        else:
            commands.append(words)
    return commands


def _session(head: str, words: list[str], read: Read, out: Replayed, depth: int) -> list[str] | None:
    shown = _join(words)
    args = words[1:]
    if head == "tox" and args[:1] == ["run"]:  # tox 4
        args = args[1:]
    found: Session | None = tox_env(read, args) if head == "tox" else nox_session(read, args)
    what = "tox.ini" if head == "tox" else "noxfile.py"
    if found is None or not found.commands:
        out.notes.append(
            f"`{shown}` could not be read from {what} (no such session, or none named), so it is run as written."
        )
        return None
    commands = [plain_words(c) for c in found.commands]
    bad = [c for c, w in zip(found.commands, commands, strict=True) if w is None or "{" in c]
    installs = [w for words in found.installs for w in words]
    bad += [w for w in installs if "{" in w or "$" in w]
    if bad:
        out.notes.append(
            f"`{shown}` runs `{bad[0]}`, which is not plain words (a {head} substitution or shell syntax), "
            "so it is run as written."
        )
        return None
    for install in found.installs:
        line = shlex.join(["python", "-m", "pip", "install", *install])
        if line not in out.installs:
            out.installs.append(line)
    pip = f"; it installs `{' '.join(installs)}` first" if installs else ""
    out.notes.append(
        f"`{shown}` is replayed as the commands {what} gives it, in ci-autofix's prepared environment: "
        f"{_listed(found.commands)}{pip}."
    )
    return _each([w for w in commands if w], read, out, depth)


# a hook of the tool's own repository, as a check over the repository's files: pre-commit passes every
# tracked file of the hook's types, and fails when the hook changed one; the check mode fails the same.
_HOOK_CHECKS: dict[str, tuple[list[str], frozenset[str]]] = {
    RUFF_CHECK.name: (["ruff", "check", "--force-exclude"], frozenset({"--fix", "--exit-non-zero-on-fix"})),
    RUFF_FORMAT.name: (["ruff", "format", "--force-exclude", "--check"], frozenset()),
    BLACK.name: (["black", "--check"], frozenset()),
    ISORT.name: (["isort", "--check-only"], frozenset()),
}
_HOOK_FILTERS = frozenset(
    {"files", "exclude", "types", "types_or", "exclude_types", "stages", "pass_filenames"}
)


def _pre_commit(words: list[str], read: Read, out: Replayed) -> list[str] | None:
    """`pre-commit run [hook] --all-files` as the checks of its hooks, when every hook it runs is one
    of our tools' own hooks (at the `rev` the configuration pins, which the tools' versions follow)."""
    shown = _join(words)
    args = words[2:]
    if "--all-files" not in args and "-a" not in args:
        out.notes.append(f"`{shown}` checks only the files a commit changed, so it is run as written.")
        return None
    named = pre_commit_hooks_named(args)
    config = read(".pre-commit-config.yaml") or read(".pre-commit-config.yml")
    hooks = [h for h in pre_commit_hooks(config or "") if not named or str(h[2].get("id")) in named]
    other = [
        str(hook.get("id")) for _, _, hook, fixer in hooks if fixer is None or fixer.name not in _HOOK_CHECKS
    ]
    filtered = [str(hook.get("id")) for _, _, hook, _ in hooks if _HOOK_FILTERS & set(hook)]
    if not hooks or other or filtered:
        why = (
            f"its hooks {', '.join(f'`{h}`' for h in other)} are not a tool ci-autofix runs"
            if other
            else f"its hooks {', '.join(f'`{h}`' for h in filtered)} choose their own files"
            if filtered
            else "the configuration has no such hook"
        )
        out.notes.append(f"`{shown}` is run as written: {why}.")
        return None
    lines = [_hook_check(fixer, hook) for _, _, hook, fixer in hooks if fixer is not None]
    revs = ", ".join(f"`{hook.get('id')}` at {rev}" for _, rev, hook, _ in hooks)
    out.notes.append(
        f"`{shown}` is replayed as the checks its hooks run ({revs}), over the repository's files: {_listed(lines)}."
    )
    return lines


def _hook_check(fixer: Fixer, hook: dict[str, object]) -> str:
    command, dropped = _HOOK_CHECKS[fixer.name]
    raw = hook.get("args", [])
    args = [str(a) for a in raw if str(a) not in dropped] if isinstance(raw, list) else []
    return _join([*command, *args, "."])


def _repository_script(path: str, shown: str, read: Read, out: Replayed, depth: int) -> list[str] | None:
    numbered = script_lines(read, path)
    if numbered is None:
        return None
    normal = posixpath.normpath(path)
    kept: list[str] = []
    commands: list[list[str]] = []
    for number, line in numbered:
        if _SET_RE.match(line):
            kept.append(line)
            continue
        words = plain_words(line)
        if words is None:
            out.notes.append(
                f"`{shown}` runs the repository's script `{normal}`, whose line {number} (`{line[:80]}`) is "
                "not a plain command, so the script is run as written."
            )
            return None
        commands.append(words)
        kept.append("")  # its place, filled below
    lines = [_join(w) for w in commands]
    out.notes.append(
        f"`{shown}` runs the repository's script `{normal}`, read as its commands: {_listed(lines)}."
    )
    resolved = iter(_each([w], read, out, depth) for w in commands)
    body = [r for line in kept for r in ([line] if line else next(resolved))]
    # its own process: its `set` options and its exit status are its own, as when it ran as a file
    return ["(", "set +e", *body, ")"]


def _each(commands: list[list[str]], read: Read, out: Replayed, depth: int) -> list[str]:
    lines: list[str] = []
    for words in commands:
        resolved = _resolve(words, read, out, depth + 1)
        lines += resolved if resolved is not None else [_join(words)]
    return lines


def _listed(lines: list[str]) -> str:
    shown = "; ".join(f"`{line}`" for line in lines[:8])
    return shown + ("; …" if len(lines) > 8 else "")
