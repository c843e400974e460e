"""The README's generated sections: inputs and outputs from action.yml, commands from `--help`.

`python tests/docs_tables.py --write` rewrites them; tests/test_docs.py fails when they drift.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
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


def inputs_table() -> str:
    rows = ["| input | default | description |", "|---|---|---|"]
    for name, spec in load_action()["inputs"].items():
        default = spec.get("default", "")
        shown = f"`{default}`" if default else ""
        description = spec["description"].replace("|", "\\|")
        rows.append(f"| `{name}` | {shown} | {description} |")
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


def expected_readme(text: str) -> str:
    for name, render in SECTIONS.items():
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
        text = pattern.sub(lambda m, r=render: m.group(1) + r() + "\n" + m.group(2), text)
    return text


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        README.write_text(expected_readme(README.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(expected_readme(README.read_text(encoding="utf-8")))
