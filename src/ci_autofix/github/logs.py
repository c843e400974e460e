"""Job logs: GitHub answers a log request with a redirect to a signed URL on another host,
fetched here without our credentials; expired and missing logs become halts. The log host is
tried again a bounded number of times when it does not answer (connection errors, timeouts,
5xx); after that the download is a `UserError` that says so."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
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


# Answers of the log host worth another try: it is overloaded or failing, not refusing.
_RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_RETRYABLE_ERRORS = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)


CHUNK_BYTES = 1 << 20


def download(
    job_id: int,
    headers: Mapping[str, Any] | None,
    dest: Path,
    *,
    timeout: float,
    retries: int = 3,
    backoff: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
) -> Path:
    """The log at the signed URL GitHub redirected to (the `Location` of its answer), streamed
    into the file `dest` (never held in memory; written again from the start on each try); `dest`.

    A connection error, a timeout or a 5xx is tried again up to `retries` times, after
    `backoff` seconds doubled each time, also when the connection breaks in the middle of the
    log; 404 and 410 halt at once, other answers are errors."""
    location = header(headers, "location")
    if not location:
        raise Halt(HaltReason.LOGS_UNAVAILABLE, f"GitHub gave no log location for job {job_id}.")
    last = ""
    tries = max(0, retries) + 1
    for attempt in range(tries):
        if attempt:
            sleep(backoff * 2 ** (attempt - 1))
        try:
            # a fresh session: proxies come from the environment, credentials from nowhere
            with requests.Session() as session:
                response = session.get(
                    location, timeout=timeout, allow_redirects=True, auth=_without_authorization, stream=True
                )
                with response:
                    if response.status_code == 200:
                        _save(response, dest)
        except _RETRYABLE_ERRORS as exc:
            last = _failure(exc, timeout)
            continue
        except requests.RequestException as exc:
            raise UserError(
                f"The log of job {job_id} could not be downloaded ({type(exc).__name__}).",
                "Check the runner's network access to GitHub's log storage and re-run the job.",
            ) from None
        except OSError as exc:  # after the requests errors, which are OSErrors too
            raise UserError(
                f"The log of job {job_id} could not be saved to {dest}: {exc.strerror or exc}.",
                "Free space in the runner's temporary directory (or point TMPDIR elsewhere) and re-run the job.",
            ) from None
        if response.status_code in _RETRYABLE_STATUS:
            last = f"its last answer was HTTP {response.status_code}"
            continue
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
        return dest
    raise UserError(
        f"GitHub's log storage did not answer for the log of job {job_id}: {last} "
        f"({tries} {'try' if tries == 1 else 'tries'}).",
        "Re-run this job in a few minutes; if it keeps failing, check the runner's network access to "
        "GitHub's log storage and https://www.githubstatus.com for incidents.",
    )


def _save(response: requests.Response, dest: Path) -> None:
    with dest.open("wb") as out:
        for block in response.iter_content(CHUNK_BYTES):
            out.write(block)


def _failure(exc: requests.RequestException, timeout: float) -> str:
    if isinstance(exc, requests.Timeout) or "timed out" in str(exc).lower():
        return f"no answer within {timeout:g}s"
    return f"the connection failed ({type(exc).__name__})"


def _without_authorization(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """Auth hook for the signed log URL: it must carry no `Authorization` (not even from .netrc)."""
    request.headers.pop("Authorization", None)
    return request
