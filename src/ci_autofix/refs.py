"""Validation of untrusted branch names, commit ids and run or PR numbers, before any git call.

Follows git-check-ref-format's rules for a branch name, and refuses what a plain branch
never needs and an attacker would: a leading `-` (read as an option), `:` (a refspec),
whitespace and control characters, `refs/` prefixes.
"""

from __future__ import annotations

import re

from ci_autofix.errors import UserError

MAX_BRANCH_LENGTH = 255
MAX_NUMBER_DIGITS = 19  # GitHub's ids are 64-bit
_NUMBER = re.compile(rf"[1-9][0-9]{{0,{MAX_NUMBER_DIGITS - 1}}}")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_FORBIDDEN_CHARS = set(" ~^:?*[\\")


def branch_problem(name: str) -> str | None:
    """Why `name` is not a plain branch name, or None when it is one."""
    if not name:
        return "it is empty"
    if len(name) > MAX_BRANCH_LENGTH:
        return f"it is longer than {MAX_BRANCH_LENGTH} characters"
    if name.startswith("-"):
        return "it starts with '-'"
    if name.startswith("refs/"):
        return "it is a full ref, not a branch name"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "it contains a control character"
    if bad := sorted(set(name) & _FORBIDDEN_CHARS):
        return f"it contains {''.join(bad)!r}"
    if ".." in name or "@{" in name or name == "@":
        return "it contains '..' or '@{'"
    if name.startswith("/") or name.endswith("/") or "//" in name:
        return "it has an empty path component"
    if name.endswith("."):
        return "it ends with '.'"
    for part in name.split("/"):
        if part.startswith("."):
            return "a component starts with '.'"
        if part.endswith(".lock"):
            return "a component ends with '.lock'"
    return None


def check_branch_name(name: str, *, what: str = "branch") -> str:
    if problem := branch_problem(name):
        raise UserError(
            f"{what} {_shown(name)} is not a valid branch name: {problem}.",
            f"Pass a plain branch name (like `main` or `feature/x`) as {what}.",
        )
    return name


def is_sha(value: str) -> bool:
    return bool(_SHA.fullmatch(value))


def check_sha(value: str, *, what: str = "commit") -> str:
    if not is_sha(value):
        raise UserError(
            f"{what} {_shown(value)} is not a full commit id.",
            f"Pass the 40-character hexadecimal id of the {what}.",
        )
    return value


def plain_number(
    value: object, *, what: str, kind: str, remedy: str, max_digits: int = MAX_NUMBER_DIGITS
) -> int:
    """A run or pull request number from an input or a dispatch payload: plain ASCII decimal
    digits only (no sign, no `0x`, no `1_000`, no float), at most `max_digits` of them."""
    text = value.strip() if isinstance(value, str) else str(value) if type(value) is int else ""
    if not (_NUMBER.fullmatch(text) and len(text) <= max_digits):
        raise UserError(f"{what} ({_shown(str(value))}) is not a {kind}.", remedy)
    return int(text)


def _shown(value: str) -> str:
    text = value if len(value) <= 80 else value[:77] + "..."
    return repr(text)
