"""GitHub's refusals as errors the user can act on: a bad token, a missing `permissions:`
entry, rate limits, GitHub unavailable. Messages come from GitHub's `message` field only, so
none ever contains the token."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import requests
from github import GithubException, RateLimitExceededException
from github.GithubException import RateLimitExceededExceedsMaxWait

from ci_autofix.errors import UserError

_DOCS_PERMISSIONS = "https://docs.github.com/actions/writing-workflows/choosing-what-your-workflow-does/controlling-permissions-for-github_token"
_DOCS_RATE_LIMITS = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api"
_CREDENTIALS_REMEDY = (
    "Pass a valid token in the `github-token` input (usually `${{ secrets.GITHUB_TOKEN }}`); "
    "an expired token, or one for another repository or GitHub host, does not work."
)


class GitHubError(UserError):
    """GitHub refused a call for a reason not mapped to a more specific remedy."""

    def __init__(self, cause: str, remedy: str, *, status: int, message: str) -> None:
        super().__init__(cause, remedy)
        self.status = status
        self.github_message = message


class ReviewOutsideDiff(GitHubError):
    """GitHub refused a whole review (422) because a comment's lines are not in the pull
    request's diff (or not in one hunk of it); none of its comments was posted."""


def header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return str(value)
    return None


def _message(exc: GithubException) -> str:
    """GitHub's `message`, with the details of a 422's `errors` (which say what already exists)."""
    data = exc.data
    if not isinstance(data, dict):
        return str(data or "")[:200]
    details = []
    for error in data.get("errors") or []:
        if isinstance(error, dict):
            text = error.get("message") or " ".join(
                str(error.get(k)) for k in ("resource", "field", "code") if error.get(k)
            )
            details.append(str(text))
        else:
            details.append(str(error))
    message = str(data.get("message") or "")
    return f"{message} ({'; '.join(details)})" if details else message


def _is_rate_limit(status: int, message: str, headers: Mapping[str, Any] | None) -> bool:
    if status == 429:
        return True
    lowered = message.lower()
    return status == 403 and (
        "rate limit" in lowered
        or "abuse" in lowered
        or header(headers, "retry-after") is not None
        or header(headers, "x-ratelimit-remaining") == "0"
    )


def _when(headers: Mapping[str, Any] | None, wait: float | None = None) -> str:
    after = header(headers, "retry-after")
    if after and after.isdigit():
        return f"in {int(after)} seconds or later"
    reset = header(headers, "x-ratelimit-reset")
    if reset and reset.isdigit() and header(headers, "x-ratelimit-remaining") == "0":
        at = datetime.fromtimestamp(int(reset), UTC)
        minutes = max(1, round((int(reset) - time.time()) / 60))
        return f"after {at:%H:%M} UTC (in about {minutes} minute{'s' if minutes != 1 else ''})"
    if wait:
        return f"in {int(wait)} seconds or later"
    return "in a few minutes"


def _rate_limited(
    doing: str, headers: Mapping[str, Any] | None, message: str, wait: float | None = None
) -> UserError:
    exhausted = (
        header(headers, "x-ratelimit-remaining") == "0" or "api rate limit exceeded" in message.lower()
    )
    kind = "primary" if exhausted else "secondary"
    return UserError(
        f"GitHub's {kind} API rate limit was hit while {doing}.",
        f"Re-run the job {_when(headers, wait)}. The limit is shared by everything using this token "
        "(other workflows in the repository count too).",
        docs=_DOCS_RATE_LIMITS,
    )


def permission_entries(accepted: str | None) -> list[str]:
    """`X-Accepted-GitHub-Permissions` (`pull_requests=write; issues=write`) as `permissions:`
    entries (`pull-requests: write`), one per accepted alternative."""
    entries = []
    for alternative in (accepted or "").split(";"):
        parts = [p.strip() for p in alternative.split(",") if "=" in p]
        if parts:
            entries.append(
                ", ".join(
                    f"{k.strip().replace('_', '-')}: {v.strip()}" for k, v in (p.split("=", 1) for p in parts)
                )
            )
    return entries


def _error(doing: str, needs: str, exc: GithubException) -> UserError:
    status, message, headers = exc.status, _message(exc), exc.headers
    if status >= 500:
        return _unavailable(doing, f"{status}")
    if isinstance(exc, RateLimitExceededExceedsMaxWait):
        return _rate_limited(doing, headers, message, exc.wait)
    if status == 401:
        return UserError(
            f"GitHub rejected the token while {doing} (401 {message or 'Bad credentials'}).",
            _CREDENTIALS_REMEDY,
        )
    if isinstance(exc, RateLimitExceededException) or _is_rate_limit(status, message, headers):
        return _rate_limited(doing, headers, message)
    if status == 403 and "not accessible" in message.lower():
        entries = permission_entries(header(headers, "x-accepted-github-permissions")) or [needs]
        wanted = " or ".join(f"`{e}`" for e in entries)
        return UserError(
            f'The token may not do this: GitHub answered 403 "{message}" while {doing}.',
            f"add {wanted} to the job's `permissions:` in the workflow file (naming any permission "
            "sets all the others to `none`).",
            docs=_DOCS_PERMISSIONS,
        )
    remedy = "Check the repository's settings and this run's inputs; GitHub's message says what it refused."
    if status == 403:
        remedy = (
            f"Check that the token may do this (the job's `permissions:` need `{needs}`) and that no "
            "branch protection or repository rule forbids it."
        )
    return GitHubError(
        f"GitHub answered {status} while {doing}: {message or 'no message'}.",
        remedy,
        status=status,
        message=message,
    )


def _unavailable(doing: str, detail: str) -> UserError:
    return UserError(
        f"GitHub is unavailable: it kept failing ({detail}) while {doing}, even after retries.",
        "Re-run the job later; see https://www.githubstatus.com for incidents.",
    )


@contextmanager
def api(doing: str, needs: str) -> Iterator[None]:
    """Turn PyGithub and transport failures into errors the user can act on."""
    try:
        yield
    except GithubException as exc:
        raise _error(doing, needs, exc) from None
    except requests.exceptions.RetryError as exc:
        reason = str(getattr(exc.args[0], "reason", exc.args[0]) if exc.args else exc)
        codes = re.findall(r"too many (\d{3}) error", reason)
        if codes and codes[0] in ("403", "429"):
            raise UserError(
                f"GitHub's API rate limit was hit while {doing}, and retrying did not help.",
                "Re-run the job in a few minutes.",
                docs=_DOCS_RATE_LIMITS,
            ) from None
        raise _unavailable(doing, f"HTTP {codes[0]}" if codes else "no answer") from None
    except (requests.ConnectionError, requests.Timeout) as exc:
        if isinstance(exc, requests.Timeout) or "timed out" in str(exc).lower():
            raise UserError(
                f"GitHub did not answer in time while {doing}: the client's timeout ran out "
                f"({type(exc).__name__}), and retrying did not help.",
                "GitHub may be slow or having an incident (see https://www.githubstatus.com): re-run "
                "the job in a few minutes.",
            ) from None
        raise UserError(
            f"GitHub could not be reached while {doing} ({type(exc).__name__}).",
            "Check the runner's network access and `GITHUB_API_URL`; re-run the job.",
        ) from None
