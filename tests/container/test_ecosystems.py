"""Node, Go and Rust failures fixed and verified in the image, run like the runner runs it (issue 31).

Each scenario is a repository whose CI failed on `feature`, with the real tool's output (run here, at
the version the mirror serves) as the job's log. The image runs the propose flow against the GitHub
emulator; the runtime the job declares is provisioned by ci-autofix from the local toolchain mirror
(`testing.toolchain_mirror`: this machine's node, Debian's Go and the rustup toolchain, repacked in the
publishers' formats, with their checksum files) named by `CI_AUTOFIX_TOOLCHAIN_MIRROR`, ci-autofix's own
setting. Node dependencies come from the npm registry (`npm ci` in the sandbox: the container needs
registry.npmjs.org, as on the runner); the Go and Rust projects have none. Formatter and linter failures
are settled by the deterministic fixers without a model request; test failures by the agent, scripted
on the Messages fake. Skipped unless CI_AUTOFIX_IMAGE names an image (ci/container/check sets it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ci_autofix.toolchains.sources import MIRROR_SETTING
from tests.container.container_harness import ContainerRun, make_runner_checkout, run_like_runner
from tests.testing.emulator import GitHubEmulator, JobSpec, StepSpec
from tests.testing.fakes.messages import FakeMessagesAPI, reply, tool_use
from tests.testing.git import commit, git, init_repo
from tests.testing.toolchain_mirror import Built, MirrorServer, available, build, session_root

pytestmark = pytest.mark.skipif(
    available() is not None, reason=f"the toolchain mirror cannot be built here: {available()}"
)

REPO = "acme/widgets"
BRANCH = "feature"
AUTHOR = ("alice", "alice@example.com")
API_KEY = "sk-ant-api03-" + "e" * 40
EDITOR = "str_replace_based_edit_tool"
IMAGE_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"  # Debian's ca-certificates, in the image
TIMEOUT = 900  # npm ci from the registry for the reproduction, the fixers and the verification
NODE_SETUP = (
    "      - uses: actions/setup-node@v4\n        with:\n          node-version: 20\n      - run: npm ci\n"
)
GO_SETUP = "      - uses: actions/setup-go@v5\n        with:\n          go-version-file: go.mod\n"
RUST_SETUP = "      - uses: dtolnay/rust-toolchain@stable\n        with:\n          components: rustfmt\n"


@dataclass(frozen=True)
class Project:
    """A repository whose CI fails: `files` on `main`, `broken` committed on `feature`, `setup` the
    job's steps before `command` (workflow YAML), `runtime` as the summary names it, `turns` the
    scripted model (none: the fixers must settle it) and the file and text the fix must leave."""

    name: str
    files: dict[str, str]
    broken: dict[str, str]
    setup: str
    command: str
    runtime: str
    fixed_path: str
    fixed_text: str
    turns: list[dict[str, Any]] = field(default_factory=list)

    def workflow(self) -> str:
        return (
            "on: push\njobs:\n  ci:\n    runs-on: ubuntu-latest\n    steps:\n"
            f"      - uses: actions/checkout@v4\n{self.setup}      - run: {self.command}\n"
        )

    def steps(self) -> list[str]:
        """The job's step names before the failing one, as the runner names them."""
        names = ["Run actions/checkout@v4"]
        for line in self.setup.splitlines():
            item = line.strip().removeprefix("- ")
            if item.startswith(("uses: ", "run: ")):
                names.append("Run " + item.split(": ", 1)[1])
        return names


# ---- the projects --------------------------------------------------------------------------------------


def _npm_lockfile(project: Path, packages: list[str]) -> dict[str, str]:
    """package.json and the package-lock.json npm writes for `packages` (resolved on the npm registry)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    locked = subprocess.run(
        [npm, "install", "--package-lock-only", "--save-exact", "--save-dev", "--no-audit", "--no-fund", *packages],
        cwd=project, capture_output=True, text=True, timeout=300, check=False, env=_host_env(project),
    )  # fmt: skip
    if locked.returncode != 0:
        pytest.fail(f"the npm registry could not resolve {packages}: {locked.stderr[-500:]}")
    return {name: (project / name).read_text() for name in ("package.json", "package-lock.json")}


def _host_env(work: Path) -> dict[str, str]:
    """The environment the real tools run in here to write the job's log: their caches under `work`."""
    return {
        "PATH": f"{Path.home() / '.cargo' / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(Path.home()),  # rustup's toolchains (read only)
        "npm_config_cache": str(work / ".npm-cache"),
        "npm_config_update_notifier": "false",
        "GOCACHE": str(work / ".go-cache"),
        "GOPATH": str(work / ".go-path"),
        "GOFLAGS": "-modcacherw",
        "GOTOOLCHAIN": "local",
        "CARGO_TARGET_DIR": str(work / ".cargo-target"),
        "NO_COLOR": "1",
    }


def _node_project(
    tmp: Path, name: str, packages: list[str], files: dict[str, str], extra: dict[str, Any] | None = None
) -> dict[str, str]:
    work = tmp / f"lock-{name}"
    work.mkdir()
    manifest = {"name": name, "private": True, **(extra or {}), "devDependencies": {}}
    (work / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return {**_npm_lockfile(work, packages), ".gitignore": "node_modules/\n", **files}


def prettier_project(tmp: Path) -> Project:
    return Project(
        name="prettier",
        files=_node_project(tmp, "prettier", ["prettier@3.3.3"], {"src/a.js": "const x = { a: 1 };\n"}),
        broken={"src/a.js": "const x  =  {a:1}\n"},
        setup=NODE_SETUP,
        command="npx prettier --check src",
        runtime="Node.js",
        fixed_path="src/a.js",
        fixed_text="const x = { a: 1 };\n",
    )


ESLINT_CONFIG = 'module.exports = [{ files: ["src/**/*.js"], rules: { "prefer-const": "error" } }];\n'


def eslint_project(tmp: Path) -> Project:
    files = {
        "eslint.config.js": ESLINT_CONFIG,
        "src/app.js": 'const greeting = "hi";\nconsole.log(greeting);\n',
    }
    return Project(
        name="eslint",
        files=_node_project(tmp, "eslint", ["eslint@9.39.5"], files),
        broken={"src/app.js": 'let greeting = "hi";\nconsole.log(greeting);\n'},
        setup=NODE_SETUP,
        command="npx eslint src",
        runtime="Node.js",
        fixed_path="src/app.js",
        fixed_text='const greeting = "hi";\nconsole.log(greeting);\n',
    )


SUM_OK = "export function sum(a, b) {\n  return a + b;\n}\n"
SUM_TEST = 'import { expect, test } from "vitest";\nimport { sum } from "./sum.js";\n\ntest("adds", () => {\n  expect(sum(2, 3)).toBe(5);\n});\n'  # fmt: skip


def _agent_turns(path: str, old: str, new: str, command: str, summary: str) -> list[dict[str, Any]]:
    """Edit, re-run the failing command in the container, finish: three turns."""
    edit = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
    done = {"summary": summary, "root_cause": f"{path}: {old.strip()}", "confidence": "high", "notes_left_as_is": []}  # fmt: skip
    return [
        reply("The function subtracts; it must add.", tool_use(EDITOR, edit)),
        reply(tool_use("run", {"command": command})),
        reply(tool_use("finish", done)),
    ]


def vitest_project(tmp: Path) -> Project:
    files = {"src/sum.js": SUM_OK, "src/sum.test.js": SUM_TEST}
    return Project(
        name="vitest",
        files=_node_project(tmp, "vitest", ["vitest@3.2.4"], files, {"type": "module"}),
        broken={"src/sum.js": SUM_OK.replace("a + b", "a - b")},
        setup=NODE_SETUP,
        command="npx vitest run",
        runtime="Node.js",
        fixed_path="src/sum.js",
        fixed_text=SUM_OK,
        turns=_agent_turns(
            "src/sum.js", "a - b", "a + b", "npx vitest run", "sum() subtracted; it adds again."
        ),
    )


GO_MOD = "module example.com/greet\n\ngo 1.19\n"
GO_MAIN = 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n'


def gofmt_project(tmp: Path) -> Project:
    return Project(
        name="gofmt",
        files={"go.mod": GO_MOD, "main.go": GO_MAIN},
        broken={"main.go": GO_MAIN.replace("\tprintln", "  println")},
        setup=GO_SETUP,
        command='test -z "$(gofmt -l .)"',
        runtime="Go",
        fixed_path="main.go",
        fixed_text=GO_MAIN,
    )


CALC_GO = "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
CALC_GO_TEST = 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf("Add(2, 3) = %d, want 5", got)\n\t}\n}\n'  # fmt: skip


def go_test_project(tmp: Path) -> Project:
    return Project(
        name="go-test",
        files={
            "go.mod": "module example.com/calc\n\ngo 1.19\n",
            "calc.go": CALC_GO,
            "calc_test.go": CALC_GO_TEST,
        },
        broken={"calc.go": CALC_GO.replace("a + b", "a - b")},
        setup=GO_SETUP,
        command="go test ./...",
        runtime="Go",
        fixed_path="calc.go",
        fixed_text=CALC_GO,
        turns=_agent_turns("calc.go", "a - b", "a + b", "go test ./...", "Add subtracted; it adds again."),
    )


CARGO_LOCK = (
    "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\n"
    'version = 4\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\n'
)  # as cargo 1.95 writes it
RUST_MAIN = 'fn main() {\n    println!("hi");\n}\n'


def cargo_fmt_project(tmp: Path) -> Project:
    return Project(
        name="cargo-fmt",
        files={
            "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n',
            "Cargo.lock": CARGO_LOCK,
            ".gitignore": "/target\n",
            "src/main.rs": RUST_MAIN,
        },
        broken={"src/main.rs": 'fn main() {\n  println!( "hi" );\n}\n'},
        setup=RUST_SETUP,
        command="cargo fmt --all -- --check",
        runtime="Rust",
        fixed_path="src/main.rs",
        fixed_text=RUST_MAIN,
    )


# ---- the failed run, as GitHub has it ----------------------------------------------------------------


def _job_log(steps: list[str], command: str, output: str, code: int) -> bytes:
    """The job's log as the runner writes it: each step's group, the failing one with its output."""
    stamp = "2026-11-30T03:00:00.1234567Z "
    lines = []
    for name in steps:
        lines += [f"{stamp}##[group]{name}", f"{stamp}##[endgroup]"]
    lines += [f"{stamp}##[group]Run {command}", f"{stamp}{command}", f"{stamp}shell: /usr/bin/bash -e {{0}}"]
    lines += [f"{stamp}##[endgroup]", *(stamp + line for line in output.splitlines())]
    lines.append(f"{stamp}##[error]Process completed with exit code {code}.")
    return ("\n".join(lines) + "\n").encode()


def _failing_output(project: Project, source: Path, tmp: Path) -> tuple[str, int]:
    """What the failing command printed here, with this machine's tools at the mirror's versions
    (after `npm ci` for a Node project): the job's log is the real tool's output."""
    work = tmp / f"ran-{project.name}"
    git(tmp, "clone", "-q", "-b", BRANCH, str(source), str(work))
    env = _host_env(tmp / f"caches-{project.name}")
    if "npm ci" in project.setup:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=work, env=env, check=True, capture_output=True, timeout=600)  # fmt: skip
    ran = subprocess.run(
        ["bash", "-c", project.command], cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False
    )  # fmt: skip
    assert ran.returncode != 0, f"{project.command} passed on the broken commit: {ran.stdout}{ran.stderr}"
    return ran.stdout + ran.stderr, ran.returncode


@dataclass(frozen=True)
class Failed:
    workspace: Path
    head_sha: str
    run: Any
    source: Path


def seed(emu: GitHubEmulator, project: Project, tmp: Path) -> Failed:
    source = tmp / "source"
    init_repo(source, {**project.files, ".github/workflows/ci.yml": project.workflow()}, message="Start")
    git(source, "checkout", "-q", "-b", BRANCH)
    head = commit(source, project.broken, "Change things")
    output, code = _failing_output(project, source, tmp)
    emu.create_repo(REPO, source=source)
    emu.add_user(AUTHOR[0], "write", email=AUTHOR[1])
    steps = [StepSpec("Set up job"), *(StepSpec(s) for s in project.steps())]
    steps.append(StepSpec(f"Run {project.command}", "failure"))
    job = JobSpec("ci", "failure", steps, log=_job_log(project.steps(), project.command, output, code))
    run = emu.add_workflow_run(
        REPO, ".github/workflows/ci.yml", BRANCH, head, "failure", actor=AUTHOR[0], jobs=[job]
    )
    return Failed(make_runner_checkout(source, tmp / "workspace", head), head, run, source)


@dataclass(frozen=True)
class Proposed:
    result: ContainerRun
    requests: int
    asked: list[str]  # the mirror's paths, in order


def propose(image: str, emu: GitHubEmulator, failed: Failed, mirror: MirrorServer, turns: list[dict[str, Any]] | None) -> Proposed:  # fmt: skip
    """The propose job in the image; `turns` scripts the model (None: no API key, the fixers alone)."""
    with FakeMessagesAPI(turns or []).start() as messages:
        result = run_like_runner(
            image,
            failed.workspace,
            event_name="workflow_run",
            event=emu.workflow_run_event(failed.run),
            inputs={"anthropic-api-key": API_KEY if turns is not None else ""},
            github_token=emu.token,
            env={
                "GITHUB_API_URL": emu.api_url,
                "GITHUB_SERVER_URL": emu.server_url,
                "GITHUB_REPOSITORY": REPO,
                "ANTHROPIC_BASE_URL": messages.url,
                MIRROR_SETTING: mirror.url,
                **_machine_ca(),
            },
            timeout=TIMEOUT,
        )
        return Proposed(result, len(messages.message_requests), list(mirror.asked))


def _machine_ca() -> dict[str, str]:
    """Where this machine reaches the internet through a TLS-inspecting proxy, its CA is in the image's
    bundle (ci/container/make-base adds it) but not in Node's own: `npm ci` in the container then needs
    NODE_EXTRA_CA_CERTS, as npm here does. On GitHub's runners Node's CAs verify the registry."""
    return {"NODE_EXTRA_CA_CERTS": IMAGE_CA_BUNDLE} if os.environ.get("NODE_EXTRA_CA_CERTS") else {}


def _printed(result: ContainerRun) -> str:
    """What the run printed and wrote, but its `::add-mask::` commands (which must name the secret)."""
    lines = (result.stdout + result.stderr).splitlines()
    return (
        "\n".join(line for line in lines if "::add-mask::" not in line)
        + result.summary
        + json.dumps(result.outputs)
    )


# ---- fixtures ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(session_root(tmp_path_factory))


@pytest.fixture
def mirror(built: Built) -> Iterator[MirrorServer]:
    with MirrorServer(built.tree).running() as server:
        yield server


# ---- the scenarios ----------------------------------------------------------------------------------------

PROJECTS = {
    "prettier": prettier_project,
    "eslint": eslint_project,
    "vitest": vitest_project,
    "gofmt": gofmt_project,
    "go-test": go_test_project,
    "cargo-fmt": cargo_fmt_project,
}


@pytest.mark.parametrize("name", list(PROJECTS))
def test_a_failure_is_fixed_and_verified_with_the_runtime_the_job_declares(
    image: str, tmp_path: Path, github_emulator: GitHubEmulator, mirror: MirrorServer, built: Built, name: str
) -> None:
    emu = github_emulator
    project = PROJECTS[name](tmp_path)
    failed = seed(emu, project, tmp_path)

    proposed = propose(image, emu, failed, mirror, project.turns)

    result = proposed.result
    assert result.exit_code == 0, result.explain()
    assert result.outputs["status"] == "proposed", result.explain()
    details = json.loads(result.outputs["result-json"])["details"]
    assert details["verification"] == "verified", result.explain()
    fix_sha = result.outputs["fix-sha"]
    bare = emu.bare_path(REPO)
    assert git(bare, "rev-parse", f"{fix_sha}^") == failed.head_sha
    assert git(bare, "show", f"{fix_sha}:{project.fixed_path}") + "\n" == project.fixed_text, result.explain()
    assert git(bare, "diff", "--name-only", failed.head_sha, fix_sha) == project.fixed_path
    assert emu.branch_sha(REPO, BRANCH) == failed.head_sha  # nothing lands before a human approves
    # the job's runtime, provisioned by ci-autofix from the mirror (never the image's, it has none)
    version = {"Node.js": built.node, "Go": built.go, "Rust": built.rust}[project.runtime]
    assert f"| {project.runtime} | {version} |" in result.summary, result.explain()
    assert any(path.endswith((".tar.xz", ".tar.gz")) for path in proposed.asked), proposed.asked
    if project.turns:  # the agent's scripted session, turn by turn, through the real SDK
        assert proposed.requests == len(project.turns), result.explain()
    else:  # the deterministic fixer settled it: the model was never asked
        assert proposed.requests == 0, result.explain()
    assert API_KEY not in _printed(result) and emu.token not in _printed(result), result.explain()


# ---- what the mirror serves is checked: a tampered archive or checksum is refused ------------------------


def _flipped(data: bytes) -> bytes:
    """`data` with one byte in its middle changed: same size, another SHA-256."""
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :]


@pytest.mark.parametrize("tampered", ["go-archive", "node-checksums"])
def test_a_tampered_archive_or_checksum_is_refused_with_a_clear_error(
    image: str,
    tmp_path: Path,
    github_emulator: GitHubEmulator,
    mirror: MirrorServer,
    built: Built,
    tampered: str,
) -> None:
    """The mirror serves a Go archive with one byte changed, or Node's SHASUMS256.txt naming another
    SHA-256: nothing is installed, and the halt says which file, both checksums and what to do."""
    emu = github_emulator
    if tampered == "go-archive":
        project, runtime = gofmt_project(tmp_path), "Go"
        archive = f"go/go{built.go}.linux-amd64.tar.gz"
        expected = hashlib.sha256(mirror.read(archive)).hexdigest()
        mirror.override(archive, _flipped(mirror.read(archive)))
        got = hashlib.sha256(mirror.read(archive)).hexdigest()
    else:
        project, runtime = prettier_project(tmp_path), "Node.js"
        archive = f"node/v{built.node}/node-v{built.node}-linux-x64.tar.xz"
        sums = f"node/v{built.node}/SHASUMS256.txt"
        got, expected = hashlib.sha256(mirror.read(archive)).hexdigest(), hashlib.sha256(b"other").hexdigest()
        assert got in mirror.read(sums).decode()
        mirror.override(sums, mirror.read(sums).replace(got.encode(), expected.encode()))
    failed = seed(emu, project, tmp_path)

    proposed = propose(image, emu, failed, mirror, None)  # no model: the fixers alone

    result = proposed.result
    assert result.exit_code == 0, result.explain()
    assert result.outputs["status"] == "halted" and result.outputs["fix-sha"] == "", result.explain()
    assert f"/{archive}" in proposed.asked  # downloaded, then refused
    for told in (result.summary, result.stdout):  # the job's summary and its log
        assert f"{runtime} `" in told and "could not be provisioned" in told, result.explain()
        assert f"{mirror.url}{archive} does not match the publisher's checksum" in told, result.explain()
        assert f"SHA-256 {got}, expected {expected}" in told, result.explain()
        assert "What to do:" in told, result.explain()
    assert emu.branch_sha(REPO, BRANCH) == failed.head_sha and emu.pulls(REPO) == []
