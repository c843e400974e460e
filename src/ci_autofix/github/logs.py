"""Job logs: GitHub answers a log request with a redirect to a signed URL on another host,
fetched here without our credentials; expired and missing logs become halts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import requests

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.github.errors import header

_DOCS_LOG_RETENTION = "https://docs.github.com/actions/reference/workflows-and-actions/workflow-artifacts#about-workflow-artifact-and-log-retention"


def refused(job_id: int, status: int) -> Halt | None:
    """The halt for GitHub's refusal to give a job's log, when the refusal means there is none."""
    if status == 410:
        return Halt(
            HaltReason.LOGS_EXPIRED,
            f"The log of job {job_id} has expired: GitHub keeps workflow logs for 90 days by "
            "default (less if the repository's retention setting is shorter), so this run is too "
            f"old to diagnose. See {_DOCS_LOG_RETENTION}.",
        )
    if status == 404:
        return Halt(
            HaltReason.LOGS_UNAVAILABLE,
            f"GitHub has no log for job {job_id} (404): it may have been deleted, or the job never ran.",
        )
    return None


def download(job_id: int, headers: Mapping[str, Any] | None, timeout: float) -> bytes:
    """The log at the signed URL GitHub redirected to (the `Location` of its answer)."""
    location = header(headers, "location")
    if not location:
        raise Halt(HaltReason.LOGS_UNAVAILABLE, f"GitHub gave no log location for job {job_id}.")
    try:
        # a fresh session: proxies come from the environment, credentials from nowhere
        with requests.Session() as session:
            response = session.get(
                location, timeout=timeout, allow_redirects=True, auth=_without_authorization
            )
    except requests.RequestException as exc:
        raise UserError(
            f"The log of job {job_id} could not be downloaded ({type(exc).__name__}).",
            "Check the runner's network access to GitHub's log storage and re-run the job.",
        ) from None
    if response.status_code in (404, 410):
        raise Halt(
            HaltReason.LOGS_EXPIRED if response.status_code == 410 else HaltReason.LOGS_UNAVAILABLE,
            f"The log of job {job_id} is no longer available (log storage answered {response.status_code}).",
        )
    if response.status_code != 200:
        raise UserError(
            f"The log of job {job_id} could not be downloaded (log storage answered {response.status_code}).",
            "Re-run the job; if it persists, GitHub's log storage "
            "may be having problems (see githubstatus.com).",
        )
    return response.content


def _without_authorization(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """Auth hook for the signed log URL: it must carry no `Authorization` (not even from .netrc)."""
    request.headers.pop("Authorization", None)
    return request
