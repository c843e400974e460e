"""Prompts live in files (`ci_autofix/prompts/*.md`); this reads and fills them."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@cache
def load(name: str) -> str:
    return (resources.files("ci_autofix") / "prompts" / f"{name}.md").read_text(encoding="utf-8")


def render(name: str, **values: str) -> str:
    """The prompt with each `{{name}}` replaced; a missing value is an error, not a silent blank."""
    text = load(name)

    def fill(match: re.Match[str]) -> str:
        return values[match.group(1)]

    return _PLACEHOLDER.sub(fill, text)


def untrusted(label: str, text: str) -> str:
    """`text` between delimiters the model is told never to take instructions from.

    A closing delimiter inside the text is defused, so the data cannot end its own block.
    """
    safe_label = re.sub(r"[^\w .:/@#()-]", "_", label)[:120]
    body = re.sub(r"(?i)</?\s*untrusted", lambda m: m.group(0).replace("<", "&lt;"), text)
    return f'<untrusted source="{safe_label}">\n{body.rstrip()}\n</untrusted>'
