"""shell.run: real processes, their groups, their output caps and their environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ci_autofix import shell

PY = sys.executable


def _gone(pid: int) -> bool:
    """The process no longer runs (it does not exist, or it is a zombie waiting for a reaper).

    SIGKILL is delivered asynchronously: give the kernel a moment (bounded) to finish the process.
    """
    for _ in range(200):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
        if "State:\tZ" in status:
            return True
        time.sleep(0.01)
    return False


def test_plain_command_output_and_exit_code(tmp_path: Path) -> None:
    result = shell.run(
        [PY, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
        cwd=tmp_path,
        env=shell.scrubbed_env(),
        timeout=30,
    )
    assert result.exit_code == 3 and not result.ok
    assert "out" in result.output and "err" in result.output
    assert result.describe() == "exit code 3"


def test_missing_program_is_reported_not_raised(tmp_path: Path) -> None:
    result = shell.run(["no-such-program-here"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=5)
    assert result.not_found and result.exit_code is None
    assert "not installed" in result.describe()


def test_a_forked_child_sleeping_forever_is_killed_at_the_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    script = textwrap.dedent(f"""
        import os, time
        pid = os.fork()
        if pid == 0:
            time.sleep(10_000)
        else:
            open({str(pid_file)!r}, "w").write(str(pid))
            time.sleep(10_000)
    """)
    result = shell.run([PY, "-c", script], cwd=tmp_path, env=shell.scrubbed_env(), timeout=1)
    assert result.timed_out and result.exit_code is None
    assert "timed out" in result.describe()
    child = int(pid_file.read_text())
    assert _gone(child)


def test_children_left_behind_by_a_finished_command_are_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "bg.pid"
    script = (
        f"import subprocess; p = subprocess.Popen(['sleep', '10000']); open({str(pid_file)!r}, 'w')"
        ".write(str(p.pid))"
    )
    result = shell.run([PY, "-c", script], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)
    assert result.ok
    assert _gone(int(pid_file.read_text()))


def test_100_mb_of_output_is_capped_in_bounded_memory(tmp_path: Path) -> None:
    # Measured in a fresh interpreter, so the peak memory is this run's alone.
    probe = textwrap.dedent("""
        import json, resource, sys
        from pathlib import Path
        from ci_autofix import shell
        writer = "import sys\\nchunk = b'x' * 1_000_000\\nsys.stdout.buffer.write(b'HEAD')\\n" \\
                 "for _ in range(100): sys.stdout.buffer.write(chunk)\\nsys.stdout.buffer.write(b'TAIL')"
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = shell.run([sys.executable, "-c", writer], cwd=Path("."), env=shell.scrubbed_env(), timeout=120,
                           max_output=256 * 1024)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"len": len(result.output), "truncated": result.truncated, "ok": result.ok,
                          "head": result.output[:4], "tail": result.output[-4:], "grew_kb": after - before,
                          "marker": "bytes of output omitted" in result.output}))
    """)
    done = subprocess.run([PY, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["truncated"] and report["marker"]
    assert report["len"] < 256 * 1024 + 200
    assert report["head"] == "HEAD" and report["tail"] == "TAIL"
    assert report["grew_kb"] < 30 * 1024  # far below the 100 MB printed


def test_scrubbed_env_drops_tokens_inputs_and_runner_internals() -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LANG": "C.UTF-8",
        "GITHUB_TOKEN": "t1",
        "INPUT_GITHUB-TOKEN": "t2",
        "INPUT_MAX-TURNS": "3",
        "ACTIONS_RUNTIME_TOKEN": "t3",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "u",
        "ANTHROPIC_API_KEY": "k",
        "ANTHROPIC_BASE_URL": "http://x",
        "AWS_SECRET_ACCESS_KEY": "a",
        "NPM_TOKEN": "n",
        "DB_PASSWORD": "p",
        "MY_API_KEY": "m",
        "GITHUB_ENV": "/f",
        "GITHUB_OUTPUT": "/o",
        "GIT_CONFIG_COUNT": "1",
        "GH_TOKEN": "g",
        "DEPLOY_HINT": "ghp_" + "a" * 36,  # an innocent name holding a token
        "GITHUB_REPOSITORY": "o/r",
        "RUNNER_OS": "Linux",
    }
    env = shell.scrubbed_env(base)
    assert set(env) == {
        "PATH",
        "HOME",
        "LANG",
        "GITHUB_REPOSITORY",
        "RUNNER_OS",
        "GIT_TERMINAL_PROMPT",
        "PYTHONDONTWRITEBYTECODE",
    }


def test_a_command_printing_its_environment_shows_no_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "ghs_" + "Z9" * 18
    monkeypatch.setenv("GITHUB_TOKEN", token)
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", token)
    monkeypatch.setenv("SOMETHING_ELSE", token)
    result = shell.run(["env"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)
    assert result.ok and "PATH=" in result.output
    assert token not in result.output


def test_stdin_is_fed_without_blocking_a_command_that_never_reads(tmp_path: Path) -> None:
    result = shell.run(
        [PY, "-c", "import time; time.sleep(30)"],
        cwd=tmp_path,
        env=shell.scrubbed_env(),
        timeout=1,
        stdin=b"x" * (4 * 1024 * 1024),
    )
    assert result.timed_out
    echo = shell.run(
        [PY, "-c", "import sys; print(len(sys.stdin.read()))"],
        cwd=tmp_path,
        env=shell.scrubbed_env(),
        timeout=30,
        stdin=b"y" * 100_000,
    )
    assert echo.output.strip() == "100000"


def test_output_cap_keeps_head_and_tail() -> None:
    buffer = shell._CappedBuffer(100)
    for index in range(50):
        buffer.add(f"{index:03d}|".encode())
    text = buffer.text()
    assert text.startswith("000|") and text.endswith("049|") and "bytes of output omitted" in text
    assert os.linesep in text
