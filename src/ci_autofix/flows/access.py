"""Who may start a flow that acts: everyone who started this run must have write access.

GitHub lets only people with write access dispatch a workflow, and a re-run runs with the first
run's privileges; we check again against GitHub's record (`GET /collaborators/{login}/permission`)
for the actor and the re-running actor, so neither a forged payload nor a downgraded account
starts a push or a spend. The bot identity ci-autofix itself acts as (`trusted-author`) is never
taken for a person: it starts apply only for a suggestion that propose marked for auto-apply,
which apply checks by the commit status GitHub says that identity created (`state.provenance`).
"""

from __future__ import annotations

from ci_autofix.errors import Halt, HaltReason
from ci_autofix.github.api import GitHubAPI
from ci_autofix.settings import Settings

WRITE_LEVELS = frozenset({"admin", "maintain", "write"})


def starters(settings: Settings) -> list[str]:
    """Who started this run: the actor, and whoever re-ran it."""
    return list(dict.fromkeys(a for a in (settings.actor, settings.triggering_actor) if a))


def is_own_bot(login: str, settings: Settings) -> bool:
    """Whether `login` is the bot identity ci-autofix proposes as (a dispatch made with its token:
    `GITHUB_TOKEN`'s `github-actions[bot]`, an App's `<slug>[bot]`; logins compare without case).
    A PAT's user is a person to GitHub, and is checked as one."""
    return login.casefold() == settings.trusted_author.casefold() and login.casefold().endswith("[bot]")


def check_writers(gh: GitHubAPI, logins: list[str], *, doing: str, ask: str) -> None:
    """Refuse unless every one of `logins` has write access. `doing`: what needs it ("applying a
    suggestion"); `ask`: what someone with write access should do instead ("dispatch the apply
    workflow")."""
    if not logins:
        raise Halt(
            HaltReason.REFUSED,
            "Nobody is known to have started this run (GITHUB_ACTOR is empty), so no write "
            f"permission can be checked. Ask someone with write access to {ask}.",
        )
    for login in logins:
        level = gh.permission(login)
        if level not in WRITE_LEVELS:
            raise Halt(
                HaltReason.REFUSED,
                f"@{login} started this run but has `{level}` access to the repository; {doing} needs "
                f"write access. Ask someone with write access to {ask}.",
            )
