"""The README's "What you will see": the suggestion PR and the job summary of a real propose run.

The run is the end-to-end scenario of tests/testing/format_scenario.py (a branch whose CI failed on
`ruff format --check .`, the real tool's log) through the real entrypoint, against the GitHub
emulator. What it wrote is rendered as the README shows it; only what changes from run to run is
replaced: the emulator's address by github.com, and the two commit ids (they carry the time the
commits were made) by fixed stand-ins. The test fails when the README's copy differs; with
CI_AUTOFIX_WRITE_DOCS=1 it rewrites that copy instead.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.testing.docs_tables import README
from tests.testing.emulator import GitHubEmulator
from tests.testing.format_scenario import REPO, make_scenario

# stand-ins for the commit ids, which differ on every run (the commits' dates)
FAILING_SHA = "5e1f0c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f"
FIX_SHA = "c7d3e9a1f4b2c8d6e0a5f3b1d9c7e2a4f6b8d0c1"


def quoted(markdown: str) -> str:
    """`markdown` as a block quote, so it renders as one framed piece of the page."""
    return "\n".join(f"> {line}".rstrip() for line in markdown.strip().splitlines())


def rendering(github_emulator: GitHubEmulator, tmp_path: Path) -> str:
    """The PR and the job summary a real propose run writes, as the README shows them."""
    scenario = make_scenario(github_emulator, tmp_path, dispatch=True)
    result = scenario.propose()
    assert result.exit_code == 0 and result.outputs["status"] == "proposed", result.stderr + result.summary
    [pull] = github_emulator.pulls(REPO)
    fix_sha = result.outputs["fix-sha"]
    reviewers, _teams = github_emulator.review_requests(REPO, pull.number)
    labels = github_emulator.labels(REPO, pull.number)
    card = (
        f"**{pull.title}** #{pull.number}\n\n"
        f"`{pull.head_ref}` → `{pull.base_ref}` · one commit · labels: "
        + ", ".join(f"`{label}`" for label in labels)
        + " · review requested from "
        + ", ".join(f"@{login}" for login in reviewers)
        + "\n\n"
        + pull.body.strip()
    )
    text = (
        "The suggestion pull request:\n\n"
        + quoted(card)
        + "\n\n<details><summary>The job summary of the propose run</summary>\n\n"
        + quoted(result.summary)
        + "\n\n</details>\n"
    )
    text = re.sub(r"http://127\.0\.0\.1:\d+", "https://github.com", text)
    for real, stand_in in ((scenario.head_sha, FAILING_SHA), (fix_sha, FIX_SHA)):
        assert len(real) == 40
        text = text.replace(real, stand_in).replace(real[:12], stand_in[:12])
    return text


def test_the_readme_shows_what_a_real_run_writes(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    expected = rendering(github_emulator, tmp_path)
    readme = README.read_text(encoding="utf-8")
    start, end = "<!-- seen:start -->\n", "<!-- seen:end -->"
    assert readme.count(start) == 1 and readme.count(end) == 1
    before, rest = readme.split(start)
    shown, after = rest.split(end)
    if os.environ.get("CI_AUTOFIX_WRITE_DOCS") == "1":
        README.write_text(before + start + expected + end + after, encoding="utf-8")
        return
    assert shown == expected, (
        "README.md's What you will see is not what a run writes now: rewrite it with "
        "CI_AUTOFIX_WRITE_DOCS=1 .venv/bin/python -m pytest tests/flows/propose/test_what_you_will_see.py"
    )
    # what the reader is told it shows
    assert "ruff format --check ." in shown and "gh workflow run ci-autofix-apply.yml" in shown
    assert "127.0.0.1" not in shown
