"""Secret redaction: applied to every text before it leaves the process.

Where it is applied: triage redacts what it keeps of a log (the excerpt, failure messages,
commands); the agent redacts each prompt block and tool result; `runner.Runner` redacts every log
line, annotation, output and the job summary; and the GitHub client posts only `Redacted` text
(`create_pull`, `update_pull`, `comment`, `edit_comment`): `deliver.suggestion.deliver` redacts
the PR title and the whole PR body that `deliver.report` built, and each comment is redacted where
it is posted (apply's through `Runner.redact`; propose's, the stuck report and the supersede
notes with a `Redactor` of the run's secrets).
Two layers, neither of which cares what stands next to a secret (a word character, an escaped
newline such as a literal `\\n` or `%0A`, a suffix):

- the run's own secrets (every token and key it holds, every value it masks), replaced wherever
  they occur, in each form a log can show them in (`secret_forms`): each line of a multi-line
  value, URL-encoded, JSON-escaped, and base64 at each of the three byte alignments (the git
  `AUTHORIZATION: basic` header, an `env | base64` dump);
- patterns for secret-shaped strings of well-known kinds (GitHub, Anthropic, AWS tokens, ...),
  anchored on their prefixes, never on word boundaries.

`Redactor` holds the run's secrets and makes `Redacted` text, the only kind the GitHub client
posts. The same patterns let the patch policy refuse a diff that adds a secret (`find_secrets`).
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

MASK = "[REDACTED]"


@dataclass(frozen=True)
class SecretPattern:
    name: str
    regex: re.Pattern[str]
    keep_group: int = 0  # a group kept verbatim before the mask (a header name, an env var name)
    # Lower-case strings of which every match holds one: when the lower-cased text holds none, the
    # pattern is not run at all (most of a long log has no `authorization`, no `token`, ...).
    hints: tuple[str, ...] = ()


# The keyword a sensitive variable name contains; the name's other characters need no matching
# (they are kept), so a match starts at the keyword, whatever precedes it, in linear time.
_SENSITIVE_NAMES = r"(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|_KEY)[A-Z0-9_]*"
# a value that is an expression reading the secret from somewhere else, not the secret itself
_NOT_A_VALUE = r"(?!\*\*\*|\[REDACTED\]|\$\{\{|\$[A-Za-z{(]|%[A-Za-z(]|<[a-z_-]+>|(?:os|process|sys|env|secrets|vars|self|settings|config)\.|[\w.]*[(\[])"

SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private-key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
            re.S,
        ),
        hints=("private key",),
    ),
    SecretPattern(
        "github-token",
        re.compile(r"gh[pousr]_[A-Za-z0-9]{30,255}"),
        hints=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    SecretPattern("github-pat", re.compile(r"github_pat_[A-Za-z0-9_]{22,255}"), hints=("github_pat_",)),
    SecretPattern("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}"), hints=("sk-ant-",)),
    SecretPattern(
        "openai-key",
        re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|sk-[A-Za-z0-9]{48}"),
        hints=("sk-",),
    ),
    SecretPattern(
        "aws-access-key",
        re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"),
        hints=("akia", "asia", "abia", "acca"),
    ),
    SecretPattern(
        "aws-secret-key",
        re.compile(r"(?i)(aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?)(?!\[REDACTED\])[A-Za-z0-9/+=]{40}"),
        keep_group=1,
        hints=("secret",),
    ),
    SecretPattern("npm-token", re.compile(r"npm_[A-Za-z0-9]{36}"), hints=("npm_",)),
    SecretPattern("pypi-token", re.compile(r"pypi-AgE[A-Za-z0-9_\-]{50,}"), hints=("pypi-age",)),
    SecretPattern("slack-token", re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}"), hints=("xox",)),
    SecretPattern("google-api-key", re.compile(r"AIza[0-9A-Za-z_\-]{35}"), hints=("aiza",)),
    SecretPattern(
        "authorization-header",
        re.compile(r"(?i)((?:proxy-)?authorization\s*[:=]\s*)(?!\s*\[REDACTED\])[^\r\n]+"),
        keep_group=1,
        hints=("authorization",),
    ),
    SecretPattern(
        "bearer-token",
        re.compile(r"([Bb]earer\s+)(?!\[REDACTED\])[A-Za-z0-9\-._~+/]{16,}=*"),
        keep_group=1,
        hints=("bearer",),
    ),
    SecretPattern(
        "url-credentials",
        re.compile(r"(://)(?!\[REDACTED\])[^/\s@:]+(?::[^/\s@]*)?(?=@[^\s/@]+)"),
        keep_group=1,
        hints=("://",),
    ),
    SecretPattern(
        "secret-assignment",
        re.compile(
            r"((?:" + _SENSITIVE_NAMES + r")[\"']?\s*[:=]\s*[\"']?)" + _NOT_A_VALUE + r"[^\s\"'`,;]{4,}"
        ),
        keep_group=1,
        hints=("token", "secret", "passw", "apikey", "_key"),
    ),
    SecretPattern(
        "secret-flag",
        re.compile(
            r"(?i)((?:--|[?&])(?:password|passwd|token|secret|api[_-]?key|access[_-]token|auth[_-]token)[= ])"
            + _NOT_A_VALUE
            + r"[^\s&\"'`]{4,}"
        ),
        keep_group=1,
        hints=("passw", "token", "secret", "apikey", "api_key", "api-key"),
    ),
)


def _keeping(group: int) -> Callable[[re.Match[str]], str]:
    """A replacement that keeps `group` (a header or variable name) and masks the rest."""

    def replace(match: re.Match[str]) -> str:
        return match.group(group) + MASK

    return replace


# Letters `re.IGNORECASE` matches to an ASCII one that `str.lower` does not lower to it (İ lowers
# to i plus a combining dot; the dotless ı and the long ſ stay as they are; the Kelvin sign already
# lowers to k): folded first, so a hint is found wherever its pattern matches.
_ASCII_TWINS = str.maketrans({"İ": "i", "ı": "i", "ſ": "s", "K": "k"})


def _lowered(text: str) -> str:
    """`text` lower-cased for the patterns' hints."""
    return text.lower() if text.isascii() else text.translate(_ASCII_TWINS).lower()


def redact(text: str, extra_secrets: Iterable[str] = ()) -> str:
    """Replace every known secret value (in each of its `secret_forms`) and every secret-shaped
    string with a mask."""
    forms = {form for secret in extra_secrets for form in secret_forms(secret)}
    for value in sorted(forms, key=len, reverse=True):
        text = text.replace(value, MASK)
    lowered = _lowered(text)
    for pattern in SECRET_PATTERNS:
        if pattern.hints and not any(hint in lowered for hint in pattern.hints):
            continue
        if pattern.keep_group:
            text = pattern.regex.sub(_keeping(pattern.keep_group), text)
        else:
            text = pattern.regex.sub(MASK, text)
    return text


MIN_SECRET = 4  # shorter values are not masked: they would garble every text they occur in
MIN_ENCODED = 8  # an encoded core shorter than this is too likely to occur by chance


@functools.lru_cache(maxsize=64)
def secret_forms(secret: str) -> frozenset[str]:
    """The strings that give `secret` away: itself, each of its lines, its URL-encoded and
    JSON-escaped forms, and the part of its base64 encoding (standard and URL-safe alphabets)
    that depends on the secret alone, at each of the three byte alignments it can have inside
    a larger encoded blob."""
    if len(secret) < MIN_SECRET:
        return frozenset()
    forms = {secret, *(line.strip() for line in secret.splitlines())}
    forms |= {quote(secret, safe=""), quote(secret), quote_plus(secret), json.dumps(secret)[1:-1]}
    raw = secret.encode("utf-8")
    for offset in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * offset + raw).decode("ascii")
            whole = 4 * ((offset + len(raw)) // 3)  # a last, partial group mixes in the bytes after
            core = encoded[4 if offset else 0 : whole]  # a first group mixes in the bytes before
            if len(core) >= MIN_ENCODED:
                forms.add(core)
    return frozenset(form for form in forms if len(form) >= MIN_SECRET)


@dataclass(frozen=True)
class Redacted:
    """Text that has been through a `Redactor`: the only kind the GitHub client posts as prose (PR
    titles and bodies, comments, reviews). Short fields of our own making (labels, status
    descriptions, dispatch inputs, branch names) go as plain `str`: they hold no text of the run's."""

    text: str


class Redactor:
    """The run's own secrets (every token and key it holds, every value it masks), applied with
    the patterns to every text that leaves the process."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: list[str] = []
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        for secret in secrets:
            if secret and secret not in self._secrets:
                self._secrets.append(secret)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(self._secrets)

    def text(self, text: str) -> str:
        """`text` with every secret masked, for a log line or a prompt."""
        return redact(text, self._secrets)

    def __call__(self, text: str) -> Redacted:
        """`text` with every secret masked, marked as safe to post on GitHub."""
        return Redacted(self.text(text))


def find_secrets(text: str) -> list[str]:
    """Names of the secret patterns that match in `text` (for the patch policy)."""
    return [p.name for p in SECRET_PATTERNS if p.regex.search(text)]
