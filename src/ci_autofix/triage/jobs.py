"""The public entry points: one log, or several failed jobs merged under one budget."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ci_autofix.redact import redact
from ci_autofix.triage import excerpt
from ci_autofix.triage.engine import Analysis, analyse, dedupe, diagnose_one
from ci_autofix.triage.model import Category, Diagnosis, Failure
from ci_autofix.triage.tokens import estimate_tokens

DEFAULT_MAX_TOKENS = 6000
MIN_TOKENS = 1


def diagnose(log: str | bytes | Path, *, max_tokens: int = DEFAULT_MAX_TOKENS, where: str = "") -> Diagnosis:
    """The Diagnosis of one raw job log (text, bytes, or a file's path: a file is read in chunks, never
    whole); its excerpt is redacted and within `max_tokens`."""
    return diagnose_one(log, max_tokens=max(MIN_TOKENS, max_tokens), where=where)


def _key(f: Failure) -> tuple[object, ...]:
    return (f.tool, f.kind, f.file, f.line, f.test_id, f.rule, f.message)


def diagnose_jobs(
    jobs: Sequence[tuple[str, str | bytes | Path]], *, max_tokens: int = DEFAULT_MAX_TOKENS
) -> Diagnosis:
    """Several failed jobs' logs as one Diagnosis.

    A failure seen in several jobs (a matrix, a retry) is listed once with every job in
    `where`. A job whose failures all appeared in an earlier job adds only its name to that
    job's excerpt header; the distinct jobs share the one budget equally.
    """
    max_tokens = max(MIN_TOKENS, max_tokens)
    if not jobs:
        return Diagnosis([], [], Category.UNKNOWN, "", 0, max_tokens)
    analyses: list[tuple[str, Analysis]] = [(name, analyse(log, name)) for name, log in jobs]
    distinct: list[tuple[str, Analysis, list[str]]] = []
    for name, analysis in analyses:
        keys = {_key(f.failure) for f in analysis.found}
        for _, kept, also in distinct:
            kept_keys = {_key(f.failure) for f in kept.found}
            if keys and keys <= kept_keys:
                also.append(name)
                break
        else:
            distinct.append((name, analysis, []))
    headers = [_header(name, also) for name, _, also in distinct]
    share = max(MIN_TOKENS, (max_tokens - sum(estimate_tokens(h) + 1 for h in headers)) // len(distinct))
    parts: list[str] = []
    for header, (_, analysis, _) in zip(headers, distinct, strict=True):
        view = analysis.view
        body = excerpt.build(analysis.spans, view.clean, len(view), share)
        parts.append(f"{header}\n{body}" if body else header)
    text = excerpt.fit(redact("\n".join(parts)), max_tokens)
    failures = dedupe([f.failure for _, a in analyses for f in a.found])
    log_commands: list[str] = []
    for _, a in analyses:
        log_commands.extend(c for c in a.log_commands if c not in log_commands)
    category, reason = _category([a for _, a in analyses])
    return Diagnosis(
        failures=failures,
        log_commands=log_commands,
        category=category,
        excerpt=text,
        excerpt_tokens=estimate_tokens(text),
        budget_tokens=max_tokens,
        infra_reason=reason,
        jobs=[name for name, _ in jobs],
    )


def _header(name: str, also: list[str]) -> str:
    suffix = f" (same failures in: {', '.join(also)})" if also else ""
    return redact(f"=== job: {name}{suffix} ===")


def _category(analyses: list[Analysis]) -> tuple[Category, str | None]:
    """Code beats infra: a job cancelled by fail-fast does not hide another job's test failure."""
    for a in analyses:
        if not a.category.is_infra and a.category is not Category.UNKNOWN:
            return a.category, None
    for a in analyses:
        if a.category.is_infra:
            return a.category, a.infra_reason
    return Category.UNKNOWN, None
