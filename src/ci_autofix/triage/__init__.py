"""Log triage: from megabytes of CI log to the few thousand tokens that explain the failure.

diagnose(log, max_tokens=6000, where="") -> Diagnosis           one raw job log
diagnose_jobs([(job, log), ...], max_tokens=6000) -> Diagnosis  several failed jobs, merged
estimate_tokens(text) -> int                                    the one token estimator (bytes/4)
"""

from __future__ import annotations

from ci_autofix.triage.jobs import diagnose, diagnose_jobs
from ci_autofix.triage.model import Category, Diagnosis, Failure
from ci_autofix.triage.tokens import estimate_tokens

__all__ = ["Category", "Diagnosis", "Failure", "diagnose", "diagnose_jobs", "estimate_tokens"]
