"""The apply flow in-process against the emulator: real PyGithub over HTTP, real git over smart HTTP."""

from __future__ import annotations

from apply_world import CI_DISPATCHABLE, World, make_world
from emulator import GitHubEmulator


def test_the_reviewed_commit_lands_on_the_failing_branch(world: World) -> None:
    s = world.suggest()
    result = world.apply(s.number)
    print(result.log)
    assert result.outcome.status == "applied", result.outcome.message
    assert world.branch("feature") == s.record.fix_sha
    assert world.branch(s.record.fix_branch) is None
    pull = world.pull(s.number)
    assert pull.state == "closed"
