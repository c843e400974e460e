"""Secret redaction: applied to every text before it leaves the process.

Prompts, PR bodies, job summaries, annotations and log lines all pass through `redact`.
The same patterns let the patch policy refuse a diff that adds a secret (`find_secrets`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

MASK = "[REDACTED]"


@dataclass(frozen=True)
class SecretPattern:
    name: str
    regex: re.Pattern[str]
    keep_group: int = 0  # a group kept verbatim before the mask (a header name, an env var name)


_SENSITIVE_NAMES = (
    r"(?:[A-Z][A-Z0-9_]*)?(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY)[A-Z0-9_]*"
    r"|[A-Z][A-Z0-9_]*_KEY[A-Z0-9_]*"
)
# a value that is an expression reading the secret from somewhere else, not the secret itself
_NOT_A_VALUE = r"(?!\*\*\*|\[REDACTED\]|\$\{\{|\$[A-Za-z{(]|%[A-Za-z(]|<[a-z_-]+>|(?:os|process|sys|env|secrets|vars|self|settings|config)\.|[\w.]*[(\[])"

SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
            re.S,
        ),
    ),
    SecretPattern("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b")),
    SecretPattern("github-pat", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b")),
    SecretPattern("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    SecretPattern("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    SecretPattern("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b")),
    SecretPattern(
        "aws-secret-key",
        re.compile(
            r"(?i)(\baws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?)(?!\[REDACTED\])[A-Za-z0-9/+=]{40}\b"
        ),
        keep_group=1,
    ),
    SecretPattern("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    SecretPattern("pypi-token", re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{50,}")),
    SecretPattern("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
    SecretPattern("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    SecretPattern(
        "authorization-header",
        re.compile(r"(?i)(\b(?:proxy-)?authorization\s*[:=]\s*)(?!\s*\[REDACTED\])[^\r\n]+"),
        keep_group=1,
    ),
    SecretPattern(
        "bearer-token",
        re.compile(r"(\b[Bb]earer\s+)(?!\[REDACTED\])[A-Za-z0-9\-._~+/]{16,}=*"),
        keep_group=1,
    ),
    SecretPattern(
        "url-credentials",
        re.compile(r"(\b[a-z][a-z0-9+.\-]*://)(?!\[REDACTED\])[^/\s@:]+(?::[^/\s@]*)?(?=@[^\s/@]+)", re.I),
        keep_group=1,
    ),
    SecretPattern(
        "secret-assignment",
        re.compile(
            r"(\b(?:" + _SENSITIVE_NAMES + r")[\"']?\s*[:=]\s*[\"']?)" + _NOT_A_VALUE + r"[^\s\"'`,;]{4,}"
        ),
        keep_group=1,
    ),
    SecretPattern(
        "secret-flag",
        re.compile(
            r"(?i)((?:--|[?&])(?:password|passwd|token|secret|api[_-]?key|access[_-]token|auth[_-]token)[= ])"
            + _NOT_A_VALUE
            + r"[^\s&\"'`]{4,}"
        ),
        keep_group=1,
    ),
)


def _keeping(group: int) -> Callable[[re.Match[str]], str]:
    """A replacement that keeps `group` (a header or variable name) and masks the rest."""

    def replace(match: re.Match[str]) -> str:
        return match.group(group) + MASK

    return replace


def redact(text: str, extra_secrets: Iterable[str] = ()) -> str:
    """Replace every known secret value and every secret-shaped string with a mask."""
    for value in sorted({s for s in extra_secrets if len(s) >= 4}, key=len, reverse=True):
        text = text.replace(value, MASK)
    for pattern in SECRET_PATTERNS:
        if pattern.keep_group:
            text = pattern.regex.sub(_keeping(pattern.keep_group), text)
        else:
            text = pattern.regex.sub(MASK, text)
    return text


def find_secrets(text: str) -> list[str]:
    """Names of the secret patterns that match in `text` (for the patch policy)."""
    return [p.name for p in SECRET_PATTERNS if p.regex.search(text)]
