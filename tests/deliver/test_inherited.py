"""The words said about an inherited failure: they claim the PR left the failing files alone only
when its files were compared."""

from __future__ import annotations

from ci_autofix.deliver.inherited import said
from ci_autofix.github import RunInfo
from ci_autofix.workflow.inherited import OnBase


def test_without_a_pr_the_words_claim_no_file_check() -> None:
    run = RunInfo(
        id=41,
        name="CI",
        workflow_id=1,
        workflow_path=".github/workflows/ci.yml",
        head_branch="main",
        head_sha="a" * 40,
        event="push",
        status="completed",
        conclusion="failure",
        run_attempt=1,
        html_url="",
        actor=None,
        triggering_actor=None,
    )
    where = {"server_url": "https://github.com", "repository": "acme/widgets"}
    assert "does not change" in said(OnBase("main", run, pull=7), **where)
    assert "does not change" not in said(OnBase("main", run, pull=None), **where)
