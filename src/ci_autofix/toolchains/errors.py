"""Why a runtime could not be provisioned: a `UserError` with its cause and remedy."""

from __future__ import annotations

from ci_autofix.errors import UserError

DOCS = "docs/toolchains.md#toolchains-in-the-action"


class ToolchainError(UserError):
    """A runtime that was refused (bad checksum, unsafe archive) or could not be had."""

    def __init__(self, cause: str, remedy: str) -> None:
        super().__init__(cause, remedy, docs=DOCS)


class NotPublished(ToolchainError):
    """The publisher has no such file (HTTP 404): a version that does not exist there."""
