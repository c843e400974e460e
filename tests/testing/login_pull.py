"""acme/widgets with PR #1 from feature/login, which changes lines 5 and 25 of a 30-line app.py:
the pull request the review-API tests comment on (the emulator places comments on its real diff)."""

from __future__ import annotations

from pathlib import Path

from tests.testing.emulator import GitHubEmulator
from tests.testing.git import commit, git, init_repo

REPO = "acme/widgets"
BASE = "".join(f"line {i}\n" for i in range(1, 31))
HEAD = BASE.replace("line 5\n", "five\n").replace("line 25\n", "twenty-five\n")


def seed_login_pull(emu: GitHubEmulator, tmp_path: Path) -> GitHubEmulator:
    """The repository, alice (the PR's author) and rita (a reviewer), both with write access."""
    src = tmp_path / "src"
    init_repo(src, {"app.py": BASE})
    git(src, "checkout", "-q", "-b", "feature/login")
    commit(src, {"app.py": HEAD}, "Change app")
    git(src, "checkout", "-q", "main")
    emu.create_repo(REPO, source=src)
    emu.add_user("alice", "write")
    emu.add_user("rita", "write")
    emu.add_pull(REPO, "feature/login", "main", user="alice")
    return emu
