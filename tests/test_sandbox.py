"""The sandbox: paths stay inside the workspace, commands run scrubbed, persisted credentials are out of reach."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ci_autofix.sandbox import Sandbox, SandboxViolation, command_argv, path_matches
from tests.testing.git import git

TOKEN = "ghs_" + "Q7" * 18
BASIC = "eC1hY2Nlc3MtdG9rZW46Z2hzX1E3UTdRN1E3UTdRN1E3UTdRN1E3UTdRN1E3UTdRN1E3UTdRN1E3UTdRN1E3"


def _gone(pid: int) -> bool:
    """The process no longer runs (gone, or a zombie); SIGKILL lands asynchronously, so look a few times."""
    for _ in range(200):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
        if "State:\tZ" in status:
            return True
        time.sleep(0.01)
    return False


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    git(root, "init", "-q", "-b", "main")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    other = tmp_path / "outside"
    other.mkdir()
    (other / "secret.txt").write_text("outside secret\n")
    return other


# ---- paths ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path", ["../outside/secret.txt", "src/../../outside/secret.txt", "..", "/etc/passwd", "/", "src/\0x"]
)
def test_paths_leaving_the_workspace_are_refused(repo: Path, outside: Path, path: str) -> None:
    with pytest.raises(SandboxViolation):
        Sandbox(repo).resolve(path)


def test_an_absolute_path_inside_the_workspace_is_fine(repo: Path) -> None:
    sandbox = Sandbox(repo)
    assert sandbox.resolve(str(repo / "src" / "app.py")) == repo / "src" / "app.py"
    assert sandbox.resolve("src/../src/app.py", write=True) == repo / "src" / "app.py"


def test_symlinks_to_etc_passwd_and_to_outside_directories_are_refused(repo: Path, outside: Path) -> None:
    (repo / "pw").symlink_to("/etc/passwd")
    (repo / "out").symlink_to(outside)
    (repo / "src" / "deep").symlink_to("../../outside/secret.txt")
    sandbox = Sandbox(repo)
    for path in ("pw", "out/secret.txt", "out", "src/deep"):
        for write in (False, True):
            with pytest.raises(SandboxViolation, match="outside the repository"):
                sandbox.resolve(path, write=write)


def test_a_symlink_inside_the_workspace_resolves_to_its_target(repo: Path) -> None:
    (repo / "alias.py").symlink_to("src/app.py")
    assert Sandbox(repo).resolve("alias.py", write=True) == repo / "src" / "app.py"


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", "vendor/lib/.git/config", ".git"])
def test_git_data_is_off_limits_for_reading_and_writing(repo: Path, path: str) -> None:
    sandbox = Sandbox(repo)
    for write in (False, True):
        with pytest.raises(SandboxViolation, match=r"\.git"):
            sandbox.resolve(path, write=write)


def test_a_symlink_into_git_is_refused(repo: Path) -> None:
    (repo / "cfg").symlink_to(".git/config")
    (repo / "gitdir").symlink_to(".git")
    sandbox = Sandbox(repo)
    for path in ("cfg", "gitdir/config"):
        with pytest.raises(SandboxViolation, match=r"\.git"):
            sandbox.resolve(path, write=True)


def test_protected_paths_are_read_only(repo: Path) -> None:
    sandbox = Sandbox(repo, protected=["docs/**", "*.lock"])
    assert sandbox.resolve(".github/workflows/ci.yml") == repo / ".github/workflows/ci.yml"  # reading is fine
    for path in (
        ".github/workflows/ci.yml",
        ".github/workflows/new.yml",
        ".github/workflows",
        "docs/a/b.md",
        "poetry.lock",
    ):
        with pytest.raises(SandboxViolation, match="protected"):
            sandbox.resolve(path, write=True)
    (repo / "wf").symlink_to(".github/workflows")
    with pytest.raises(SandboxViolation, match="protected"):
        sandbox.resolve("wf/ci.yml", write=True)
    assert sandbox.resolve("src/app.py", write=True) == repo / "src" / "app.py"
    assert sandbox.resolve("sub/poetry.lock.txt", write=True)


def test_path_matches_globs() -> None:
    assert path_matches(".github/workflows/ci.yml", ".github/workflows/**")
    assert path_matches(".github/workflows", ".github/workflows/**")
    assert path_matches("a/b/c.lock", "**/*.lock")
    assert not path_matches(".github/workflowsx/a", ".github/workflows/**")
    # protected paths err on the side of protecting: a pattern without `/` matches at any depth
    assert path_matches("sub/dir/poetry.lock", "*.lock")
    assert not path_matches("src/app.py", "docs/*")


# ---- commands -----------------------------------------------------------------------------------------------
def test_command_lines_become_argv_or_bash(repo: Path) -> None:
    assert command_argv("pytest -q tests") == ["pytest", "-q", "tests"]
    assert command_argv("pytest | tee log")[:6] == ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail"]
    result = Sandbox(repo).run_command_line("echo one && echo two")
    assert result.ok and result.output.split() == ["one", "two"]


def test_a_command_printing_its_environment_shows_no_token(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "GITHUB_TOKEN",
        "INPUT_GITHUB-TOKEN",
        "INPUT_ANTHROPIC-API-KEY",
        "ANTHROPIC_API_KEY",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "INNOCENT_NAME",
    ):
        monkeypatch.setenv(name, TOKEN)
    result = Sandbox(repo).run(["env"])
    assert result.ok and "CI=true" in result.output and "PATH=" in result.output
    assert TOKEN not in result.output
    assert "INPUT_" not in result.output and "ACTIONS_" not in result.output


def test_a_command_forking_a_sleeper_is_killed_at_the_timeout(repo: Path) -> None:
    pid_file = repo / "child.pid"
    script = (
        f"import os, time\npid = os.fork()\nif pid: open({str(pid_file)!r}, 'w').write(str(pid))\n"
        "time.sleep(10_000)"
    )
    result = Sandbox(repo, timeout=1).run([sys.executable, "-c", script])
    assert result.timed_out
    assert _gone(int(pid_file.read_text()))


def test_output_is_capped(repo: Path) -> None:
    result = Sandbox(repo, max_output=64 * 1024).run(
        [sys.executable, "-c", "import sys\nfor _ in range(100): sys.stdout.write('y' * 1_000_000)"]
    )
    assert result.ok and result.truncated and len(result.output) < 64 * 1024 + 200


# ---- persisted credentials ------------------------------------------------------------------------------------
def persist_credentials(repo: Path, runner_temp: Path) -> tuple[Path, bytes]:
    """What actions/checkout leaves behind: an extraheader in .git/config, or (v6) an includeIf'd file."""
    git(repo, "remote", "add", "origin", f"https://x-access-token:{TOKEN}@github.com/o/r.git")
    git(repo, "config", "--local", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {BASIC}")
    credentials = runner_temp / "git-credentials-1b2c.config"
    credentials.write_text(f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {BASIC}\n')
    credentials.chmod(0o600)
    git(repo, "config", "--local", f"includeIf.gitdir:{repo}/.git.path", str(credentials))
    return credentials, (repo / ".git" / "config").read_bytes()


def test_persisted_credentials_are_out_of_reach_of_commands_and_restored(repo: Path, tmp_path: Path) -> None:
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    credentials, config_before = persist_credentials(repo, runner_temp)
    assert BASIC.encode() in config_before and TOKEN.encode() in config_before
    snoop = (
        "import pathlib, subprocess, sys\n"
        "print(pathlib.Path('.git/config').read_text())\n"
        f"p = pathlib.Path({str(credentials)!r})\n"
        "print(p.read_text() if p.exists() else 'NO CREDENTIALS FILE')\n"
        "print(subprocess.run(['git', 'config', '--list', '--show-origin'], capture_output=True, text=True).stdout)\n"
        # and plant something for our own later git calls
        "open('.git/config', 'a').write('[core]\\n\\thooksPath = /tmp/evil\\n[alias]\\n\\tst = !touch /tmp/pwned\\n')\n"
    )
    result = Sandbox(repo).run([sys.executable, "-c", snoop])
    assert result.ok, result.output
    assert BASIC not in result.output and TOKEN not in result.output
    assert "NO CREDENTIALS FILE" in result.output
    assert "remote.origin.url=https://github.com/o/r.git" in result.output  # the URL without its credentials
    # afterwards: everything back, byte for byte, with its mode; nothing planted survives
    assert (repo / ".git" / "config").read_bytes() == config_before
    assert credentials.read_text().endswith(f"basic {BASIC}\n")
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert git(repo, "config", "--get", "http.https://github.com/.extraheader").strip().endswith(BASIC)


def test_config_is_restored_even_when_the_command_replaces_it_with_a_symlink(
    repo: Path, outside: Path
) -> None:
    config_before = (repo / ".git" / "config").read_bytes()
    target = outside / "evil.config"
    script = (
        f"import os\nopen({str(target)!r}, 'w').write('[core]\\n')\nos.remove('.git/config')\n"
        f"os.symlink({str(target)!r}, '.git/config')"
    )
    assert Sandbox(repo).run([sys.executable, "-c", script]).ok
    config = repo / ".git" / "config"
    assert not config.is_symlink() and config.read_bytes() == config_before
    assert target.read_text() == "[core]\n"  # the outside file was not written through the link


def test_a_checkout_without_git_data_runs_commands_normally(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert Sandbox(plain).run(["true"]).ok


def test_commands_run_in_the_workspace(repo: Path) -> None:
    result = Sandbox(repo).run([sys.executable, "-c", "import os; print(os.getcwd())"])
    assert result.output.strip() == str(repo.resolve())
    assert os.path.samefile(result.output.strip(), repo)


def test_paths_resolved_for_writing_are_remembered(repo: Path) -> None:
    sandbox = Sandbox(repo)
    sandbox.resolve("src/app.py")
    sandbox.resolve("src/new.py", write=True)
    sandbox.resolve("./src/../notes.md", write=True)
    with pytest.raises(SandboxViolation):
        sandbox.resolve(".github/workflows/ci.yml", write=True)
    assert sandbox.written == {"src/new.py", "notes.md"}


SETPRIV_NO_KILL = ("setpriv", "--bounding-set", "-kill", "--inh-caps", "-kill")  # root without CAP_KILL
LEAVE_AND_CHECK = """
import json, os, sys
from pathlib import Path
from ci_autofix.agent.tools import Toolbox
from ci_autofix.reap import Survivors
from ci_autofix.sandbox import Sandbox

command = sys.argv[2]
root = Path(sys.argv[1])
sandbox = Sandbox(root, user=1001, group=1001, sealed=(root / ".git",))
tools = Toolbox(sandbox, allowed_commands=[command], allow_shell=False, command_timeout=30)
try:
    tools.dispatch("run", {"command": command})
    outcome = "returned"
except Survivors as exc:
    outcome = f"survivors {exc.pids}"
print(json.dumps({"outcome": outcome, "config": (Path(sys.argv[1]) / ".git" / "config").read_text()}))
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and util-linux's setpriv"
)
def test_a_process_the_sandbox_uid_leaves_is_killed_even_without_cap_kill(repo: Path, tmp_path: Path) -> None:
    """ci-autofix runs without CAP_KILL, so it cannot signal what the command (as the sandbox's
    uid) leaves in a session of its own; the sweep as that uid still kills it, before the agent's
    `run` tool returns, and the sealed git data is open again only once nothing of it runs."""
    git(repo, "config", "--local", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {BASIC}")
    for path in [repo, *repo.rglob("*")]:
        os.lchown(path, 1001, 1001)
    leave = "bash ./leave.sh"
    (repo / "leave.sh").write_text(
        "( setsid bash -c 'echo $$ >left.pid; exec sleep 60' </dev/null >/dev/null 2>&1 & )\n"
        "for _ in $(seq 100); do [ -s left.pid ] && break; sleep 0.05; done\n"
    )
    try:
        done = subprocess.run(
            [*SETPRIV_NO_KILL, sys.executable, "-c", LEAVE_AND_CHECK, str(repo), leave],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        left = int((repo / "left.pid").read_text())
        assert report["outcome"] == "returned"
        assert not Path(f"/proc/{left}").exists() or "Z" in Path(f"/proc/{left}/stat").read_text().split()[2]
        assert BASIC in report["config"]  # restored: the leftover is gone
    finally:
        if (repo / "left.pid").is_file() and (pid := (repo / "left.pid").read_text().strip()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(int(pid), 0)  # it came to us, a subreaper, when the probe exited
