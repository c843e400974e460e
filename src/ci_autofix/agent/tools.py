"""The agent's tools: typed functions whose JSON schema comes from their signature and docstring.

`tool(function)` reads the parameters' annotations (str, int, float, bool, list[str],
Literal[...], `X | None`) and the Google-style docstring (summary, then `Args:`), and checks
the model's input against them before calling, so malformed input becomes an error result
the model can act on. `Toolbox` holds the tools of one attempt: the text editor, `search`,
`list_files`, `run` and `finish`.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ci_autofix.agent.editor import TOOL_NAME as EDITOR_NAME
from ci_autofix.agent.editor import TextEditor
from ci_autofix.agent.failure import ToolFailure
from ci_autofix.agent.files import list_tree
from ci_autofix.agent.files import search as search_files
from ci_autofix.agent.model import Confidence
from ci_autofix.reap import Survivors
from ci_autofix.redact import redact
from ci_autofix.sandbox import Sandbox, SandboxViolation, command_argv

MAX_RESULT_CHARS = 16_000

_JSON_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    function: Callable[..., str]

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def __call__(self, arguments: dict[str, Any]) -> str:
        return self.function(**_checked(self.input_schema, arguments))


def tool(function: Callable[..., str], *, name: str | None = None, extra_description: str = "") -> Tool:
    """A `Tool` whose schema is derived from `function`'s signature and docstring."""
    hints = typing.get_type_hints(function)
    summary, arg_docs = _parse_docstring(inspect.getdoc(function) or "")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(function).parameters.values():
        if param.name == "self":
            continue
        schema = _schema_for(hints.get(param.name, str))
        if doc := arg_docs.get(param.name):
            schema["description"] = doc
        properties[param.name] = schema
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    description = summary + (f"\n\n{extra_description}" if extra_description else "")
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return Tool(name or function.__name__, description, schema, function)


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    head, _, args = doc.partition("\nArgs:\n")
    arg_docs: dict[str, str] = {}
    current = None
    for line in args.splitlines():
        if match := re.match(r"^\s{2,8}(\w+):\s*(.*)$", line):
            current = match.group(1)
            arg_docs[current] = match.group(2).strip()
        elif current and line.strip():
            arg_docs[current] += " " + line.strip()
        elif not line.strip():
            current = None
    return head.strip(), arg_docs


def _schema_for(annotation: Any) -> dict[str, Any]:
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return _schema_for(options[0])
    if origin is Literal:
        values = list(typing.get_args(annotation))
        return {"type": _JSON_TYPES[type(values[0])], "enum": values}
    if origin is list:
        (item,) = typing.get_args(annotation) or (str,)
        return {"type": "array", "items": _schema_for(item)}
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    raise TypeError(f"tool parameter type {annotation!r} has no JSON schema here")


def _checked(schema: dict[str, Any], arguments: object) -> dict[str, Any]:
    if not isinstance(arguments, dict):
        raise ToolFailure("the tool input must be a JSON object")
    properties: dict[str, Any] = schema["properties"]
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise ToolFailure(
            f"unknown parameter(s) {', '.join(unknown)}; the parameters are: {', '.join(properties)}"
        )
    missing = [name for name in schema["required"] if name not in arguments]
    if missing:
        raise ToolFailure(f"missing required parameter(s): {', '.join(missing)}")
    for name, value in arguments.items():
        if value is None and name not in schema["required"]:
            continue
        if problem := _mismatch(properties[name], value):
            raise ToolFailure(f"parameter `{name}` {problem}")
    return {k: v for k, v in arguments.items() if v is not None}


def _mismatch(schema: dict[str, Any], value: object) -> str | None:
    kind = schema["type"]
    python = {
        "string": (str,),
        "integer": (int,),
        "number": (int, float),
        "boolean": (bool,),
        "array": (list,),
    }
    ok = isinstance(value, python[kind]) and not (kind in ("integer", "number") and isinstance(value, bool))
    if not ok:
        return f"must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, got {type(value).__name__}"
    if "enum" in schema and value not in schema["enum"]:
        return f"must be one of {', '.join(map(str, schema['enum']))}"
    if kind == "array":
        for item in value:  # type: ignore[attr-defined]
            if problem := _mismatch(schema["items"], item):
                return "items " + problem
    return None


@dataclass
class Finish:
    summary: str
    root_cause: str
    confidence: Confidence
    notes_left_as_is: list[str] = field(default_factory=list)


class Toolbox:
    """The tools of one attempt, bound to its sandbox and command allowlist."""

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        allowed_commands: Sequence[str],
        allow_shell: bool,
        command_timeout: float,
        secrets: Sequence[str] = (),
    ) -> None:
        self.sandbox = sandbox
        self.allowed = {_normal(c): c for c in allowed_commands if c.strip()}
        self.allow_shell = allow_shell
        self.command_timeout = command_timeout
        self.secrets = tuple(s for s in secrets if s)
        self.finished: Finish | None = None
        self.commands_run: list[tuple[str, int | None]] = []
        self.editor = TextEditor(sandbox)
        if allow_shell:
            rule = "Any shell command is allowed (bash -e -o pipefail)."
        elif self.allowed:
            rule = "Only these exact commands are allowed:\n" + "\n".join(
                f"- `{c}`" for c in self.allowed.values()
            )
        else:
            rule = "No command is allowed in this repository's configuration."
        self.tools = {
            t.name: t
            for t in (
                tool(self.search),
                tool(self.list_files),
                tool(self.run, extra_description=rule),
                tool(self.finish),
            )
        }

    def definitions(self) -> list[dict[str, Any]]:
        return [self.editor.definition(), *(t.definition() for t in self.tools.values())]

    def dispatch(self, name: str, arguments: Any) -> tuple[str, bool]:
        """Run one tool call; returns (text for the model, is_error). Raises only `Survivors`."""
        try:
            if name == EDITOR_NAME:
                if not isinstance(arguments, dict):
                    raise ToolFailure("the tool input must be a JSON object")
                text = self.editor(arguments)
            elif name in self.tools:
                text = self.tools[name](arguments)
            else:
                raise ToolFailure(
                    f"there is no tool named {name!r}; the tools are: {', '.join([EDITOR_NAME, *self.tools])}"
                )
            return self._clean(text), False
        except (ToolFailure, SandboxViolation) as exc:
            return self._clean(f"Error: {exc}"), True
        except Survivors:  # a process we could not kill: the run stops here, whatever the model says
            raise
        except Exception as exc:  # a tool must never take the loop down
            return self._clean(f"Error: the tool failed ({type(exc).__name__}: {exc})"), True

    def _clean(self, text: str) -> str:
        text = redact(text, self.secrets)
        if len(text) > MAX_RESULT_CHARS:
            head = MAX_RESULT_CHARS // 4
            text = (
                text[:head]
                + f"\n[... {len(text) - MAX_RESULT_CHARS} characters omitted ...]\n"
                + text[-(MAX_RESULT_CHARS - head) :]
            )
        return text

    # ---- the tools (their docstrings are what the model reads) -------------------------------------
    def search(self, pattern: str, path: str = ".", glob: str | None = None) -> str:
        """Search the repository's files (ignored files left out) for a regular expression.

        Returns matching lines as `path:line: text`, at most 100. One search reads at most
        5,000 files (50 MB) and stops after 5 seconds of matching: keep patterns simple.

        Args:
            pattern: A Python regular expression matched against each line.
            path: A directory or file to search under, relative to the repository root.
            glob: Only search files whose path or name matches this glob, e.g. `*.py`.
        """
        return search_files(self.sandbox, pattern, path, glob)

    def list_files(self, path: str = ".", max_depth: int = 2) -> str:
        """List the repository's files and directories (ignored files left out).

        Args:
            path: The directory to list, relative to the repository root.
            max_depth: How many levels deep to list (1 to 6).
        """
        entries = list_tree(self.sandbox, path, max_depth=min(max(max_depth, 1), 6))
        return "\n".join(entries) if entries else "(no files)"

    def run(self, command: str) -> str:
        """Run a command in the repository root and return its exit code and output.

        Use it to reproduce the failure before changing anything and to verify the fix after.

        Args:
            command: The command line, exactly as listed below.
        """
        key = _normal(command)
        if not self.allow_shell and key not in self.allowed:
            listed = ", ".join(f"`{c}`" for c in self.allowed.values()) or "none"
            raise ToolFailure(
                f"`{command}` is not an allowed command. Allowed: {listed}. Arbitrary commands "
                "need `allow-shell: true` in the workflow, which only the repository's owners can set."
            )
        line = self.allowed.get(key, command)
        result = self.sandbox.run(command_argv(line), timeout=self.command_timeout)
        self.commands_run.append((line, result.exit_code))
        status = result.describe() + (" (output shortened)" if result.truncated else "")
        return f"$ {line}\n[{status}]\n{result.output}"

    def finish(
        self, summary: str, root_cause: str, confidence: Confidence, notes_left_as_is: list[str] | None = None
    ) -> str:
        """Finish the attempt: call this once, after the failing command passes (or when you cannot fix it).

        Args:
            summary: What you changed and why, in a few sentences, for the pull request.
            root_cause: Where the actual behaviour diverged from the expected one, with file and line.
            confidence: How sure you are that the change fixes the root cause.
            notes_left_as_is: One line per finding you deliberately left as-is (each also has a NOTE comment in
                the code).
        """
        self.finished = Finish(summary.strip(), root_cause.strip(), confidence, list(notes_left_as_is or []))
        return "Recorded. The attempt is over."


def _normal(command: str) -> str:
    return " ".join(command.split())
