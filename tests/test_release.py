"""ci/release/pin-image: the released action.yml runs the published image, pinned by digest.

The release workflow (.github/workflows/release.yml) runs this script on the release commit; here it
runs on a copy of the repository's action.yml, as a real subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "ci" / "release" / "pin-image"
DIGEST = "sha256:" + "0123456789abcdef" * 4
REF = f"ghcr.io/example-owner/ci-autofix@{DIGEST}"


def _pin(tmp_path: Path, ref: str, text: str | None = None) -> tuple[subprocess.CompletedProcess[str], Path]:
    action = tmp_path / "action.yml"
    action.write_text((ROOT / "action.yml").read_text(encoding="utf-8") if text is None else text, "utf-8")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), ref, str(action)], capture_output=True, text=True, timeout=60
    )
    return proc, action


def test_the_released_image_is_a_digest_reference_and_nothing_else_changes(tmp_path: Path) -> None:
    original = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert yaml.safe_load(original)["runs"] == {"using": "docker", "image": "Dockerfile"}

    proc, action = _pin(tmp_path, REF)

    assert proc.returncode == 0, proc.stderr
    released = action.read_text(encoding="utf-8")
    data = yaml.safe_load(released)
    assert data["runs"] == {"using": "docker", "image": f"docker://{REF}"}
    old_lines, new_lines = original.splitlines(keepends=True), released.splitlines(keepends=True)
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert [old_lines[i] for i in changed] == ["  image: Dockerfile\n"]
    assert [new_lines[i] for i in changed] == [f"  image: docker://{REF}\n"]
    # what the Marketplace checks: the released metadata still passes SchemaStore's schema
    check = subprocess.run(
        [
            str(Path(sys.executable).parent / "check-jsonschema"),
            "--builtin-schema",
            "vendor.github-actions",
            str(action),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize(
    ("ref", "why"),
    [
        ("ghcr.io/example-owner/ci-autofix:1.2.3", "names no digest"),
        ("ghcr.io/example-owner/ci-autofix", "names no digest"),
        (f"ghcr.io/example-owner/ci-autofix:1.2.3@{DIGEST}", "tag as well as the digest"),
        ("ghcr.io/example-owner/ci-autofix@sha256:0123abc", "not <registry>/<name>@sha256"),
        (f"ghcr.io/example-owner/ci-autofix@sha256:{'ABCDEF0123456789' * 4}", "not <registry>/<name>@sha256"),
        (f"example-owner/ci-autofix@{DIGEST}", "not <registry>/<name>@sha256"),
        (f"docker://ghcr.io/example-owner/ci-autofix@{DIGEST}", "not <registry>/<name>@sha256"),
        (f"ghcr.io/example-owner/ci-autofix@{DIGEST}\n  using: node24", "not <registry>/<name>@sha256"),
    ],
)
def test_refuses_anything_but_a_registry_name_and_digest(tmp_path: Path, ref: str, why: str) -> None:
    proc, action = _pin(tmp_path, ref)

    assert proc.returncode == 1
    assert why in proc.stderr and "pass the pushed image's digest reference" in proc.stderr
    assert action.read_text(encoding="utf-8") == (ROOT / "action.yml").read_text(encoding="utf-8")


def test_refuses_an_action_that_is_not_a_docker_action(tmp_path: Path) -> None:
    composite = "name: x\ndescription: y\nruns:\n  using: composite\n  steps: []\n"
    proc, action = _pin(tmp_path, REF, composite)

    assert proc.returncode == 1
    assert "0 `image:` lines" in proc.stderr
    assert action.read_text(encoding="utf-8") == composite


def test_a_digest_reference_to_a_local_registry_is_accepted(tmp_path: Path) -> None:
    # the form ci/container/check's registry round trip pushes to
    proc, action = _pin(tmp_path, f"127.0.0.1:5000/ci-autofix@{DIGEST}")

    assert proc.returncode == 0, proc.stderr
    assert yaml.safe_load(action.read_text(encoding="utf-8"))["runs"]["image"] == (
        f"docker://127.0.0.1:5000/ci-autofix@{DIGEST}"
    )


def test_a_comment_on_the_image_line_is_kept(tmp_path: Path) -> None:
    text = "name: x\ndescription: y\nruns:\n  using: docker\n  image: Dockerfile  # built per job\n"
    proc, action = _pin(tmp_path, REF, text)

    assert proc.returncode == 0, proc.stderr
    assert action.read_text(encoding="utf-8") == text.replace("Dockerfile", f"docker://{REF}")


def _git(cwd: Path, *args: str, env: dict[str, str]) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()


WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
NOTES = ROOT / "ci" / "release" / "notes"
CHANGELOG = """# Changelog

## [Unreleased]

## [1.4.2] - 2026-12-04

### Fixed
- the widget

## [1.4.1] - 2026-11-30

### Added
- a widget

[1.4.2]: https://github.com/example-owner/ci-autofix/releases/tag/v1.4.2
"""


def _release(
    tmp_path: Path,
    *,
    changelog: str = CHANGELOG,
    existing_tag: bool = False,
    job: str = "release",
    origin_readable: bool = True,
) -> dict[str, Any]:
    """The `run:` script of a release.yml step (the release job's tagging step, or the check job's
    one step), run with bash on a clone of the dispatched commit (main) whose origin is a local bare
    repository, as the job runs it."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    runs = [s for s in workflow["jobs"][job]["steps"] if "run" in s]
    (step,) = [s for s in runs if s.get("id") == "tag"] if job == "release" else runs
    env = {
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(tmp_path / "home"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "dev",
        "GIT_AUTHOR_EMAIL": "dev@example.invalid",
        "GIT_COMMITTER_NAME": "dev",
        "GIT_COMMITTER_EMAIL": "dev@example.invalid",
    }
    (tmp_path / "home").mkdir()
    # no identity but the one the step sets (git would otherwise guess one from the host)
    (tmp_path / "home" / ".gitconfig").write_text("[user]\n\tuseConfigOnly = true\n", "utf-8")
    work, origin, temp = tmp_path / "work", tmp_path / "origin.git", tmp_path / "runner-temp"
    work.mkdir()
    temp.mkdir()
    (work / "ci" / "release").mkdir(parents=True)
    for script in (SCRIPT, NOTES):
        (work / "ci" / "release" / script.name).write_bytes(script.read_bytes())
    (work / "action.yml").write_bytes((ROOT / "action.yml").read_bytes())
    (work / "CHANGELOG.md").write_text(changelog, "utf-8")
    _git(work, "init", "-q", "-b", "main", env=env)
    _git(work, "add", ".", env=env)
    _git(work, "commit", "-qm", "the dispatched commit", env=env)
    dispatched = _git(work, "rev-parse", "HEAD", env=env)
    _git(tmp_path, "init", "-q", "--bare", str(origin), env=env)
    _git(work, "remote", "add", "origin", str(origin), env=env)
    _git(work, "push", "-q", "origin", "main", env=env)
    if existing_tag:  # a release of this version exists already: its tag is on the remote
        _git(work, "tag", "-a", "v1.4.2", "-m", "the earlier release", env=env)
        _git(work, "push", "-q", "origin", "v1.4.2", env=env)
        _git(work, "tag", "-d", "v1.4.2", env=env)
    tags_before = _git(origin, "for-each-ref", "refs/tags", env=env)
    if not origin_readable:
        _git(work, "remote", "set-url", "origin", str(tmp_path / "no-such-origin.git"), env=env)
    _git(work, "checkout", "-q", "--detach", dispatched, env=env)
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    step_env = {
        **{k: v for k, v in env.items() if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))},
        **{k: str(v) for k, v in step["env"].items() if not str(v).startswith("${{")},
        "IMAGE": REF,
        "VERSION": "v1.4.2",
        "TOKEN": "ghs_notUsedByALocalOrigin0123",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_REPOSITORY": "example-owner/ci-autofix",
        "RUNNER_TEMP": str(temp),
    }
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", step["run"]],
        cwd=work,
        env=step_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return {
        "proc": proc,
        "env": env,
        "origin": origin,
        "dispatched": dispatched,
        "tags_before": tags_before,
        "summary": summary,
        "output": output,
        "notes": temp / "notes.md",
    }


def test_the_release_step_tags_a_release_commit_whose_action_runs_the_image(tmp_path: Path) -> None:
    r = _release(tmp_path)
    proc, env, origin = r["proc"], r["env"], r["origin"]

    assert proc.returncode == 0, proc.stdout + proc.stderr
    release = _git(origin, "rev-parse", "v1.4.2^{commit}", env=env)
    assert release != r["dispatched"]
    assert _git(origin, "cat-file", "-t", "v1.4.2", env=env) == "tag"  # annotated
    assert _git(origin, "rev-parse", f"{release}^", env=env) == r["dispatched"]
    assert _git(origin, "rev-parse", "main", env=env) == r["dispatched"]  # main is not touched
    assert _git(origin, "for-each-ref", "--format=%(refname)", "refs/tags", env=env) == "refs/tags/v1.4.2"
    released = yaml.safe_load(_git(origin, "show", f"{release}:action.yml", env=env))
    assert released["runs"]["image"] == f"docker://{REF}"
    assert _git(origin, "diff", "--name-only", r["dispatched"], release, env=env) == "action.yml"
    summary = r["summary"].read_text(encoding="utf-8")
    assert REF in summary and f"example-owner/ci-autofix@{release}  # v1.4.2" in summary
    assert f"gh attestation verify oci://{REF} --repo example-owner/ci-autofix" in summary
    assert r["output"].read_text(encoding="utf-8") == f"commit={release}\n"
    # the GitHub Release's notes: the version's section of the changelog, and nothing else
    assert r["notes"].read_text(encoding="utf-8") == "### Fixed\n- the widget\n"


def test_a_version_whose_tag_exists_is_refused_and_the_tag_is_not_moved(tmp_path: Path) -> None:
    r = _release(tmp_path, existing_tag=True)

    assert r["proc"].returncode != 0
    assert "v1.4.2" in r["proc"].stderr and "rejected" in r["proc"].stderr
    assert _git(r["origin"], "for-each-ref", "refs/tags", env=r["env"]) == r["tags_before"]
    assert _git(r["origin"], "rev-parse", "v1.4.2^{commit}", env=r["env"]) == r["dispatched"]


def test_a_version_without_notes_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    r = _release(tmp_path, changelog=CHANGELOG.replace("## [1.4.2] - 2026-12-04", "## [1.4.3] - 2026-12-04"))

    assert r["proc"].returncode == 1
    assert "0 sections `## [1.4.2]`" in r["proc"].stderr and "rename `## [Unreleased]`" in r["proc"].stderr
    assert _git(r["origin"], "for-each-ref", "refs/tags", env=r["env"]) == ""


def test_no_step_of_the_release_moves_or_forces_a_tag() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    commands = "\n".join(
        line.split(" #")[0]
        for job in workflow["jobs"].values()
        for step in job["steps"]
        for line in step.get("run", "").splitlines()
        if not line.lstrip().startswith("#")
    )
    assert "git push" in commands and "git tag" in commands
    for forbidden in ("--force", " -f ", "+refs/tags", "--delete", ":refs/tags", "tag -d"):
        assert forbidden not in commands, forbidden
    assert set(workflow[True]) == {"workflow_dispatch"}  # a maintainer dispatches it with a version
    assert workflow["permissions"] == {}


def test_only_the_attest_job_can_sign_and_it_attests_the_published_digest() -> None:
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    signing = {name for name, job in jobs.items() if {"id-token", "attestations"} & set(job["permissions"])}
    assert signing == {"attest"}
    assert jobs["attest"]["permissions"] == {"id-token": "write", "attestations": "write"}
    [step] = jobs["attest"]["steps"]
    action, _, sha = step["uses"].partition("@")
    assert action == "actions/attest-build-provenance" and len(sha) == 40
    assert step["with"] == {
        "subject-name": "${{ needs.publish.outputs.name }}",
        "subject-digest": "${{ needs.publish.outputs.digest }}",
    }
    assert set(jobs["release"]["needs"]) == {"publish", "attest"}  # no tag before the attestation
    build = next(s["run"] for s in jobs["image"]["steps"] if "run" in s)
    assert "--provenance=mode=max" in build and "--sbom=true" in build


@pytest.mark.parametrize(
    ("version", "why"),
    [
        ("1.4.2", "is not a version"),
        ("v1.4", "is not a version"),
        ("v01.4.2", "is not a version"),
        ("v1.4.2-rc1", "is not a version"),
        ("v9.9.9", "0 sections `## [9.9.9]`"),
    ],
)
def test_the_notes_are_refused_for_a_bad_or_missing_version(tmp_path: Path, version: str, why: str) -> None:
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text(CHANGELOG, "utf-8")
    proc = subprocess.run(
        [sys.executable, str(NOTES), version, str(changelog)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and why in proc.stderr and proc.stdout == ""


def test_the_repository_changelog_has_an_unreleased_section(tmp_path: Path) -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in text
    # a release renames it: the script then finds exactly that section
    released = text.replace("## [Unreleased]", "## [0.1.0] - 2026-12-04", 1)
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text(released, "utf-8")
    proc = subprocess.run(
        [sys.executable, str(NOTES), "v0.1.0", str(changelog)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("The first release") and "[Unreleased]:" not in proc.stdout


def test_the_check_passes_a_new_version_with_notes(tmp_path: Path) -> None:
    r = _release(tmp_path, job="check")

    assert r["proc"].returncode == 0, r["proc"].stdout + r["proc"].stderr
    assert "tag v1.4.2 is new" in r["proc"].stdout


def test_the_check_refuses_a_version_whose_tag_exists(tmp_path: Path) -> None:
    r = _release(tmp_path, job="check", existing_tag=True)

    assert r["proc"].returncode == 1
    assert "tag v1.4.2 exists already, and a pushed tag is never moved" in r["proc"].stdout


def test_the_check_refuses_when_the_remote_cannot_be_read(tmp_path: Path) -> None:
    # an unreadable remote is never taken for "no such tag"
    r = _release(tmp_path, job="check", origin_readable=False)

    assert r["proc"].returncode == 1
    assert "could not list the remote's tags" in r["proc"].stdout


def test_the_check_refuses_a_version_without_notes(tmp_path: Path) -> None:
    r = _release(tmp_path, job="check", changelog=CHANGELOG.replace("## [1.4.2]", "## [1.4.0]"))

    assert r["proc"].returncode == 1
    assert "0 sections `## [1.4.2]`" in r["proc"].stderr
