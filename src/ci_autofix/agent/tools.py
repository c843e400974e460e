"""The agent's tools: typed functions whose JSON schema comes from their signature and docstring.

`tool(function)` builds a pydantic model of the function's parameters (their annotations and
defaults, with the Google-style docstring's `Args:` as descriptions; strict types, no unknown
parameter). Its JSON Schema is the tool's input schema, and it checks the arguments of each
tool call before the call, so malformed input becomes an error result that names each problem.
`Toolbox` holds the tools of one attempt: the text editor, `search`, `list_files`, `run`,
`logs` (when the failed jobs' logs were stored, see `joblogs`) and `finish`. Every tool call
is bounded by the attempt's `Deadline`: the slow ones (search, list, logs, run, the editor's
search for similar text) stop at it, and a call that ends past it raises `OutOfTime`, which ends
the attempt.
"""

from __future__ import annotations

import inspect
import re
import shlex
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import ErrorDetails, core_schema

from ci_autofix.agent.deadline import Deadline, OutOfTime
from ci_autofix.agent.editor import TOOL_NAME as EDITOR_NAME
from ci_autofix.agent.editor import TextEditor
from ci_autofix.agent.failure import ToolFailure
from ci_autofix.agent.files import list_tree
from ci_autofix.agent.files import search as search_files
from ci_autofix.agent.joblogs import JobLogs
from ci_autofix.agent.model import Confidence, ThreadReport
from ci_autofix.agent.selection import NotARunner, Refused, grammar_text, runners
from ci_autofix.agent.selection import check as check_selection
from ci_autofix.reap import Survivors
from ci_autofix.redact import redact
from ci_autofix.sandbox import Sandbox, SandboxViolation, command_argv

MAX_RESULT_CHARS = 16_000

# No "1" for 1, no true for 1, no 1 for "1"; an unknown parameter is an error, not ignored.
_STRICT = ConfigDict(strict=True, extra="forbid")

# pydantic's error types for a value of the wrong JSON type, as the schema names that type.
_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean",
    "list_type": "an array",
}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    function: Callable[..., str]
    arguments: type[BaseModel]

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def __call__(self, arguments: dict[str, Any]) -> str:
        return self.function(**_checked(self, arguments))


def tool(function: Callable[..., str], *, name: str | None = None, extra_description: str = "") -> Tool:
    """A `Tool` whose arguments model (and so its schema) is derived from `function`'s signature and docstring."""
    hints = typing.get_type_hints(function)
    summary, arg_docs = _parse_docstring(inspect.getdoc(function) or "")
    fields: dict[str, Any] = {}
    for param in inspect.signature(function).parameters.values():
        if param.name == "self":
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (
            hints.get(param.name, str),
            Field(default, description=arg_docs.get(param.name)),
        )
    tool_name = name or function.__name__
    arguments = create_model(tool_name, __config__=_STRICT, **fields)
    description = summary + (f"\n\n{extra_description}" if extra_description else "")
    return Tool(tool_name, description, _input_schema(arguments), function, arguments)


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


class _UntitledSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without the titles it derives from names (noise to the model)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> dict[str, Any]:
        json_schema = super().model_schema(schema)
        json_schema.pop("title", None)
        return json_schema


def _input_schema(arguments: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema as a tool's `input_schema`: an optional `X | None` parameter reads
    as an optional X (omitting it, or null, means its default), and a null default is left out."""
    schema = arguments.model_json_schema(schema_generator=_UntitledSchema)
    required = schema.get("required", [])
    for param, prop in schema["properties"].items():
        options = prop.get("anyOf", [])
        if param not in required and {"type": "null"} in options and len(options) == 2:
            (kept,) = [o for o in prop.pop("anyOf") if o != {"type": "null"}]
            prop.update(kept)
        if "default" in prop and prop["default"] is None:
            del prop["default"]
    inlined: dict[str, Any] = _inlined(schema, schema.pop("$defs", {}))
    return inlined


def _inlined(node: Any, defs: dict[str, Any]) -> Any:
    """`node` with each `{"$ref": "#/$defs/X"}` replaced by X itself (a parameter of a typed-dict
    type), without X's title and docstring: one self-contained schema is plainer to the model."""
    if isinstance(node, dict):
        if set(node) == {"$ref"}:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            return _inlined({k: v for k, v in target.items() if k not in ("title", "description")}, defs)
        return {k: _inlined(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inlined(v, defs) for v in node]
    return node


def _checked(tool: Tool, arguments: object) -> dict[str, Any]:
    """`arguments` validated by the tool's model: the keyword arguments to call it with (those
    given, so the function's defaults apply), or a `ToolFailure` naming every problem."""
    if not isinstance(arguments, dict):
        raise ToolFailure("the tool input must be a JSON object")
    params = tool.arguments.model_fields
    # null for an optional parameter means "not given", as the schema's optional X says
    given = {
        k: v for k, v in arguments.items() if not (v is None and k in params and not params[k].is_required())
    }
    try:
        valid = tool.arguments.model_validate(given)
    except ValidationError as exc:
        raise ToolFailure(_problems(tool, exc.errors())) from None
    return {name: getattr(valid, name) for name in valid.model_fields_set}


def _problems(tool: Tool, errors: list[ErrorDetails]) -> str:
    unknown = [str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden"]
    missing = [str(e["loc"][0]) for e in errors if e["type"] == "missing"]
    lines = []
    if unknown:
        lines.append(
            f"unknown parameter(s) {', '.join(unknown)}; the parameters are: {', '.join(tool.arguments.model_fields)}"
        )
    if missing:
        lines.append(f"missing required parameter(s): {', '.join(missing)}")
    seen: set[str] = set()
    for error in errors:
        param = str(error["loc"][0])
        if error["type"] in ("extra_forbidden", "missing") or param in seen:
            continue  # one problem per parameter: the first (for a list, the first bad item)
        seen.add(param)
        lines.append(f"parameter `{param}` {_problem(tool.input_schema, error)}")
    return "\n".join(lines)


def _problem(schema: dict[str, Any], error: ErrorDetails) -> str:
    """What is wrong with one parameter, in the schema's words (`must be an integer, got str`)."""
    param, *items = error["loc"]
    prop: dict[str, Any] = schema["properties"].get(param, {})
    for _ in items:
        prop = prop.get("items", {})
    if error["type"] in _EXPECTED:
        problem = f"must be {_EXPECTED[error['type']]}, got {type(error['input']).__name__}"
    elif error["type"] == "literal_error" and "enum" in prop:
        problem = f"must be one of {', '.join(map(str, prop['enum']))}"
    else:  # pydantic's own words for anything else ("Input should be ...")
        problem = error["msg"][:1].lower() + error["msg"][1:]
    if items:  # an item of a list: say which one, e.g. `tags[2]`
        return f"items {problem} (`{param}{''.join(f'[{i}]' for i in items)}`)"
    return problem


@dataclass
class Finish:
    summary: str
    root_cause: str
    confidence: Confidence
    notes_left_as_is: list[str] = field(default_factory=list)
    threads: list[ThreadReport] = field(default_factory=list)


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
        threads: Sequence[int] | None = None,
        logs: JobLogs | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.deadline = deadline or Deadline.never()  # the attempt's
        self.threads = None if threads is None else tuple(threads)  # review mode: the threads to report
        self.job_logs = logs
        self.allowed = {_normal(c): c for c in allowed_commands if c.strip()}
        self.allow_shell = allow_shell
        self.command_timeout = command_timeout
        self.secrets = tuple(s for s in secrets if s)
        self.finished: Finish | None = None
        self.commands_run: list[tuple[str, int | None]] = []
        self.editor = TextEditor(sandbox, deadline=self.deadline)
        self.runners = runners(self.allowed.values())
        if allow_shell:
            rule = "Any shell command is allowed (bash -e -o pipefail)."
        elif self.allowed:
            rule = "Only these exact commands are allowed:\n" + "\n".join(
                f"- `{c}`" for c in self.allowed.values()
            )
            if self.runners:
                rule += "\n" + grammar_text(self.runners)
        else:
            rule = "No command is allowed in this repository's configuration."
        self.tools = {
            t.name: t
            for t in (
                tool(self.search),
                tool(self.list_files),
                tool(self.run, extra_description=rule),
                *([tool(self.logs)] if logs is not None else []),
                tool(self.finish_review, name="finish", extra_description=self._threads_rule())
                if self.threads is not None
                else tool(self.finish),
            )
        }

    def definitions(self) -> list[dict[str, Any]]:
        return [self.editor.definition(), *(t.definition() for t in self.tools.values())]

    def dispatch(self, name: str, arguments: Any) -> tuple[str, bool]:
        """Run one tool call; returns (text for the model, is_error). Raises only `Survivors`, and
        `OutOfTime` when the attempt's deadline passed while the call of one of our tools ran
        (unless it finished the attempt): whatever it returned then, the attempt is over. A name
        that is no tool of ours (the model's words) is never put in the halt's message."""
        answer = self._call(name, arguments)
        if self.finished is None and (name == EDITOR_NAME or name in self.tools) and self.deadline.passed():
            raise OutOfTime(name)
        return answer

    def _call(self, name: str, arguments: Any) -> tuple[str, bool]:
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
        return search_files(self.sandbox, pattern, path, glob, deadline=self.deadline)

    def list_files(self, path: str = ".", max_depth: int = 2) -> str:
        """List the repository's files and directories (ignored files left out).

        Args:
            path: The directory to list, relative to the repository root.
            max_depth: How many levels deep to list (1 to 6).
        """
        entries = list_tree(self.sandbox, path, max_depth=min(max(max_depth, 1), 6), deadline=self.deadline)
        return "\n".join(entries) if entries else "(no files)"

    def run(self, command: str) -> str:
        """Run a command in the repository root and return its exit code and output.

        Use it to reproduce the failure before changing anything and to verify the fix after.

        Args:
            command: The command line, exactly as listed below (or a test runner's selection, as below).
        """
        key = _normal(command)
        if self.allow_shell or key in self.allowed:
            line = self.allowed.get(key, command)
            argv = command_argv(line)
        else:
            argv = self._selection(command)
            line = shlex.join(argv)
        # at most `command-timeout`, and never past the attempt's deadline (the sandbox takes 0 as "its default")
        timeout = max(min(self.command_timeout, self.deadline.remaining()), 0.001)
        result = self.sandbox.run(argv, timeout=timeout)
        self.commands_run.append((line, result.exit_code))
        status = result.describe() + (" (output shortened)" if result.truncated else "")
        return f"$ {line}\n[{status}]\n{result.output}"

    def _selection(self, command: str) -> list[str]:
        """The argv of an allowed test runner with selection arguments, or a `ToolFailure` saying why not."""
        listed = ", ".join(f"`{c}`" for c in self.allowed.values()) or "none"
        shell = (
            "Arbitrary commands need `allow-shell: true` in the workflow, which only the repository's "
            "owners can set."
        )
        try:
            return check_selection(command, self.runners, self.sandbox.relative)
        except NotARunner:
            raise ToolFailure(f"`{command}` is not an allowed command. Allowed: {listed}. {shell}") from None
        except Refused as exc:
            raise ToolFailure(
                f"`{command}` is not an allowed command, nor an allowed test runner with test-selection "
                f"arguments: {exc}"
            ) from None

    def logs(
        self,
        action: Literal["list", "read", "search"],
        job: str | None = None,
        start: int = 1,
        end: int | None = None,
        pattern: str | None = None,
        ignore_case: bool = False,
        context: int = 0,
        max_matches: int = 30,
    ) -> str:
        """Read and search the failed jobs' whole CI logs (timestamps and colours removed, secrets masked).

        `list`: each job and its line count. `read`: lines `start` to `end` of one `job` (1-based,
        inclusive), at most 400 lines or 12,000 characters per call (it says where to read on).
        `search`: lines matching `pattern` in one `job` or all, as `job:line: text`, with `context`
        lines around each (`job-line- text`); one search matches for at most 5 seconds.

        Args:
            action: `list`, `read` or `search`.
            job: The job's name, as `list` shows it (required for `read`; for `search`, all jobs when omitted).
            start: `read`: the first line.
            end: `read`: the last line (default: as far as one read goes).
            pattern: `search`: a Python regular expression matched against each line.
            ignore_case: `search`: match regardless of case.
            context: `search`: lines shown before and after each match (0 to 10).
            max_matches: `search`: at most this many matches (1 to 100).
        """
        logs = self.job_logs
        if logs is None:
            raise ToolFailure("no job log was stored for this attempt")
        if action == "list":
            return logs.list_jobs()
        if action == "read":
            if job is None:
                raise ToolFailure(
                    "`read` needs `job`; the jobs are: " + ", ".join(f"`{n}`" for n in logs.names)
                )
            return logs.read(job, start, end)
        if not pattern:
            raise ToolFailure("`search` needs `pattern`, a regular expression")
        return logs.search(
            pattern,
            job,
            ignore_case=ignore_case,
            context=context,
            max_matches=max_matches,
            deadline=self.deadline,
        )

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

    def finish_review(
        self, summary: str, root_cause: str, confidence: Confidence, threads: list[ThreadReport]
    ) -> str:
        """Finish the attempt: call this once, when every review thread is dealt with.

        Args:
            summary: What you changed and why, in a few sentences, for the pull request.
            root_cause: What the reviewer's findings had in common, or "separate findings".
            confidence: How sure you are that the changes address the findings.
            threads: One entry per review thread: its id, the outcome (fixed: the code now does what the
                finding asks; annotated: left as-is on purpose, with a `NOTE: <finding> -- left as-is because
                <rationale>` comment at that spot in the file's own comment syntax; declined: not changed,
                with the reason for a human) and a one-line note.
        """
        known = self.threads or ()
        ids = [t["thread"] for t in threads]
        unknown = sorted({i for i in ids if i not in known})
        twice = sorted({i for i in ids if ids.count(i) > 1})
        missing = [i for i in known if i not in ids]
        problems = [
            *([f"unknown thread id(s): {', '.join(map(str, unknown))}"] if unknown else []),
            *([f"thread(s) reported twice: {', '.join(map(str, twice))}"] if twice else []),
            *([f"no outcome for thread(s): {', '.join(map(str, missing))}"] if missing else []),
        ]
        if problems:
            raise ToolFailure(
                "; ".join(problems)
                + f". Report each of the threads {', '.join(map(str, known)) or '(none)'} once."
            )
        reports = [
            ThreadReport(thread=t["thread"], outcome=t["outcome"], note=t["note"].strip()) for t in threads
        ]
        annotated = [f"thread {t['thread']}: {t['note']}" for t in reports if t["outcome"] == "annotated"]
        self.finished = Finish(summary.strip(), root_cause.strip(), confidence, annotated, reports)
        return "Recorded. The attempt is over."

    def _threads_rule(self) -> str:
        if not self.threads:
            return "The review has no threads (its body is the finding): pass an empty `threads` list."
        return "The review threads to report on: " + ", ".join(map(str, self.threads)) + "."


def _normal(command: str) -> str:
    return " ".join(command.split())
