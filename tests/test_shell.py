"""shell.run: real processes, their groups, their output caps and their environment."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
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


# ---- reaping: what leaves the process group is killed too (ci_autofix.reap) -------------------------


def _pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _no_trace(pid: int) -> bool:
    """Gone for good: neither running nor a zombie (our reaper collected it)."""
    return not Path(f"/proc/{pid}").exists()


ESCAPE = """
import os, sys, time
def escape(then):
    if os.fork():
        os.wait()
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    with open(sys.argv[1], "a") as out:
        out.write(f"{os.getpid()}\\n")
    then()
    os._exit(0)
"""


@pytest.mark.parametrize(
    "then",
    [
        "lambda: time.sleep(60)",  # double fork + setsid
        "lambda: (signal.signal(signal.SIGTERM, signal.SIG_IGN), time.sleep(60))",  # ignores SIGTERM
        # renames itself and becomes something else
        "lambda: os.execvp('bash', ['kworker/0:1', '-c', 'exec -a systemd-journald sleep 60'])",
    ],
    ids=["setsid", "ignores-sigterm", "renamed"],
)
def test_a_process_that_left_the_group_is_killed_and_reaped(tmp_path: Path, then: str) -> None:
    pids = tmp_path / "pids"
    script = f"import signal\n{ESCAPE}\nescape({then})\ntime.sleep(0.3)\n"
    try:
        result = shell.run([PY, "-c", script, str(pids)], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)
        [left] = _pids(pids)
        assert result.ok, result.output
        assert _no_trace(left), Path(f"/proc/{left}/cmdline").read_bytes()
        assert left in result.reaped
    finally:
        _kill_all(_pids(pids))


def test_a_process_forking_in_a_loop_is_killed_with_all_it_forked(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # for 3 s at most, fork a new session every few ms; each child does the same, and sleeps
    loop = "lambda: [escape(lambda: time.sleep(60)) for _ in iter(lambda: time.monotonic() < end, False)]"
    script = f"{ESCAPE}\nend = time.monotonic() + 3\nescape({loop})\ntime.sleep(0.3)\n"
    stop = time.monotonic() + 4  # the loop has ended by then, whatever happened
    try:
        result = shell.run([PY, "-c", script, str(pids)], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)
        assert result.ok, result.output
        forked = _pids(pids)
        assert len(forked) > 1
        assert [pid for pid in forked if not _no_trace(pid)] == []
    finally:
        while any(not _no_trace(pid) for pid in _pids(pids)) and time.monotonic() < stop:
            _kill_all(_pids(pids))
            time.sleep(0.1)
        _kill_all(_pids(pids))


def test_our_other_children_are_left_alone(tmp_path: Path) -> None:
    """Processes this process started otherwise (before the command, or from another thread while
    it ran, as the emulator's `git http-backend`) and commands still running are not leftovers."""
    before = subprocess.Popen(["sleep", "30"])
    during: list[subprocess.Popen[bytes]] = []
    longer: list[shell.Completed] = []
    # another thread's command starts first and ends first, while ours (started after it) still runs
    other = threading.Thread(
        target=lambda: (
            during.append(subprocess.Popen(["sleep", "30"])),
            longer.append(shell.run(["sleep", "0.5"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)),
        )
    )
    try:
        other.start()
        time.sleep(0.2)
        ours = shell.run(["sleep", "1"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)
        other.join()
        assert ours.ok and longer[0].ok
        assert ours.reaped == () and longer[0].reaped == ()
        assert before.poll() is None and during[0].poll() is None
    finally:
        for proc in [before, *during]:
            proc.kill()
            proc.wait()


ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="running commands as another uid needs root")


def _free_uid() -> int:
    """A uid no process uses: stands for the sandbox's dedicated uid."""
    taken = {
        int(line.split()[1])
        for status in Path("/proc").glob("[0-9]*/status")
        for line in _lines(status)
        if line.startswith("Uid:")
    }
    return next(uid for uid in range(3_700_000 + os.getpid() % 10_000, 4_000_000) if uid not in taken)


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except OSError:
        return []


@ROOT
def test_with_a_dedicated_uid_every_process_of_that_uid_is_killed(tmp_path: Path) -> None:
    """Even one that is not our descendant (here: started before the command, by someone else)."""
    uid = _free_uid()
    elsewhere = subprocess.Popen(
        ["sleep", "30"], user=uid, group=uid, extra_groups=[], start_new_session=True
    )
    try:
        plain = shell.run(["true"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30, user=uid, group=uid)
        assert plain.ok and elsewhere.poll() is None  # a uid that is not dedicated: its processes stay
        result = shell.run(
            ["true"],
            cwd=tmp_path,
            env=shell.scrubbed_env(),
            timeout=30,
            user=uid,
            group=uid,
            dedicated_user=True,
        )
        assert result.ok
        assert elsewhere.wait(timeout=5) == -signal.SIGKILL, "the uid's other process survived"
        assert elsewhere.pid in result.reaped
    finally:
        elsewhere.kill()
        elsewhere.wait()


def test_dedicated_user_refuses_root_and_ourselves(tmp_path: Path) -> None:
    for user in (None, 0, os.getuid()):
        with pytest.raises(ValueError, match="dedicated_user"):
            shell.run(
                ["true"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=5, user=user, dedicated_user=True
            )


SWEEP_WITHOUT_CAP_KILL = """
import json, os, sys
from ci_autofix import reap
try:
    reap.sweep(reap.Started(os.getpid(), 0), "make serve", uid=int(sys.argv[1]), gid=int(sys.argv[1]), timeout=1)
except reap.Survivors as exc:
    print(json.dumps({"pids": exc.pids, "message": str(exc)}))
"""


@ROOT
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux's setpriv")
def test_a_process_that_cannot_be_killed_is_a_typed_error(tmp_path: Path) -> None:
    """Fail closed: a process of the uid that neither the uid nor we may signal (its real and saved
    uid are another's; the sweep runs without CAP_KILL) is reported, with cause and remedy."""
    uid, other = _free_uid(), _free_uid() + 1
    stuck = subprocess.Popen(
        [
            PY,
            "-c",
            f"import os, time; os.setresgid({other}, {uid}, {other}); os.setresuid({other}, {uid}, {other}); "
            "time.sleep(30)",
        ],
        start_new_session=True,
    )
    try:
        for _ in range(200):  # until it has changed its uids
            if any(
                line.split()[1:3] == [str(other), str(uid)]
                for line in _lines(Path(f"/proc/{stuck.pid}/status"))
                if line.startswith("Uid:")
            ):
                break
            time.sleep(0.01)
        done = subprocess.run(
            [
                "setpriv",
                "--bounding-set",
                "-kill",
                "--inh-caps",
                "-kill",
                PY,
                "-c",
                SWEEP_WITHOUT_CAP_KILL,
                str(uid),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["pids"] == [stuck.pid]
        assert f"pid {stuck.pid}" in report["message"] and "What to do:" in report["message"]
        assert stuck.poll() is None
    finally:
        stuck.kill()
        stuck.wait()
