"""The hook the ladder calls: the failed job's runtimes installed in the work area, first on the PATH
of the work area's sandboxes (the working copy's and each clean copy's), as the sandbox's uid."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ci_autofix.errors import Halt, HaltReason
from ci_autofix.ladder.run import LadderInput, Proposal, run_ladder
from ci_autofix.ladder.runtimes import TOOLCHAINS, provision_for, with_runtimes
from ci_autofix.ladder.workarea import workarea
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.toolchains.sources import MIRROR_SETTING
from ci_autofix.triage.model import Category, Diagnosis
from tests.testing.failed import failed_steps
from tests.testing.fakes.messages import FakeMessagesAPI, reply, tool_use
from tests.testing.fakes.messages_fixtures import TEST_KEY, make_llm
from tests.testing.git import init_repo
from tests.testing.sandbox_tools import sandbox_bin, sandbox_path
from tests.testing.toolchain_mirror import MirrorServer, available, build, session_root

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        available() is not None, reason=f"the toolchain mirror cannot be built: {available()}"
    ),
]

JOB = yaml.safe_load(
    """
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with: {go-version-file: go.mod}
      - run: gofmt -l .
    """
)


def test_the_jobs_go_is_first_on_the_path_of_every_sandbox(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    built = build(session_root(tmp_path_factory))
    files = {"go.mod": "module example.com/x\n\ngo 1.19\n", "main.go": "package main\nfunc main(){}\n"}
    head = init_repo(tmp_path / "repo", files)
    with MirrorServer(built.tree).running() as mirror, workarea(tmp_path / "repo", head) as area:
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)  # our own setting, as the Action's environment has it
        provisioned = provision_for(area, JOB)
        (go,) = provisioned.runtimes
        assert go.installed.home.parent == area.base / TOOLCHAINS
        assert go.declared.source == "go.mod go (named by `actions/setup-go@v5`)"
        working = with_runtimes(area.sandbox(protected=(), timeout=60), provisioned)
        clean = with_runtimes(area.clean_copy(head, protected=(), timeout=60), provisioned)
        for sandbox in (working, clean):
            version = sandbox.run(["go", "version"])
            assert version.ok and f"go{built.go}" in version.output, version.output
            gofmt = sandbox.run(["gofmt", "-l", "."])
            assert gofmt.ok and gofmt.output.strip() == "main.go"
            home = sandbox.env()["HOME"]
            assert sandbox.env()["GOCACHE"] == f"{home}/.cache/go-build" and sandbox.env()["GOROOT"] == str(
                go.installed.home
            )
            if os.geteuid() == 0:
                assert sandbox.user is not None and sandbox.user != 0
                assert not sandbox.run(["touch", str(go.bin / "planted")]).ok
        assert working.env()["HOME"] != clean.env()["HOME"]


def test_nothing_declared_leaves_the_sandbox_as_it_was(tmp_path: Path) -> None:
    head = init_repo(tmp_path / "repo", {"README.md": "hi\n"})
    with workarea(tmp_path / "repo", head) as area:
        provisioned = provision_for(area, {"steps": [{"run": "make"}]}, mirror="http://127.0.0.1:9/")
        sandbox = area.sandbox(protected=(), timeout=60)
        assert provisioned.runtimes == () and with_runtimes(sandbox, provisioned) is sandbox


# ---- through the ladder ---------------------------------------------------------------------------
GOFMT_CHECK = 'test -z "$(gofmt -l .)"'  # passes when gofmt is missing: the ladder must not believe it
GO_JOB = yaml.safe_load(
    """
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-go@v5
        with: {go-version-file: go.mod}
      - run: test -z "$(gofmt -l .)"
    """
)
GO_FILES = {
    "go.mod": "module example.com/x\n\ngo 1.19\n",
    "main.go": 'package main\n\nfunc main() {\n  println("hi")\n}\n',
}


@pytest.fixture
def path_without_go() -> Iterator[str]:
    """A PATH with what our git, the sandbox's bash and npm's `sh` need, and no Go, Node or Rust: the
    only ones there can be are those the ladder provisions (this machine has Debian's Go in /usr/bin). In a directory the
    sandbox's uid can enter (pytest's own temp dir is private to root)."""
    bin_dir = Path(tempfile.mkdtemp(prefix="ci-autofix-test-bin-"))
    try:
        for name in ("bash", "sh", "git"):
            found = shutil.which(name)
            assert found is not None, name
            (bin_dir / name).symlink_to(found)
        bin_dir.chmod(0o755)
        yield f"{sandbox_bin()}:{bin_dir}"
    finally:
        shutil.rmtree(bin_dir)


def _go_fix_by_the_agent(tmp_path: Path, api: FakeMessagesAPI) -> Proposal:
    """The ladder on a Go module failing `gofmt -l`, the agent (scripted) indenting main.go with a tab."""
    head = init_repo(tmp_path / "repo", GO_FILES)
    edit = {
        "command": "str_replace",
        "path": "main.go",
        "old_str": '  println("hi")',
        "new_str": '\tprintln("hi")',
    }
    done = {
        "summary": "gofmt's indentation",
        "root_cause": "main.go:4",
        "confidence": "high",
        "notes_left_as_is": [],
    }
    api.push(reply(tool_use("str_replace_based_edit_tool", edit)), reply(tool_use("finish", done)))
    diagnosis = Diagnosis(
        failures=[], log_commands=[GOFMT_CHECK], category=Category.TEST, excerpt="main.go", excerpt_tokens=1,
        budget_tokens=1000,
    )  # fmt: skip
    settings = Settings(anthropic_api_key=TEST_KEY, fixers=[], command_timeout=120, require_verified=False)
    with workarea(tmp_path / "repo", head) as area:
        return run_ladder(
            LadderInput(
                area=area,
                head_sha=head,
                diagnosis=diagnosis,
                settings=settings,
                commit_message="Fix CI failure\n",
                tools_dir=area.tools_dir,
                llm_factory=lambda: make_llm(api),
                failed=failed_steps(GOFMT_CHECK, job=GO_JOB),
            ),
            Runner(in_actions=False, stream=io.StringIO()),
        )


def test_the_ladder_verifies_a_go_fix_with_the_go_it_provisioned(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    messages_api: FakeMessagesAPI,
    path_without_go: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """No Go on the PATH: the one from the mirror (go.mod's, named by setup-go) runs the judged
    `gofmt -l` before and after the fix, and the evidence says where it came from."""
    built = build(session_root(tmp_path_factory))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", path_without_go)
    with MirrorServer(built.tree).running() as mirror:
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)
        proposal = _go_fix_by_the_agent(tmp_path, messages_api)
    verification = proposal.verification
    assert verification is not None and verification.outcome == "verified", verification.to_markdown()
    (pair,) = verification.evidence
    assert pair.before is not None and not pair.before.ok and pair.after.ok
    assert (
        f"| Go | {built.go} | `1.19` | `` go.mod go (named by `actions/setup-go@v5`) `` |"
        in verification.toolchains
    )
    assert f"{mirror.url}go/go{built.go}.linux-amd64.tar.gz" in verification.to_markdown()


def test_a_go_runtime_that_cannot_be_provisioned_leaves_the_fix_unverified(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    messages_api: FakeMessagesAPI,
    path_without_go: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The archive does not match the publisher's checksum: nothing is installed, the evidence says
    why, and the step (which passes when gofmt is missing) is not taken as verified."""
    built = build(session_root(tmp_path_factory))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", path_without_go)
    with MirrorServer(built.tree).running() as mirror:
        mirror.override(f"go/go{built.go}.linux-amd64.tar.gz", b"not the archive the index names")
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)
        proposal = _go_fix_by_the_agent(tmp_path, messages_api)
    verification = proposal.verification
    assert verification is not None and verification.outcome == "unverified"
    assert "names `gofmt`, which is not installed in this environment" in verification.reason
    assert "Go `1.19` was not provisioned" in verification.toolchains


def test_a_runtime_that_cannot_be_provisioned_is_not_replaced_by_the_machines_own(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    messages_api: FakeMessagesAPI,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """This machine has Debian's Go in /usr/bin, and gofmt from it passes after the fix; but the Go the
    job declares could not be had, so the commands did not run as CI runs them: not verified."""
    built = build(session_root(tmp_path_factory))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", sandbox_path())  # with /usr/bin, so with gofmt
    with MirrorServer(built.tree).running() as mirror:
        mirror.override(f"go/go{built.go}.linux-amd64.tar.gz", b"not the archive the index names")
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)
        proposal = _go_fix_by_the_agent(tmp_path, messages_api)
    verification = proposal.verification
    assert verification is not None and verification.outcome == "unverified"
    (pair,) = verification.evidence
    assert pair.before is not None and not pair.before.ok and pair.after.ok  # the machine's gofmt ran
    assert "The job's runtime go `1.19` could not be provisioned here" in verification.reason


# ---- the deterministic fixers, with the runtimes the ladder provisioned (no model) -----------------
def _fixers_only(tmp_path: Path, files: dict[str, str], command: str, job: dict[str, object]) -> Proposal:
    """The ladder with the fixers alone (`auto`, no API key) on a project whose `command` fails."""
    head = init_repo(tmp_path / "repo", files)
    diagnosis = Diagnosis(
        failures=[], log_commands=[command], category=Category.FORMAT, excerpt="", excerpt_tokens=1,
        budget_tokens=1000,
    )  # fmt: skip
    settings = Settings(anthropic_api_key=None, command_timeout=300, require_verified=True)
    with workarea(tmp_path / "repo", head) as area:
        return run_ladder(
            LadderInput(
                area=area,
                head_sha=head,
                diagnosis=diagnosis,
                settings=settings,
                commit_message="Fix CI failure\n",
                tools_dir=area.tools_dir,
                llm_factory=lambda: pytest.fail("the fixers alone settle a format failure"),
                failed=failed_steps(command, job=job),
            ),
            Runner(in_actions=False, stream=io.StringIO()),
        )


def _settled_by(proposal: Proposal, fixer: str, changed: list[str]) -> None:
    verification = proposal.verification
    assert verification is not None and verification.outcome == "verified", (
        verification and verification.to_markdown()
    )
    (pair,) = verification.evidence
    assert pair.before is not None and not pair.before.ok and pair.after.ok
    assert [(run.name, run.changed_files) for run in proposal.fixers] == [(fixer, changed)]
    assert proposal.agent is None and proposal.changed_files == changed


def test_a_go_module_failing_gofmt_gets_a_verified_gofmt_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path_without_go: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    built = build(session_root(tmp_path_factory))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", path_without_go)
    with MirrorServer(built.tree).running() as mirror:
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)
        proposal = _fixers_only(tmp_path, GO_FILES, GOFMT_CHECK, GO_JOB)
    _settled_by(proposal, "gofmt", ["main.go"])
    assert proposal.fixers[0].argv == ["gofmt", "-w", "."]
    assert '+\tprintln("hi")' in proposal.diff


def test_a_halt_after_a_refused_runtime_names_the_file_the_checksums_and_the_remedy(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path_without_go: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """No verification runs when nothing can be fixed (here: no gofmt, no model), so the halt itself
    says why the job's Go is missing: the archive's URL, both SHA-256s and what to do."""
    built = build(session_root(tmp_path_factory))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", path_without_go)
    archive = f"go/go{built.go}.linux-amd64.tar.gz"
    with MirrorServer(built.tree).running() as mirror:
        real = mirror.read(archive)
        tampered = real[:-1] + bytes([real[-1] ^ 1])  # the size the index lists, another SHA-256
        mirror.override(archive, tampered)
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)
        with pytest.raises(Halt) as halted:
            _fixers_only(tmp_path, GO_FILES, GOFMT_CHECK, GO_JOB)
    message = halted.value.message
    assert halted.value.reason is HaltReason.AGENT_DISABLED
    assert message.startswith("No deterministic fixer applies"), message  # the halt's own reason first
    assert "Go `1.19` (go.mod go (named by `actions/setup-go@v5`)) could not be provisioned: " in message
    got, expected = hashlib.sha256(tampered).hexdigest(), hashlib.sha256(real).hexdigest()
    assert (
        f"{mirror.url}{archive} does not match the publisher's checksum (SHA-256 {got}, expected {expected})"
        in message
    )
    assert "nothing was extracted. What to do: " in message


RUST_JOB = yaml.safe_load(
    """
    runs-on: ubuntu-latest
    steps:
      - uses: dtolnay/rust-toolchain@stable
        with: {components: rustfmt}
      - run: cargo fmt --all -- --check
    """
)


def test_a_rust_crate_failing_cargo_fmt_check_gets_a_verified_cargo_fmt_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path_without_go: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    built = build(session_root(tmp_path_factory))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", path_without_go)  # no cargo either: only the provisioned one
    files = {
        "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n',
        "rust-toolchain.toml": f'[toolchain]\nchannel = "{built.rust}"\n',
        "src/main.rs": 'fn main() {\n  println!( "hi" );\n}\n',
    }
    with MirrorServer(built.tree).running() as mirror:
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)
        proposal = _fixers_only(tmp_path, files, "cargo fmt --all -- --check", RUST_JOB)
    _settled_by(proposal, "cargo-fmt", ["src/main.rs"])
    assert proposal.fixers[0].argv == ["cargo", "fmt", "--all"]
    assert "| Rust | " in proposal.verification.toolchains  # type: ignore[union-attr]


NODE_JOB = yaml.safe_load(
    """
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-node@v4
        with: {node-version: 20}
      - run: npm ci
      - run: npx prettier --check src
    """
)
PRETTIER = "3.3.3"


def _lockfile(tmp_path_factory: pytest.TempPathFactory, package: str) -> dict[str, str]:
    """package.json and the package-lock.json npm writes for `package` (name@version, from the npm registry)."""
    project = tmp_path_factory.mktemp("lock")
    (project / "package.json").write_text('{"name": "demo", "private": true, "devDependencies": {}}\n')
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    locked = subprocess.run(
        [npm, "install", "--package-lock-only", "--save-exact", "--save-dev", package, "--no-audit", "--no-fund"],
        cwd=project, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if locked.returncode != 0:
        pytest.skip(f"the npm registry cannot be reached: {locked.stderr[-300:]}")
    return {name: (project / name).read_text() for name in ("package.json", "package-lock.json")}


@pytest.fixture(scope="module")
def prettier_lockfile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _lockfile(tmp_path_factory, f"prettier@{PRETTIER}")


def test_a_node_project_failing_prettier_check_gets_a_verified_prettier_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path_without_go: str,
    prettier_lockfile: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`npm ci` installs the lockfile's prettier (as the sandbox's uid, with the provisioned Node) in the
    working copy and in each clean copy; the fixer runs that prettier, never a global one."""
    built = build(session_root(tmp_path_factory))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", path_without_go)  # no node either: only the provisioned one
    files = {**prettier_lockfile, ".gitignore": "node_modules/\n", "src/a.js": "const x  =  {a:1}\n"}
    with MirrorServer(built.tree).running() as mirror:
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)
        proposal = _fixers_only(tmp_path, files, "npx prettier --check src", NODE_JOB)
    _settled_by(proposal, "prettier", ["src/a.js"])
    assert proposal.fixers[0].argv == ["./node_modules/.bin/prettier", "--write", "src"]
    assert proposal.fixers[0].version is None
    assert "+const x = { a: 1 };" in proposal.diff
    assert f"| Node.js | {built.node} | `20` |" in proposal.verification.toolchains  # type: ignore[union-attr]


BIOME = "2.6.9"
BIOME_JOB = yaml.safe_load(
    """
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-node@v4
        with: {node-version: 20}
      - run: npm ci
      - run: npx biome ci src
    """
)


@pytest.fixture(scope="module")
def biome_lockfile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _lockfile(tmp_path_factory, f"@biomejs/biome@{BIOME}")


def test_a_node_project_failing_biome_ci_gets_a_verified_biome_check_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    path_without_go: str,
    biome_lockfile: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`biome ci` only reports; the fixer is the lockfile's own biome (its platform binary installed by
    `npm ci` as the sandbox's uid) running `biome check --write` on the step's paths, and the clean
    copy's `npx biome ci src` passes after it. A file outside the step's paths is left as it was."""
    built = build(session_root(tmp_path_factory))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", path_without_go)  # no node either: only the provisioned one
    files = {
        **biome_lockfile,
        "biome.json": '{"formatter": {"indentStyle": "space"}}\n',
        ".gitignore": "node_modules/\n",
        "src/a.js": "const x  =  {a:1}\nexport default x\n",
        "scripts/b.js": "const y  =  2\nexport default y\n",
    }
    with MirrorServer(built.tree).running() as mirror:
        monkeypatch.setenv(MIRROR_SETTING, mirror.url)
        proposal = _fixers_only(tmp_path, files, "npx biome ci src", BIOME_JOB)
    _settled_by(proposal, "biome-check", ["src/a.js"])
    assert proposal.fixers[0].argv == ["./node_modules/.bin/biome", "check", "--write", "src"]
    assert "+const x = { a: 1 };" in proposal.diff and "scripts/b.js" not in proposal.diff
