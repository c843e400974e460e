"""Run the built image the way GitHub's runner runs a Docker container action, and read back what
it wrote: exit code, `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`, stdout and stderr.

It drives `ci/container/run-like-runner` (the `/github/*` mounts, `--workdir /github/workspace`, the
file-command files, hyphenated `INPUT_*` variables passed by name, host networking so the container
reaches fakes on 127.0.0.1). Values travel in the environment, never in argv.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.testing.git import git

REPO_ROOT = Path(__file__).resolve().parents[2]
RUN_LIKE_RUNNER = REPO_ROOT / "ci" / "container" / "run-like-runner"
RUNNER_UID = 1001  # the runner's checkout belongs to this uid; the action runs as root


@dataclass(frozen=True)
class ContainerRun:
    exit_code: int
    outputs: dict[str, str]
    summary: str
    stdout: str
    stderr: str

    def explain(self) -> str:
        """Everything a failing assertion needs to be understood."""
        return (
            f"exit {self.exit_code}\n--- outputs: {json.dumps(self.outputs, indent=1)}\n"
            f"--- summary:\n{self.summary}\n--- stdout:\n{self.stdout[-6000:]}\n--- stderr:\n{self.stderr[-6000:]}"
        )


def input_variable(name: str) -> str:
    """The variable the runner sets for input `name`: `INPUT_` + upper-cased, spaces to `_`, hyphens kept."""
    return "INPUT_" + name.replace(" ", "_").upper()


def parse_outputs(text: str) -> dict[str, str]:
    """Parse a `GITHUB_OUTPUT` file: `name=value` lines and `name<<DELIM` ... `DELIM` blocks, as the
    runner does (a missing delimiter is an error there, so it is one here)."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        heredoc = re.fullmatch(r"([^=<]+)<<(.+)", line)
        if heredoc and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = heredoc.groups()
            try:
                end = lines.index(delimiter, i)
            except ValueError:
                raise ValueError(f"GITHUB_OUTPUT: matching delimiter not found for {name!r}") from None
            outputs[name] = "\n".join(lines[i:end])
            i = end + 1
            continue
        name, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"GITHUB_OUTPUT: invalid line {line!r}")
        outputs[name] = value
    return outputs


def make_runner_checkout(source: Path, dest: Path, sha: str) -> Path:
    """A checkout of `sha` the way actions/checkout leaves it (detached, no credentials), owned by
    the runner's uid so git's dubious-ownership check applies inside the container."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    git(dest.parent, "clone", "-q", "--no-checkout", str(source), str(dest))
    git(dest, "checkout", "-q", "--detach", sha)
    git(dest, "remote", "remove", "origin")
    for path in [dest, *dest.rglob("*")]:
        os.lchown(path, RUNNER_UID, RUNNER_UID)
    return dest


def run_like_runner(
    image: str,
    workspace: Path,
    *,
    event_name: str,
    event: dict[str, Any] | None,
    inputs: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    github_token: str = "",
    timeout: int = 300,
) -> ContainerRun:
    """Run `image` on `workspace` as the runner would for `event_name` with `event` as payload.
    `inputs` are the action's inputs by their `with:` names; like the runner, every input that
    action.yml declares is set, to its default when not given (`${{ github.token }}` is
    `github_token`). `env`: other variables to pass (GITHUB_API_URL, GITHUB_SERVER_URL,
    GITHUB_REPOSITORY, ANTHROPIC_BASE_URL, ...)."""
    inputs = {**declared_inputs(github_token), **(inputs or {})}
    env = env or {}
    with tempfile.TemporaryDirectory(prefix="ci-autofix-run-") as tmp:
        tmp_path = Path(tmp)
        argv = [
            str(RUN_LIKE_RUNNER),
            "--quiet",
            "--event-name",
            event_name,
            "--result-dir",
            str(tmp_path / "result"),
            "--timeout",
            str(timeout),
        ]
        if event is not None:
            (tmp_path / "event.json").write_text(json.dumps(event))
            argv += ["--event", str(tmp_path / "event.json")]
        for name in env:
            argv += ["--pass", name]
        argv += [image, str(workspace)]
        proc_env = {
            k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "ANTHROPIC_"))
        }
        proc_env.update(env)
        proc_env.update({input_variable(name): value for name, value in inputs.items()})
        proc = subprocess.run(
            argv, env=proc_env, capture_output=True, text=True, timeout=timeout + 60, check=False
        )
        result = tmp_path / "result"
        output_text = (result / "set_output").read_text() if (result / "set_output").exists() else ""
        summary = (result / "step_summary").read_text() if (result / "step_summary").exists() else ""
    return ContainerRun(proc.returncode, parse_outputs(output_text), summary, proc.stdout, proc.stderr)


def declared_inputs(github_token: str) -> dict[str, str]:
    """The inputs action.yml declares, each with its default as the runner evaluates it."""
    from tests.testing.runner_sim import declared_inputs as declared

    return {
        name: github_token if re.fullmatch(r"\$\{\{\s*github\.token\s*\}\}", default) else default
        for name, default in declared().items()
    }


def engine_available() -> bool:
    return shutil.which("podman") is not None and RUN_LIKE_RUNNER.exists()
