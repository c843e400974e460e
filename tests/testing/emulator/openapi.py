"""Checks requests and responses against GitHub's published REST description.

The description is a vendored subset of `@octokit/openapi` (MIT, see `tests/openapi/NOTICE`),
plus `tests/openapi/supplement.json`: the few operations our code uses that the subset lacks,
written for this project from GitHub's REST documentation and pointing at the subset's
component schemas. OpenAPI 3.0 schemas are turned into JSON Schema (2020-12) once: `nullable`
becomes a `null` alternative. Every problem is recorded as a `Violation`; nothing raises, so
the emulator keeps answering and the test fixture fails the test at teardown.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012 as _DRAFT

OPENAPI_DIR = Path(__file__).resolve().parents[2] / "openapi"
SUBSET = OPENAPI_DIR / "github-rest-openapi-subset.json"
SUPPLEMENT = OPENAPI_DIR / "supplement.json"
_URN = "urn:github-rest"
_METHODS = ("get", "post", "put", "patch", "delete")

# Documented in the operation's prose but not in its schema: GitHub accepts a bare array of
# label names ("You can also pass an `array` of labels directly"), which PyGithub sends.
_PROSE_ALLOWED = {("POST", "/repos/{owner}/{repo}/issues/{issue_number}/labels"): {"type": "array"}}


@dataclass(frozen=True)
class Violation:
    kind: str  # "unknown-operation" | "request-body" | "query" | "response-body" | "response-status"
    method: str
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.method} {self.path}: {self.detail}"


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    pattern: re.Pattern[str]
    literal_chars: int
    pointer: str  # JSON pointer of the operation object inside the combined document
    spec: dict[str, Any]


def _to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema objects → JSON Schema: `nullable: true` admits `null`."""
    if isinstance(node, list):
        return [_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _to_json_schema(value) for key, value in node.items()}
    if out.pop("nullable", False) is True:
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif "type" not in out:
            inner = {k: v for k, v in out.items() if k not in ("description", "title")}
            out = {"anyOf": [inner, {"type": "null"}]}
    return out


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


class OpenApi:
    """The combined description with operation lookup and validation."""

    def __init__(self) -> None:
        document = json.loads(SUBSET.read_text(encoding="utf-8"))
        supplement = json.loads(SUPPLEMENT.read_text(encoding="utf-8"))
        for template, ops in supplement["paths"].items():
            document["paths"].setdefault(template, {}).update(copy.deepcopy(ops))
        self.supplemented = {
            (method.upper(), template)
            for template, ops in supplement["paths"].items()
            for method in ops
            if method in _METHODS
        }
        self.document = _to_json_schema(document)
        self.registry: Registry[Any] = Registry().with_resource(
            _URN, Resource.from_contents(self.document, default_specification=_DRAFT)
        )
        self.operations = self._operations()
        self._validators: dict[str, Draft202012Validator] = {}

    def _operations(self) -> list[Operation]:
        params = self.document["components"]["parameters"]
        result = []
        for template, ops in self.document["paths"].items():
            for method, spec in ops.items():
                if method not in _METHODS:
                    continue
                multi = set()
                for param in spec.get("parameters", []):
                    if "$ref" in param:
                        param = params[param["$ref"].rsplit("/", 1)[1]]
                    if param.get("in") == "path" and param.get("x-multi-segment"):
                        multi.add(param["name"])
                regex = ""
                for piece in re.split(r"(\{[^}]+\})", template):
                    if piece.startswith("{"):
                        regex += "(.+)" if piece[1:-1] in multi else "([^/]+)"
                    else:
                        regex += re.escape(piece)
                literal = len(re.sub(r"\{[^}]+\}", "", template))
                pointer = f"#/paths/{_escape(template)}/{method}"
                result.append(
                    Operation(method.upper(), template, re.compile(f"^{regex}$"), literal, pointer, spec)
                )
        return result

    def find(self, method: str, path: str) -> Operation | None:
        """The operation for a request path (without the `/api/v3` prefix and query)."""
        matches = [op for op in self.operations if op.method == method and op.pattern.match(path)]
        return max(matches, key=lambda op: op.literal_chars, default=None)

    def _validator(self, pointer: str) -> Draft202012Validator:
        if pointer not in self._validators:
            schema = {"$ref": f"{_URN}{pointer}"}
            self._validators[pointer] = Draft202012Validator(schema, registry=self.registry)
        return self._validators[pointer]

    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            target: Any = self.document
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def check_request(self, method: str, path: str, body: Any) -> tuple[Operation | None, list[Violation]]:
        op = self.find(method, path)
        if op is None:
            return None, [Violation("unknown-operation", method, path, "not in the REST description")]
        request_body = op.spec.get("requestBody")
        if body is None:
            if request_body and request_body.get("required"):
                return op, [Violation("request-body", method, path, "a JSON body is required")]
            return op, []
        if request_body is None:
            return op, [Violation("request-body", method, path, "the operation takes no body")]
        if "application/json" not in request_body.get("content", {}):
            return op, []
        prose = _PROSE_ALLOWED.get((method, op.template))
        if prose and Draft202012Validator(prose).is_valid(body):
            return op, []
        pointer = f"{op.pointer}/requestBody/content/application~1json/schema"
        errors = [_describe(e) for e in self._validator(pointer).iter_errors(body)]
        return op, [Violation("request-body", method, path, e) for e in errors[:5]]

    def check_query(self, op: Operation, path: str, query: dict[str, str]) -> list[Violation]:
        """Query parameters must be declared by the operation and match their schema."""
        declared = {}
        for param in op.spec.get("parameters", []):
            param = self._resolve(param)
            if param.get("in") == "query":
                declared[param["name"]] = param.get("schema", {})
        problems = []
        for name, raw in query.items():
            if name not in declared:
                problems.append(Violation("query", op.method, path, f"undeclared query parameter `{name}`"))
                continue
            schema = declared[name]
            value: Any = raw
            kind = schema.get("type")
            try:
                if kind == "integer" or (isinstance(kind, list) and "integer" in kind):
                    value = int(raw)
                elif kind == "boolean":
                    value = {"true": True, "false": False}[raw]
            except (ValueError, KeyError):
                problems.append(Violation("query", op.method, path, f"`{name}={raw}` is not a {kind}"))
                continue
            for error in Draft202012Validator(schema).iter_errors(value):
                problems.append(Violation("query", op.method, path, f"`{name}`: {error.message[:200]}"))
        return problems

    def check_response(self, op: Operation, path: str, status: int, body: Any) -> list[Violation]:
        responses = op.spec.get("responses", {})
        key = str(status) if str(status) in responses else "default" if "default" in responses else None
        if key is None:
            if status < 400:
                return [Violation("response-status", op.method, path, f"status {status} is not documented")]
            # GitHub answers errors the description does not list for every operation (404, 410,
            # 422, 429, 5xx): they must still be GitHub's error shape.
            if not isinstance(body, dict) or "message" not in body:
                return [
                    Violation("response-body", op.method, path, f"{status}: an error body needs `message`")
                ]
            errors = [
                _describe(e) for e in self._validator("#/components/schemas/basic-error").iter_errors(body)
            ]
            return [Violation("response-body", op.method, path, f"{status}: {e}") for e in errors[:5]]
        response = self._resolve(responses[key])
        content = response.get("content", {})
        if "application/json" not in content or body is None:
            return []
        schema_ptr = f"{op.pointer}/responses/{key}"
        if "$ref" in responses[key]:
            schema_ptr = responses[key]["$ref"]
        pointer = f"{schema_ptr}/content/application~1json/schema"
        errors = [_describe(e) for e in self._validator(pointer).iter_errors(body)]
        return [Violation("response-body", op.method, path, f"{status}: {e}") for e in errors[:5]]


def _describe(error: Any) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"at {where}: {error.message[:300]}"


@cache
def load() -> OpenApi:
    """The description, parsed once per test session (validators are cached on it)."""
    return OpenApi()
