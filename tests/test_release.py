"""ci/release/pin-image: the released action.yml runs the published image, pinned by digest.

The release workflow (.github/workflows/release.yml) runs this script on the release commit; here it
runs on a copy of the repository's action.yml, as a real subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_the_release_step_tags_a_commit_whose_action_runs_the_image(tmp_path: Path) -> None:
    """The `run:` script of release.yml's last step, run with bash on a clone whose origin is a local
    bare repository: the version tag moves to the release commit, the major tag follows, both pushed."""
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in workflow["jobs"]["release"]["steps"] if "run" in s]
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
    work, origin = tmp_path / "work", tmp_path / "origin.git"
    work.mkdir()
    (work / "ci" / "release").mkdir(parents=True)
    (work / "ci" / "release" / "pin-image").write_bytes(SCRIPT.read_bytes())
    (work / "action.yml").write_bytes((ROOT / "action.yml").read_bytes())
    _git(work, "init", "-q", "-b", "main", env=env)
    _git(work, "add", ".", env=env)
    _git(work, "commit", "-qm", "the tagged commit", env=env)
    tagged = _git(work, "rev-parse", "HEAD", env=env)
    _git(tmp_path, "init", "-q", "--bare", str(origin), env=env)
    _git(work, "remote", "add", "origin", str(origin), env=env)
    _git(work, "tag", "v1.4.2", env=env)
    _git(work, "push", "-q", "origin", "main", "v1.4.2", env=env)
    _git(work, "checkout", "-q", "--detach", "v1.4.2", env=env)
    summary = tmp_path / "summary.md"
    step_env = {
        **{k: v for k, v in env.items() if not k.startswith(("GIT_AUTHOR_", "GIT_COMMITTER_"))},
        **{k: str(v) for k, v in step["env"].items() if not str(v).startswith("${{")},
        "IMAGE": REF,
        "VERSION": "v1.4.2",
        "TOKEN": "ghs_notUsedByALocalOrigin0123",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_REPOSITORY": "example-owner/ci-autofix",
    }

    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", step["run"]],
        cwd=work,
        env=step_env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert proc.returncode == 0, proc.stdout + proc.stderr
    release = _git(origin, "rev-parse", "v1.4.2^{commit}", env=env)
    assert release != tagged
    assert _git(origin, "rev-parse", "v1^{commit}", env=env) == release
    assert _git(origin, "rev-parse", f"{release}^", env=env) == tagged
    assert _git(origin, "rev-parse", "main", env=env) == tagged  # main is not touched
    released = yaml.safe_load(_git(origin, "show", f"{release}:action.yml", env=env))
    assert released["runs"]["image"] == f"docker://{REF}"
    assert _git(origin, "diff", "--name-only", tagged, release, env=env) == "action.yml"
    assert REF in summary.read_text(encoding="utf-8")
