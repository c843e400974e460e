"""A failure's signature: what identifies one failure across runs, to tell "the same failure
again" from a new one (the loop's circuit breaker, an inherited failure).

The signature is the set of what failed, each named as precisely as triage located it: a test's
id, else a file and line (with the rule, for a finding), else the tool and its message. Two runs
whose failed steps and signatures are equal failed the same way.
"""

from __future__ import annotations

from ci_autofix.triage.model import Diagnosis, Failure

MAX_MESSAGE_CHARS = 200


def signature(diagnosis: Diagnosis) -> frozenset[str]:
    """The failure's signature (empty when triage found nothing located: such runs never match)."""
    return frozenset(_name(f) for f in diagnosis.failures)


def _name(failure: Failure) -> str:
    if failure.test_id:
        return f"test {failure.test_id}"
    if failure.file:
        where = f"{failure.file}:{failure.line}" if failure.line else failure.file
        return f"{where} {failure.rule or failure.kind}"
    return f"{failure.tool}: {failure.message.strip()[:MAX_MESSAGE_CHARS]}"
