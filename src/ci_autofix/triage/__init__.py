"""Log triage: from megabytes of CI log to the few thousand tokens that explain the failure.

diagnose(log, max_tokens=6000, where="") -> Diagnosis           one raw job log (text, bytes or a Path)
diagnose_jobs([(job, log), ...], max_tokens=6000) -> Diagnosis  several failed jobs, merged

A log given as a `Path` is read in chunks and never held whole (`logview`, `logfile`): memory
does not grow with the log's size.
estimate_tokens(text) -> int                                    the one token estimator (bytes/4)
"""

from __future__ import annotations

from ci_autofix.triage.jobs import diagnose, diagnose_jobs
from ci_autofix.triage.model import Category, Diagnosis, Failure
from ci_autofix.triage.tokens import estimate_tokens

__all__ = ["Category", "Diagnosis", "Failure", "diagnose", "diagnose_jobs", "estimate_tokens"]
