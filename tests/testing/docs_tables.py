"""The documentation's generated sections: inputs (with the values each accepts, from the settings
model) and outputs from action.yml, the policy rules from the policy table, commands from `--help`.

A section is the text between `<!-- NAME:start -->` and `<!-- NAME:end -->` on whichever page holds
it (README.md or a page of docs/). `python tests/testing/docs_tables.py --write` rewrites them;
tests/test_docs.py fails when they drift.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
COMMANDS = ("fix", "triage", "check-diff", "demo")


def load_action() -> dict[str, Any]:
    """action.yml is simple YAML written by us; read it without a YAML dependency."""
    action: dict[str, Any] = {"inputs": {}, "outputs": {}}
    section = None
    current: dict[str, str] | None = None
    for raw in (ROOT / "action.yml").read_text(encoding="utf-8").splitlines():
        if re.match(r"^\S", raw):
            section = raw.rstrip(":") if raw.endswith(":") else None
            continue
        if section not in ("inputs", "outputs"):
            continue
        if m := re.match(r"^  ([a-z0-9-]+):$", raw):
            current = action[section].setdefault(m.group(1), {})
        elif (m := re.match(r"^    (\w+): (.*)$", raw)) and current is not None:
            value = m.group(2)
            if value.startswith('"'):
                import json

                value = json.loads(value)
            current[m.group(1)] = value
    return action


def pages() -> list[Path]:
    """The pages that may hold generated sections: the README and docs/*.md."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def accepted(name: str) -> str:
    """What an input accepts, read from the settings model's type and bounds (what start-up checks)."""
    import types
    import typing

    import annotated_types
    from pydantic import SecretStr

    from ci_autofix.settings import Settings

    field = Settings.model_fields[name.replace("-", "_")]
    kind = field.annotation
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if typing.get_origin(kind) in (typing.Union, types.UnionType) and len(args) == 1:
        kind = args[0]  # optional: empty means "not given"
    bounds: list[str] = []
    shortest, longest = 0, None
    for meta in field.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            if isinstance(meta, getattr(annotated_types, attr.capitalize())):
                bounds.append(f"{sign} {_number(getattr(meta, attr))}")
        if isinstance(meta, annotated_types.MinLen):
            shortest = meta.min_length
        if isinstance(meta, annotated_types.MaxLen):
            longest = meta.max_length
    if longest is not None:
        bounds.append(f"of {shortest} to {longest} characters")
    elif shortest:
        bounds.append(f"of at least {shortest} characters")
    if typing.get_origin(kind) is typing.Literal:
        return ", ".join(f"`{v}`" for v in typing.get_args(kind))
    if kind is bool:
        return "`true`, `false`"
    if kind is SecretStr:
        return "a secret"
    if kind is int:
        return "a whole number" + (" " + ", ".join(bounds) if bounds else "")
    if kind is float:
        return "a number" + (" " + ", ".join(bounds) if bounds else "")
    if typing.get_origin(kind) is list:
        return "a list, comma or newline separated"
    return "text" + (" " + ", ".join(bounds) if bounds else "")


def inputs_table() -> str:
    rows = ["| input | default | accepts | description |", "|---|---|---|---|"]
    for name, spec in load_action()["inputs"].items():
        default = spec.get("default", "")
        shown = f"`{default}`" if default else ""
        description = spec["description"].replace("|", "\\|")
        rows.append(f"| `{name}` | {shown} | {accepted(name)} | {description} |")
    return "\n".join(rows)


def outputs_table() -> str:
    rows = ["| output | description |", "|---|---|"]
    for name, spec in load_action()["outputs"].items():
        rows.append(f"| `{name}` | {spec['description']} |")
    return "\n".join(rows)


def commands_section() -> str:
    import contextlib
    import io

    from ci_autofix.cli import build_parser

    os.environ["COLUMNS"] = "100"
    parts = [
        "`ci-autofix` runs the same stages on a checkout and a log file:",
        "",
        "```sh",
        "gh run view <run-id> --log-failed | ci-autofix fix -",
        "```",
        "",
    ]
    for command in COMMANDS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            build_parser(command).parse_args([command, "--help"])
        parts += [f"### `ci-autofix {command}`", "", "```text", out.getvalue().rstrip(), "```", ""]
    return "\n".join(parts).rstrip()


def policy_table() -> str:
    from ci_autofix.policy import rules_markdown

    return rules_markdown().rstrip()


def protected_table() -> str:
    from ci_autofix.paths import protected_markdown

    return protected_markdown()


SECTIONS = {
    "inputs": inputs_table,
    "outputs": outputs_table,
    "policy": policy_table,
    "protected": protected_table,
    "commands": commands_section,
}


def expected_text(text: str) -> str:
    """`text` (a page) with each generated section it holds rendered afresh."""
    for name, render in SECTIONS.items():
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
        text = pattern.sub(lambda m, r=render: m.group(1) + r() + "\n" + m.group(2), text)
    return text


def section(name: str) -> tuple[Path, str]:
    """The one page holding the section `name`, and the section's text."""
    found = [
        (page, text.split(f"<!-- {name}:start -->")[1].split(f"<!-- {name}:end -->")[0])
        for page in pages()
        if f"<!-- {name}:start -->" in (text := page.read_text(encoding="utf-8"))
    ]
    assert len(found) == 1, f"section {name} is on {len(found)} pages: {[str(p) for p, _ in found]}"
    return found[0]


if __name__ == "__main__":
    for page in pages():
        text = page.read_text(encoding="utf-8")
        if sys.argv[1:] == ["--write"]:
            page.write_text(expected_text(text), encoding="utf-8")
        elif expected_text(text) != text:
            print(f"{page.relative_to(ROOT)}: a generated section is out of date (run with --write)")
