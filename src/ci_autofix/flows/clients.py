"""The outside world's clients for a flow, built from the settings: factories, so a run that halts
on the event payload builds no client at all, and the model SDK (seconds to import) is imported
only when the agent actually runs. `build_clients` checks that the real clients fit the ports
(`github.api.GitHubAPI`, `agent.llm.Model`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ci_autofix.agent.llm import Model
from ci_autofix.errors import UserError
from ci_autofix.github.api import GitHubAPI
from ci_autofix.settings import Settings


@dataclass(frozen=True)
class Clients:
    github: Callable[[], GitHubAPI]
    llm: Callable[[], Model]


def build_clients(settings: Settings) -> Clients:
    def github() -> GitHubAPI:
        from ci_autofix.github import GitHub

        if settings.github_token is None:
            raise UserError(
                "No GitHub token was given.",
                "Pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the action "
                "(or set GITHUB_TOKEN when running locally).",
            )
        if not settings.repository:
            raise UserError(
                "GITHUB_REPOSITORY is not set.", "Run inside GitHub Actions, or set it to owner/name."
            )
        return GitHub(
            token=settings.github_token.get_secret_value(),
            api_url=settings.api_url,
            repository=settings.repository,
        )

    def llm() -> Model:
        from ci_autofix.agent.llm import build_client

        return build_client(settings)

    return Clients(github=github, llm=llm)
