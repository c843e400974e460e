"""What a task runner would run, read from its file without running it: a `make` target's
recipe (the Makefile), a tox environment's `commands` (tox.ini), a nox session's `session.run`
calls (noxfile.py, read with `ast`), a `package.json` script (`npm run`, `npm test`, `yarn`, `pnpm`).

A failing step that runs `make format-check` or `tox -e lint` names no tool itself; its recipe
does. The files are the repository's (untrusted): size-capped, never followed out of the
repository, never executed, and what they say is only ever read back as words (`commands`),
never run as ours. Make's variables are expanded from the Makefile's own plain assignments;
prerequisites run first, as make runs them.

tox and nox are read from a `Path` (the checkout) or a `Read` (the failing commit's git objects,
`workflow.replay`), with what they install before the commands (`tox_env`, `nox_session`).
"""

from __future__ import annotations

import ast
import configparser
import json
import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# a repository file's text by its path relative to the repository's root, or None
Read = Callable[[str], str | None]

_MAX_BYTES = 1024 * 1024
_DEPTH = 5
_ASSIGN_RE = re.compile(
    r"^(?:override\s+|export\s+)?(?P<name>[A-Za-z_][\w.-]*)\s*(?::{1,3}=|\?=|\+=|=)\s*(?P<value>.*)$"
)
_RULE_RE = re.compile(r"^(?P<targets>[^\s:=#][^:=#]*?)\s*::?(?!=)\s*(?P<prereqs>[^;#]*)(?:;(?P<inline>.*))?$")
_VARIABLE_RE = re.compile(r"\$(?:\((?P<paren>[A-Za-z_][\w.-]*)\)|\{(?P<brace>[A-Za-z_][\w.-]*)\})")


def _read(root: Path, rel: str) -> str | None:
    try:
        path = (root / rel).resolve()
        base = root.resolve()
        if base not in path.parents or not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


# ---- make -----------------------------------------------------------------------------------------------
def make_recipe(root: Path, args: list[str]) -> list[str] | None:
    """The recipe lines `make <args>` would run (prerequisites first), or None when the Makefile
    or a target is not there."""
    makefile, targets, directory = "", [], root
    it = iter(args)
    for arg in it:
        if arg in ("-f", "--file", "--makefile"):
            makefile = next(it, "")
        elif arg in ("-C", "--directory"):
            directory = root / next(it, ".")
        elif arg.startswith("-") or "=" in arg:
            continue
        else:
            targets.append(arg)
    names = [makefile] if makefile else ["GNUmakefile", "makefile", "Makefile"]
    text = next((t for name in names if (t := _read(directory, name)) is not None), None)
    if text is None or root.resolve() not in [directory.resolve(), *directory.resolve().parents]:
        return None
    variables, rules, first = _parse_makefile(text)
    if not targets and first:
        targets = [first]
    lines: list[str] = []
    for target in targets:
        if target not in rules or not _expand_rule(target, rules, variables, lines, depth=0):
            return None
    return lines


def _parse_makefile(text: str) -> tuple[dict[str, str], dict[str, tuple[list[str], list[str]]], str]:
    """Its plain variables, its rules (target -> prerequisites, recipe lines) and its first target."""
    variables: dict[str, str] = {}
    rules: dict[str, tuple[list[str], list[str]]] = {}
    first = ""
    current: list[list[str]] = []  # the recipes of the rule being read
    for line in re.sub(r"\\\n\s*", " ", text).splitlines():
        if line.startswith("\t"):
            for lines in current:
                lines.append(line[1:])
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        current = []
        if match := _ASSIGN_RE.match(stripped):
            variables[match.group("name")] = match.group("value").strip()
        elif match := _RULE_RE.match(stripped):
            recipe: list[str] = []
            if match.group("inline"):
                recipe.append(match.group("inline").strip())
            for target in match.group("targets").split():
                rules[target] = (match.group("prereqs").split(), recipe)
                if not first and not target.startswith("."):
                    first = target
            current = [recipe]
    return variables, rules, first


def _expand_rule(
    target: str,
    rules: dict[str, tuple[list[str], list[str]]],
    variables: dict[str, str],
    out: list[str],
    *,
    depth: int,
) -> bool:
    if depth > _DEPTH:
        return False
    prereqs, recipe = rules[target]
    for prereq in prereqs:
        if prereq in rules and not _expand_rule(prereq, rules, variables, out, depth=depth + 1):
            return False
    for line in recipe:
        line = _expand(line.strip().lstrip("@-+ "), variables)
        if line:
            out.append(line)
    return True


def _expand(text: str, variables: dict[str, str]) -> str:
    for _ in range(_DEPTH):
        expanded = _VARIABLE_RE.sub(
            lambda m: variables.get(m.group("paren") or m.group("brace"), m.group(0)), text
        )
        if expanded == text:
            break
        text = expanded
    return text.replace("$$", "$")


# ---- package.json scripts ----------------------------------------------------------------------------
# npm's own commands that run a script; yarn and pnpm run any other word as a script when
# `package.json` has it (their own commands, `install`, `add`, `exec`..., are never scripts here)
_NPM_RUN = frozenset({"run", "run-script", "rum", "urn"})
_NPM_LIFECYCLE = frozenset({"test", "t", "tst", "start", "stop", "restart"})
_NOT_SCRIPTS = frozenset(
    {"install", "i", "ci", "add", "remove", "rm", "uninstall", "exec", "dlx", "x", "create", "init", "why",
     "link", "unlink", "pack", "publish", "config", "set", "cache", "info", "view", "outdated", "up",
     "upgrade", "update", "audit", "dedupe", "import", "bin", "workspace", "workspaces", "version",
     "help", "--version", "-v"}
)  # fmt: skip


def package_script(root: Path, args: list[str], runner: str = "npm") -> list[str] | None:
    """The commands `npm run <name>` (`npm test`, `yarn <name>`, `pnpm run <name>`...) runs from
    `package.json`'s `scripts`: `pre<name>`, the script, `post<name>`, with the arguments given
    after it; None when the command runs no script or `package.json` does not have it."""
    name, extra = _script_name(runner, args)
    if name is None:
        return None
    try:
        manifest = json.loads(_read(root, "package.json") or "null")
    except json.JSONDecodeError:
        return None
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    if not isinstance(scripts, dict) or not isinstance(scripts.get(name), str):
        return None
    main = " ".join([scripts[name], *(shlex.quote(a) for a in extra)])
    around = [scripts.get(f"pre{name}"), main, scripts.get(f"post{name}")]
    return [line for line in around if isinstance(line, str) and line.strip()]


def _script_name(runner: str, args: list[str]) -> tuple[str | None, list[str]]:
    words = [a for a in args if a not in ("-s", "--silent", "-q", "--quiet")]
    if not words:
        return None, []
    head, rest = words[0], words[1:]
    if runner == "npm" and head in _NPM_LIFECYCLE:
        name = "test" if head in ("t", "tst") else head
    elif head in _NPM_RUN and rest and not rest[0].startswith("-"):
        name, rest = rest[0], rest[1:]
    elif runner in ("yarn", "pnpm") and head not in _NOT_SCRIPTS and not head.startswith("-"):
        name = head
    else:
        return None, []
    return name, rest[1:] if rest[:1] == ["--"] else rest


# ---- shell scripts ------------------------------------------------------------------------------------
def script_lines(source: Path | Read, path: str) -> list[tuple[int, str]] | None:
    """The command lines of a shell script the step runs (`./.ci.gofmt.sh`, `bash scripts/lint.sh`):
    each with its line number, stripped, blank and comment lines left out; read as words, never run.
    Lines end at `\\n` only, as the shell reads them. None when it is not a file inside the repository.
    The one reader of repository scripts: the fixers read through it tolerantly, the replay strictly."""
    normal = posixpath.normpath(path)
    if normal.startswith(("/", "../")) or normal == "..":
        return None
    text = _text(source, normal)
    if text is None or "\0" in text:
        return None
    numbered = ((number, line.strip()) for number, line in enumerate(text.split("\n"), 1))
    return [(number, line) for number, line in numbered if line and not line.startswith("#")]


# ---- tox and nox ---------------------------------------------------------------------------------------
@dataclass
class Session:
    """What a tox environment or nox session runs: its commands, and what it installs first
    (as words of `pip install`, in order; empty when it installs nothing)."""

    commands: list[str] = field(default_factory=list)
    installs: list[list[str]] = field(default_factory=list)


def _text(source: Path | Read, rel: str) -> str | None:
    return _read(source, rel) if isinstance(source, Path) else source(rel)


def tox_commands(root: Path | Read, args: list[str]) -> list[str] | None:
    """The `commands` of the environments `tox [run] -e a,b` runs (tox.ini), or None."""
    env = tox_env(root, args)
    return env.commands if env is not None else None


def tox_env(source: Path | Read, args: list[str]) -> Session | None:
    """The `commands` of the environments `tox [run] -e a,b` runs (tox.ini), and their `deps`
    (with the project itself unless `skip_install`), or None."""
    envs = _option_values(args, ("-e",))
    text = _text(source, "tox.ini")
    if text is None or not envs:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    found = Session()
    for env in envs:
        section = f"testenv:{env}"
        if not parser.has_section(section) and not parser.has_section("testenv"):
            return None
        if not parser.has_section(section):
            section = "testenv"

        def value(name: str, section: str = section) -> str:
            return parser.get(section, name, fallback=None) or parser.get("testenv", name, fallback="") or ""

        for line in _for_env(value("commands").splitlines(), env):
            line = line.strip().lstrip("-").strip()
            line = line.replace("{posargs}", "").replace("{toxinidir}", ".").strip()
            if line and not line.startswith("#"):
                found.commands.append(line)
        deps = [d.split("#", 1)[0].strip() for d in _for_env(value("deps").splitlines(), env)]
        words = [w for dep in deps if dep for w in shlex.split(dep.replace("{toxinidir}", "."))]
        if value("skip_install").strip().lower() != "true":
            words.insert(0, ".")
        if words:
            found.installs.append(words)
    return found


_FACTORS_RE = re.compile(r"^\s*(?P<factors>[\w.!,{}-]+):\s+(?P<rest>.*)$")
_BRACES_RE = re.compile(r"\{([^{}]*)\}")


def _for_env(lines: list[str], env: str) -> list[str]:
    """The lines of a tox setting that apply to `env`: a `factor: value` line only when the
    environment's name has that factor (`a,b:` either, `a-b:` both, `!a:` not a, `{a,b}-c:` a-c or b-c)."""
    factors = set(env.split("-"))

    def has(factor: str) -> bool:
        return factor[1:] not in factors if factor.startswith("!") else factor in factors

    kept = []
    for line in lines:
        match = _FACTORS_RE.match(line)
        if match is None:
            kept.append(line)
        elif any(all(has(f) for f in part.split("-")) for part in _alternatives(match.group("factors"))):
            kept.append(match.group("rest"))
    return kept


def _alternatives(expression: str) -> list[str]:
    """A factor expression's alternatives: its top-level `,` and its `{a,b}` groups expanded."""
    parts = re.split(r",(?![^{]*\})", expression)
    found: list[str] = []
    for part in parts:
        match = _BRACES_RE.search(part)
        if match is None:
            found.append(part)
            continue
        for choice in match.group(1).split(","):
            found += _alternatives(part[: match.start()] + choice + part[match.end() :])
    return found


def nox_commands(root: Path | Read, args: list[str]) -> list[str] | None:
    """The `session.run(...)` calls (literal strings only) of the sessions `nox -s a b` runs
    (noxfile.py, read with `ast`), or None."""
    session = nox_session(root, args)
    return session.commands if session is not None else None


def nox_session(source: Path | Read, args: list[str]) -> Session | None:
    """The `session.run(...)` and `session.install(...)` calls (literal strings only) of the
    sessions `nox -s a b` runs (noxfile.py, read with `ast`), in the order written, or None."""
    sessions = _option_values(args, ("-s", "--session", "--sessions"))
    text = _text(source, "noxfile.py")
    if text is None or not sessions:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    found = Session()
    for name in sessions:
        function = functions.get(name)
        if function is None:
            return None
        calls = [
            node
            for node in ast.walk(function)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("run", "install")
            and node.args
            and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
        ]
        for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
            words = [str(a.value) for a in call.args if isinstance(a, ast.Constant)]
            if isinstance(call.func, ast.Attribute) and call.func.attr == "install":
                found.installs.append(words)
            else:
                found.commands.append(shlex.join(words))
    return found


def _option_values(args: list[str], options: tuple[str, ...]) -> list[str]:
    """The values of `-e a,b` / `-s a b` / `-ea`, split at commas."""
    values: list[str] = []
    it = iter(args)
    taking = False
    for arg in it:
        if arg in options:
            taking = True
            continue
        if arg.startswith("-"):
            taking = False
            inline = next((arg[len(o) :] for o in options if arg.startswith(o) and len(arg) > len(o)), "")
            values += [v for v in inline.lstrip("=").split(",") if v]
            continue
        if taking:
            values += [v for v in arg.split(",") if v]
    return values
