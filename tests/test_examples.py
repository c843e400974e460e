"""The example workflows say what the README says: the triggers the three approval setups need,
inputs that exist, and no checkout where none is wanted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.testing.docs_tables import load_action

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def workflow(name: str) -> dict[Any, Any]:
    data = yaml.safe_load((EXAMPLES / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def our_step(job: dict[str, Any]) -> dict[str, Any]:
    [step] = [s for s in job["steps"] if str(s.get("uses", "")).startswith("OWNER/ci-autofix@")]
    return step


def test_the_propose_example_can_be_dispatched_with_a_run_id() -> None:
    flow = workflow("ci-autofix-propose.yml")
    triggers = flow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["workflow_dispatch"]["inputs"]["run-id"]["required"] is True
    assert triggers["workflow_run"]["types"] == ["completed"]
    [job] = flow["jobs"].values()
    assert "github.event_name == 'workflow_dispatch'" in job["if"]
    assert "head_repository.full_name == github.repository" in job["if"]  # forks stay out
    step = our_step(job)
    assert step["with"]["run-id"] == "${{ inputs.run-id }}"
    assert step["with"]["mode"] == "propose"  # a dispatch without a run id never runs apply here
    assert set(step["with"]) <= set(load_action()["inputs"])
    [checkout] = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert "github.event_name == 'workflow_run'" in checkout["if"]  # a dispatch fetches for itself
    assert checkout["with"]["persist-credentials"] is False
    assert {"actions", "statuses", "contents"} <= set(job["permissions"])
    assert job["permissions"]["actions"] == "write"  # dispatching CI and, with auto-apply, apply


def test_the_apply_example_takes_a_pull_request_and_waits_for_its_environment() -> None:
    flow = workflow("ci-autofix-apply.yml")
    assert flow[True]["workflow_dispatch"]["inputs"]["pull-request"]["required"] is True
    [job] = flow["jobs"].values()
    assert job["environment"] == "ci-autofix-approval"
    step = our_step(job)
    assert step["with"]["mode"] == "apply"
    assert set(step["with"]) <= set(load_action()["inputs"])


def test_the_review_example_acts_only_on_changes_requested_from_this_repository() -> None:
    flow = workflow("ci-autofix-review.yml")
    assert flow[True] == {"pull_request_review": {"types": ["submitted"]}}
    assert flow["permissions"] == {}
    [job] = flow["jobs"].values()
    assert "github.event.review.state == 'changes_requested'" in job["if"]
    assert "github.event.pull_request.head.repo.full_name == github.repository" in job["if"]
    assert job["permissions"]["pull-requests"] == "write" and job["permissions"]["statuses"] == "write"
    step = our_step(job)
    assert step["with"]["mode"] == "review"
    assert set(step["with"]) <= set(load_action()["inputs"])
    assert not [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]


def excerpts() -> list[tuple[str, str, str]]:
    """Every YAML block of the documentation: (page, the example it quotes, the block's text).
    A block that quotes an example says so on the line above it: `<!-- excerpt: examples/NAME -->`."""
    root = EXAMPLES.parent
    found = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"(?:<!-- excerpt: (\S+) -->\n)?```ya?ml\n(.*?)```", text, re.S):
            found.append((page.name, m.group(1) or "", m.group(2)))
    return found


def test_the_documentation_quotes_the_examples_and_writes_no_second_version() -> None:
    blocks = excerpts()
    assert {example for _, example, _ in blocks} >= {"examples/ci-autofix-propose.yml"}
    for page, example, block in blocks:
        assert example, f"{page}: a YAML block that is not an excerpt of an example file"
        lines = (EXAMPLES.parent / example).read_text(encoding="utf-8").splitlines()
        # runs of the file's own lines, in order; a line `# ...` (any indentation) marks a gap
        at = 0
        for run in re.split(r"^[ \t]*# \.\.\.\n", block, flags=re.M):
            want = run.splitlines()
            starts = [i for i in range(at, len(lines) - len(want) + 1) if lines[i : i + len(want)] == want]
            assert want and starts, f"{page}: this part of the excerpt is not in {example}:\n{run}"
            at = starts[0] + len(want)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yml")))
def test_zizmor_finds_nothing_in_the_example_as_users_copy_it(name: str) -> None:
    """Each file on its own, as a user's repository holds it, under zizmor's default persona; the
    in-place ignores it honours are on the `uses:` line itself, each with its reason."""
    zizmor = Path(sys.executable).parent / "zizmor"
    proc = subprocess.run(
        [str(zizmor), "--offline", "--format", "plain", str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout + proc.stderr
    for line in (EXAMPLES / name).read_text(encoding="utf-8").splitlines():
        if "zizmor: ignore[" in line:
            assert " -- " in line or line.lstrip().startswith("#"), f"an ignore without its reason: {line}"


def test_ci_audits_every_workflow_and_example_file_by_name() -> None:
    run = (EXAMPLES.parent / ".ci" / "run").read_text(encoding="utf-8")
    [zizmor] = [line for line in run.splitlines() if line.startswith(".venv/bin/zizmor ")]
    assert zizmor.split()[-2:] == [".github/workflows/*.yml", "examples/*.yml"]
    assert "--persona" not in zizmor  # the default persona
