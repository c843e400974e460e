"""A simulation of the Actions runner starting our container action, for end-to-end tests.

It lays out what the runner mounts into a Docker action (`/github/workflow/event.json`,
`/github/file_commands/set_output_<uuid>`, `step_summary_<uuid>`, `/github/home`,
`/github/runner_temp`), builds the environment the way the runner does (every input declared in
`action.yml` as `INPUT_<NAME>` with hyphens kept, set to the workflow's value, else the input's
default, else `""`; the `GITHUB_*` variables; `GITHUB_ACTIONS=true`, `CI=true`), and runs
`python -m ci_autofix` as a subprocess with that environment passed directly (no shell, so the
hyphenated names survive). Afterwards it parses the outputs file (`name=value` and the
`name<<DELIMITER` form, with the runner's errors for a bad delimiter), the step summary and the
workflow commands printed on stdout.

    sim = RunnerSim(tmp_path).for_emulator(emu, "acme/widgets")
    result = sim.run(event_name="workflow_run", event=emu.workflow_run_event(run), workspace=checkout,
                     inputs={"max-attempts": "2"})
    assert result.exit_code == 0 and result.outputs["status"] == "proposed"
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ACTION_YML = Path(__file__).resolve().parents[2] / "action.yml"
_COMMAND = re.compile(r"^::(?P<name>[a-z-]+)(?: (?P<props>[^:]*))?::(?P<message>.*)$")


class RunnerFileError(Exception):
    """The runner would fail the step: a file command was malformed."""


@dataclass(frozen=True)
class WorkflowCommand:
    name: str  # error | warning | notice | debug | add-mask | group | endgroup | ...
    properties: dict[str, str]
    message: str


@dataclass
class RunResult:
    exit_code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    commands: list[WorkflowCommand]
    env: dict[str, str] = field(repr=False)
    # what the step left in GITHUB_ENV, GITHUB_PATH and GITHUB_STATE (ci-autofix writes none of them)
    runner_files: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def log(self) -> str:
        """What the job log would hold before masking: stdout then stderr."""
        return self.stdout + self.stderr

    @property
    def masks(self) -> list[str]:
        return [c.message for c in self.commands if c.name == "add-mask"]

    def annotations(self, level: str = "error") -> list[WorkflowCommand]:
        return [c for c in self.commands if c.name == level]

    def result_json(self) -> Any:
        return json.loads(self.outputs["result-json"])


def declared_inputs(action_yml: Path = ACTION_YML) -> dict[str, str]:
    """Input names → default values, read from `action.yml` (a small reader for its `inputs:`
    block: two-space-indented names with an optional `default:`). Without `action.yml`, the
    names come from `Settings.input_names()` with no defaults."""
    if not action_yml.exists():
        from ci_autofix.settings import Settings

        return dict.fromkeys(Settings.input_names(), "")
    inputs: dict[str, str] = {}
    current = None
    in_inputs = False
    for line in action_yml.read_text(encoding="utf-8").splitlines():
        if re.match(r"^\S", line):
            in_inputs = line.startswith("inputs:")
            current = None
            continue
        if not in_inputs:
            continue
        name = re.match(r"^  ([A-Za-z0-9_-]+):\s*$", line)
        if name:
            current = name.group(1)
            inputs[current] = ""
            continue
        default = re.match(r"^    default:\s*(.*?)\s*$", line)
        if default and current:
            value = default.group(1)
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            inputs[current] = value
    return inputs


def _evaluate_default(value: str, token: str) -> str:
    """The runner evaluates expressions in defaults; the one our action uses is `github.token`."""
    if "${{" not in value:
        return value
    if re.fullmatch(r"\$\{\{\s*github\.token\s*\}\}", value):
        return token
    return ""


def parse_outputs(text: str) -> dict[str, str]:
    """Parse a `GITHUB_OUTPUT` file as the runner's FileCommandManager does."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        heredoc = line.find("<<")
        equals = line.find("=")
        if heredoc > 0 and (equals < 0 or heredoc < equals):
            name, delimiter = line[:heredoc], line[heredoc + 2 :]
            if not name or not delimiter:
                raise RunnerFileError(f"Invalid format '{line}'")
            body: list[str] = []
            while True:
                if i >= len(lines):
                    raise RunnerFileError(f"Matching delimiter not found '{delimiter}'")
                candidate = lines[i]
                i += 1
                if candidate == delimiter:
                    break
                body.append(candidate)
            if i >= len(lines):  # the delimiter line must end with a newline
                raise RunnerFileError(f"Invalid value. EOF marker missing new line '{delimiter}'")
            outputs[name] = "\n".join(body)
        elif equals > 0:
            outputs[line[:equals]] = line[equals + 1 :]
        else:
            raise RunnerFileError(f"Invalid format '{line}'")
    return outputs


def parse_commands(stdout: str) -> list[WorkflowCommand]:
    commands = []
    for line in stdout.splitlines():
        match = _COMMAND.match(line.strip())
        if not match:
            continue
        props = {}
        for item in (match["props"] or "").split(","):
            if "=" in item:
                key, value = item.split("=", 1)
                props[key.strip()] = _unescape(value, prop=True)
        commands.append(WorkflowCommand(match["name"], props, _unescape(match["message"])))
    return commands


def _unescape(value: str, *, prop: bool = False) -> str:
    value = value.replace("%0D", "\r").replace("%0A", "\n")
    if prop:
        value = value.replace("%3A", ":").replace("%2C", ",")
    return value.replace("%25", "%")


RUNNER_UID = 1001  # on GitHub's hosted runners the workspace and the runner's files belong to this uid


class RunnerSim:
    """`runner_uid`: lay the workspace, HOME, RUNNER_TEMP and the file-command files out as that
    uid's, as the runner does (ci-autofix itself still runs as our uid, root in CI).

    With `CI_AUTOFIX_SIM_IMAGE` set (ci/container/check sets it for tests/security), every run goes
    through that image with `ci/container/run-like-runner` instead of `python -m ci_autofix`: the
    same inputs and variables, the runner's own mounts, and the system temp dir shared at the same
    path, so what a test plants or looks for under it means the same inside and outside."""

    def __init__(
        self, tmp_path: Path, *, action_yml: Path = ACTION_YML, runner_uid: int | None = None
    ) -> None:
        self.root = tmp_path / "runner"
        self.action_yml = action_yml
        self.runner_uid = runner_uid
        self.image = os.environ.get("CI_AUTOFIX_SIM_IMAGE") or None
        self.repository = "acme/widgets"
        self.api_url = "https://api.github.com"
        self.server_url = "https://github.com"
        self.token = ""

    def for_emulator(self, emulator: Any, repository: str) -> RunnerSim:
        """Point the run at a `GitHubEmulator` (API, git server and its token)."""
        self.repository = repository
        self.api_url = emulator.api_url
        self.server_url = emulator.server_url
        self.token = emulator.token
        return self

    def environment(
        self,
        *,
        event_name: str,
        event_path: Path,
        workspace: Path,
        inputs: dict[str, str],
        output: Path,
        summary: str | Path,
        files: dict[str, Path],
        home: Path,
        runner_temp: Path,
        run_id: int,
        actor: str,
        extra_env: dict[str, str],
    ) -> dict[str, str]:
        declared = declared_inputs(self.action_yml)
        unknown = set(inputs) - set(declared)
        if unknown:
            # the runner only warns ("Unexpected input(s)"), and passes nothing for them
            print(f"##[warning]Unexpected input(s) {sorted(unknown)}", file=sys.stderr)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "LANG": "C.UTF-8",
            "CI_AUTOFIX_INDEX_JSON_URL": "",  # no release dates asked of PyPI (tests/conftest.py)
        }
        for name, default in declared.items():
            value = inputs[name] if name in inputs else _evaluate_default(default, self.token)
            env[f"INPUT_{name.replace(' ', '_').upper()}"] = value
        owner = self.repository.split("/")[0]
        env.update(
            {
                "GITHUB_ACTIONS": "true",
                "CI": "true",
                "HOME": str(home),
                "GITHUB_EVENT_NAME": event_name,
                "GITHUB_EVENT_PATH": str(event_path),
                "GITHUB_REPOSITORY": self.repository,
                "GITHUB_REPOSITORY_OWNER": owner,
                "GITHUB_API_URL": self.api_url,
                "GITHUB_SERVER_URL": self.server_url,
                "GITHUB_GRAPHQL_URL": f"{self.api_url}/graphql",
                "GITHUB_WORKSPACE": str(workspace),
                "GITHUB_OUTPUT": str(output),
                "GITHUB_STEP_SUMMARY": str(summary),
                **{name: str(path) for name, path in files.items()},
                "GITHUB_RUN_ID": str(run_id),
                "GITHUB_RUN_NUMBER": "1",
                "GITHUB_RUN_ATTEMPT": "1",
                "GITHUB_ACTOR": actor,
                "GITHUB_TRIGGERING_ACTOR": actor,
                "GITHUB_WORKFLOW": "ci-autofix",
                "GITHUB_WORKFLOW_REF": f"{self.repository}/.github/workflows/ci-autofix.yml@refs/heads/main",
                "GITHUB_JOB": "autofix",
                "GITHUB_ACTION": "__ci-autofix",
                "GITHUB_REF": "refs/heads/main",
                "GITHUB_REF_NAME": "main",
                "GITHUB_REF_TYPE": "branch",
                "RUNNER_TEMP": str(runner_temp),
                "RUNNER_OS": "Linux",
                "RUNNER_ARCH": "X64",
                "RUNNER_NAME": "GitHub Actions 1",
                "RUNNER_ENVIRONMENT": "github-hosted",
            }
        )
        env.update(extra_env)
        return env

    def run(
        self,
        *,
        event_name: str,
        event: dict[str, Any],
        workspace: Path,
        inputs: dict[str, str] | None = None,
        extra_env: dict[str, str] | None = None,
        run_id: int = 987654,
        actor: str = "alice",
        args: list[str] | None = None,
        timeout: float = 300,
    ) -> RunResult:
        """Run the action once. Each call gets fresh output and summary files."""
        step = uuid.uuid4()
        workflow_dir = self.root / "workflow"
        commands_dir = self.root / "file_commands"
        home = self.root / "home"
        runner_temp = self.root / "runner_temp"
        for directory in (workflow_dir, commands_dir, home, runner_temp):
            directory.mkdir(parents=True, exist_ok=True)
        event_path = workflow_dir / "event.json"
        event_path.write_text(json.dumps(event), encoding="utf-8")
        output = commands_dir / f"set_output_{step}"
        summary = commands_dir / f"step_summary_{step}"
        files = {
            "GITHUB_ENV": commands_dir / f"set_env_{step}",
            "GITHUB_PATH": commands_dir / f"add_path_{step}",
            "GITHUB_STATE": commands_dir / f"save_state_{step}",
        }
        for path in (output, summary, *files.values()):
            path.touch()
        if self.runner_uid is not None:
            for top in (self.root, workspace):
                _chown_tree(top, self.runner_uid)
        env = self.environment(
            event_name=event_name,
            event_path=event_path,
            workspace=workspace,
            inputs=dict(inputs or {}),
            output=output,
            summary=summary,
            files=files,
            home=home,
            runner_temp=runner_temp,
            run_id=run_id,
            actor=actor,
            extra_env=dict(extra_env or {}),
        )
        if self.image:
            return self._run_image(env, event_path, workspace, args or [], timeout, extra_env or {})
        completed = subprocess.run(
            [sys.executable, "-m", "ci_autofix", *(args or [])],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return RunResult(
            exit_code=completed.returncode,
            stdout=completed.stdout,
            stderr=completed.stderr,
            outputs=parse_outputs(output.read_text(encoding="utf-8")),
            summary=summary.read_text(encoding="utf-8"),
            commands=parse_commands(completed.stdout),
            env=env,
            runner_files={name: path.read_text(encoding="utf-8") for name, path in files.items()},
        )

    def _run_image(
        self,
        env: dict[str, str],
        event_path: Path,
        workspace: Path,
        args: list[str],
        timeout: float,
        extra_env: dict[str, str],
    ) -> RunResult:
        """The same run through the image, as the runner starts a container action."""
        assert self.image
        result_dir = self.root / f"image-result-{uuid.uuid4()}"
        # run-like-runner lays out HOME, the file commands and RUNNER_TEMP itself (owned by 1001)
        own = {"HOME", "PATH", "GITHUB_WORKSPACE", "GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME", "RUNNER_TEMP"}
        own |= {"GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE"}
        passed = {k: v for k, v in env.items() if k not in own and not k.startswith("INPUT_")}
        argv = [str(_RUN_LIKE_RUNNER), "--quiet", "--event-name", env["GITHUB_EVENT_NAME"]]
        argv += ["--event", str(event_path), "--result-dir", str(result_dir), "--timeout", str(int(timeout))]
        argv += ["--share", tempfile.gettempdir()]
        for name in passed:
            argv += ["--pass", name]
        argv += [self.image, str(workspace), *args]
        proc_env = {
            k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "ANTHROPIC_"))
        }
        proc_env.update(passed)
        proc_env.update({k: v for k, v in env.items() if k.startswith("INPUT_")})
        completed = subprocess.run(
            argv, env=proc_env, capture_output=True, text=True, timeout=timeout + 60, check=False
        )

        def read(name: str) -> str:
            path = result_dir / name
            return path.read_text(encoding="utf-8") if path.exists() else ""

        return RunResult(
            exit_code=completed.returncode,
            stdout=completed.stdout,
            stderr=completed.stderr,
            outputs=parse_outputs(read("set_output")),
            summary=read("step_summary"),
            commands=parse_commands(completed.stdout),
            env={**env, **{k: v for k, v in extra_env.items() if k != "PATH"}},
            runner_files={
                "GITHUB_ENV": read("set_env"),
                "GITHUB_PATH": read("add_path"),
                "GITHUB_STATE": read("save_state"),
            },
        )


_RUN_LIKE_RUNNER = ACTION_YML.parent / "ci" / "container" / "run-like-runner"


def _chown_tree(top: Path, uid: int) -> None:
    os.lchown(top, uid, uid)
    for directory, dirs, names in os.walk(top):
        for name in [*dirs, *names]:
            os.lchown(Path(directory) / name, uid, uid)
