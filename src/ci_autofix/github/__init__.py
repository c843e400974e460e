"""The GitHub REST edge: the only package that imports PyGithub.

`client` makes the calls, `models` are what they return, `errors` and `logs` turn refusals into remedies."""

from ci_autofix.github.client import ClientSettings, GitHub
from ci_autofix.github.errors import GitHubError, ReviewOutsideDiff, permission_entries
from ci_autofix.github.models import (
    FAILED_CONCLUSIONS,
    PERMISSION_LEVELS,
    AnnotationInfo,
    CommentInfo,
    CommitInfo,
    DispatchInfo,
    JobInfo,
    PullFile,
    PullInfo,
    ReviewCommentDraft,
    ReviewCommentInfo,
    ReviewInfo,
    RunInfo,
    StatusInfo,
)

__all__ = [
    "FAILED_CONCLUSIONS",
    "PERMISSION_LEVELS",
    "AnnotationInfo",
    "ClientSettings",
    "CommentInfo",
    "CommitInfo",
    "DispatchInfo",
    "GitHub",
    "GitHubError",
    "JobInfo",
    "PullFile",
    "PullInfo",
    "ReviewCommentDraft",
    "ReviewCommentInfo",
    "ReviewInfo",
    "ReviewOutsideDiff",
    "RunInfo",
    "StatusInfo",
    "permission_entries",
]
