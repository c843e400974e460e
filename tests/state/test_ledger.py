"""The lineage count believes only what GitHub authenticates: a fix counts when the provenance
status created by the trusted identity names its parent; trailers anyone can write do not count."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.deliver import notice
from ci_autofix.errors import UserError
from ci_autofix.github import GitHub
from ci_autofix.state import provenance
from ci_autofix.state.ledger import Lineage, find_existing, lineage, side_branch, strays
from ci_autofix.state.marker import Suggestion
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.git import ALICE, commit, git, init_repo
from tests.testing.propose import FAST

REPO = "acme/lines"


class Branch:
    def __init__(self, emu: GitHubEmulator, tmp: Path) -> None:
        self.emu, self.src = emu, tmp / "src"
        self.head = init_repo(self.src, {"a.txt": "0\n"})
        git(self.src, "checkout", "-q", "-b", "feature")
        emu.create_repo(REPO, source=self.src)
        emu.add_token("ghp_mallory0000000000000000000000000000", "mallory")
        self.gh = GitHub(emu.token, emu.api_url, REPO, settings=FAST)

    def fix(
        self, n: int, *, trailer: bool = True, vouched_by: str | None = BOT, names: str | None = None
    ) -> str:
        parent = self.head
        message = f"Fix {n}\n\nAutofix-Run: {n}\nAutofix-Base: {parent}\n" if trailer else f"Change {n}"
        self.head = commit(self.src, {"a.txt": f"{n}\n"}, message)
        self.publish()
        if vouched_by is not None:
            record = Suggestion(
                run_id=n,
                failing_branch="feature",
                head_sha=names or parent,
                fix_sha=self.head,
                fix_branch="x",
            )
            self.emu.add_status(
                REPO,
                self.head,
                context=provenance.CONTEXT,
                description=provenance.description(record),
                creator=vouched_by,
            )
        return self.head

    def publish(self) -> None:
        git(
            self.src,
            "push",
            "-q",
            "--force",
            str(self.emu.bare_path(REPO)),
            f"{self.head}:refs/heads/feature",
        )

    def lineage(self, max_attempts: int = 3) -> Lineage:
        return lineage(
            self.gh,
            prefix="ci-autofix/",
            failing_branch="feature",
            head_sha=self.head,
            workflow=".github/workflows/ci.yml",
            trusted=BOT,
            max_attempts=max_attempts,
        )


@pytest.fixture
def branch(github_emulator: GitHubEmulator, tmp_path: Path) -> Branch:
    return Branch(github_emulator, tmp_path)


def test_fixes_ci_autofix_made_count_back_to_the_first_human_commit(branch: Branch) -> None:
    branch.fix(1)
    branch.fix(2, trailer=False, vouched_by=None)  # a human commit: the lineage starts again
    second, third = branch.fix(3), branch.fix(4)
    line = branch.lineage()
    assert [a.sha for a in line.applied] == [third, second]
    assert [a.run_id for a in line.applied] == [4, 3]
    assert line.attempts == 2 and not line.fresh


def test_trailers_without_our_status_do_not_count(branch: Branch) -> None:
    branch.fix(1, vouched_by=None)
    assert branch.lineage().fresh


def test_a_status_anyone_else_created_does_not_count(branch: Branch) -> None:
    branch.fix(1, vouched_by="mallory")
    assert branch.lineage().fresh


def test_a_status_that_names_another_parent_does_not_count(branch: Branch) -> None:
    branch.fix(1, names="f" * 40)  # a status copied from another fix
    assert branch.lineage().fresh


def test_a_merge_is_never_ours(branch: Branch) -> None:
    branch.fix(1)
    base = branch.head
    git(branch.src, "checkout", "-q", "-b", "side", "HEAD~1")
    other = commit(branch.src, {"b.txt": "b\n"}, "Side work")
    git(branch.src, "checkout", "-q", "feature")
    git(branch.src, "merge", "-q", "--no-ff", "-m", f"Merge\n\nAutofix-Base: {base}\n", other, author=ALICE)
    branch.head = git(branch.src, "rev-parse", "HEAD")
    branch.publish()
    record = Suggestion(
        run_id=9, failing_branch="feature", head_sha=base, fix_sha=branch.head, fix_branch="x"
    )
    branch.emu.add_status(
        REPO, branch.head, context=provenance.CONTEXT, description=provenance.description(record), creator=BOT
    )
    assert branch.lineage().fresh


def test_a_commit_without_the_trailer_costs_no_status_lookup(branch: Branch) -> None:
    branch.fix(1, trailer=False)  # even with our status: it does not claim to be a fix
    assert branch.lineage().fresh
    # one lookup only: the head's halted attempts (`state.attempts`), none for its provenance
    (lookup,) = branch.emu.api_requests(path_regex="statuses")
    assert branch.head in lookup.path


def test_the_walk_stops_after_the_cap(branch: Branch) -> None:
    for n in range(1, 7):
        branch.fix(n)
    calls_before = len(branch.emu.api_requests(path_regex=r"/commits/[0-9a-f]{40}$"))
    line = branch.lineage(max_attempts=2)
    assert line.attempts == 3  # enough to know the cap is reached, and no further
    assert len(branch.emu.api_requests(path_regex=r"/commits/[0-9a-f]{40}$")) - calls_before == 3


def test_the_stuck_report_goes_to_this_repositorys_pr_never_a_forks(branch: Branch) -> None:
    branch.emu.add_pull(REPO, "feature", "main", "from a fork", user="mallory", fork="mallory/lines")
    assert notice.where(branch.gh, "feature", branch.head, []).pull is None
    own = branch.emu.add_pull(REPO, "feature", "main", "ours", user="alice")
    found = notice.where(branch.gh, "feature", branch.head, []).pull
    assert found is not None and found.number == own.number


# ---- the suggestion branches of a failing branch ---------------------------------------------------


def test_a_side_branch_is_named_by_prefix_branch_and_run_and_checked(branch: Branch) -> None:
    assert side_branch("ci-autofix/", "feature/x", 12) == "ci-autofix/feature/x/12"
    with pytest.raises(UserError):
        side_branch("ci-autofix/", "feature..x", 12)  # what the event says is checked, never trusted


def test_an_earlier_suggestion_is_found_by_its_branch_with_its_record(branch: Branch) -> None:
    side = "ci-autofix/feature/7"
    assert find_existing(branch.gh, side) is None
    fix = branch.fix(7)
    assert branch.emu.repos[REPO].bare.update_ref(f"refs/heads/{side}", fix)
    record = Suggestion(run_id=7, failing_branch="feature", head_sha="a" * 40, fix_sha=fix, fix_branch=side)
    pull = branch.emu.add_pull(REPO, side, "feature", body=f"A fix\n\n{record.render()}\n", user=BOT)
    found = find_existing(branch.gh, side)
    assert found is not None and (found.pull.number, found.record) == (pull.number, record)
    branch.emu.pull(REPO, pull.number).body = "edited by hand: no record"
    found = find_existing(branch.gh, side)
    assert found is not None and found.record is None  # still the suggestion: its record is unreadable


def test_strays_are_our_side_branches_that_no_open_pull_request_stands_on(branch: Branch) -> None:
    """Ours (vouched for by the trusted identity) without an open PR, except the one kept; a branch
    under the prefix that anyone else made is left alone, as is another failing branch's."""
    start = branch.head
    shas = [
        branch.fix(1),  # ours, with an open PR
        branch.fix(2),  # ours, no PR: a stray
        branch.fix(3),  # ours, this run's own (kept)
        branch.fix(4, vouched_by=None),  # not vouched for: not ours
        branch.fix(5, vouched_by="mallory"),  # vouched for by someone else: not ours
    ]
    bare = branch.emu.repos[REPO].bare
    for n, sha in enumerate(shas, start=1):
        assert bare.update_ref(f"refs/heads/ci-autofix/feature/{n}", sha)
    assert bare.update_ref("refs/heads/ci-autofix/other/6", shas[1])
    branch.head = start  # the failing branch is back where it was: no fix is on it
    branch.publish()
    branch.emu.add_pull(REPO, "ci-autofix/feature/1", "feature", user=BOT)
    found = strays(
        branch.gh, prefix="ci-autofix/", failing_branch="feature", trusted=BOT, keep="ci-autofix/feature/3"
    )
    assert found == ["ci-autofix/feature/2"]
    assert strays(branch.gh, prefix="ci-autofix/", failing_branch="none", trusted=BOT, keep="") == []
