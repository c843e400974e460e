"""The signed log download (`GitHub.job_log` → `logs.download`) against the emulator's blob host
when it fails or is slow: tried again a bounded number of times on 5xx, timeouts and connection
errors, never on 404/410 (halts) or another refusal, and then a `UserError` that says the log
host did not answer and to re-run."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.github import ClientSettings, GitHub, logs
from tests.testing.emulator import GitHubEmulator, JobSpec, StepSpec
from tests.testing.git import init_repo

REPO = "acme/widgets"
LOG = b"\xef\xbb\xbf2026-01-01T00:00:00Z ##[error]Process completed with exit code 1.\n"
PATIENT = ClientSettings(
    timeout=1, retries=0, backoff_factor=0, seconds_between_writes=0, log_retries=2, log_backoff=0
)


def failed_job(emu: GitHubEmulator, tmp_path: Path, log: bytes) -> tuple[GitHub, int]:
    """A repository whose CI run has one failed job with `log`; the client and the job's id."""
    sha = init_repo(tmp_path / "src", {"app.py": "x = 1\n"})
    emu.create_repo(REPO, source=tmp_path / "src")
    run = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        "main",
        sha,
        jobs=[JobSpec("test", "failure", [StepSpec("Run pytest", "failure")], log=log)],
    )
    return GitHub(emu.token, emu.api_url, REPO, settings=PATIENT), run.jobs[0].id


@pytest.fixture
def job(github_emulator: GitHubEmulator, tmp_path: Path) -> tuple[GitHub, int]:
    return failed_job(github_emulator, tmp_path, LOG)


def blob_statuses(emu: GitHubEmulator) -> list[int]:
    return [r.status for r in emu.requests if r.server == "blob"]


def test_a_failing_log_host_is_tried_again(
    github_emulator: GitHubEmulator, job: tuple[GitHub, int], tmp_path: Path
) -> None:
    gh, job_id = job
    github_emulator.fail_blob(503, times=2)
    assert gh.job_log(job_id, tmp_path / "job.log").read_bytes() == LOG
    assert blob_statuses(github_emulator) == [503, 503, 200]


def test_a_slow_log_host_is_tried_again(
    github_emulator: GitHubEmulator, job: tuple[GitHub, int], tmp_path: Path
) -> None:
    gh, job_id = job
    github_emulator.delay("GET", r"^/_signed/", 3, server="blob")
    assert gh.job_log(job_id, tmp_path / "job.log").read_bytes() == LOG
    assert len(blob_statuses(github_emulator)) == 2


def test_a_log_host_that_keeps_failing_says_so_and_to_re_run(
    github_emulator: GitHubEmulator, job: tuple[GitHub, int], tmp_path: Path
) -> None:
    gh, job_id = job
    github_emulator.fail_blob(502, times=None)
    with pytest.raises(UserError) as raised:
        gh.job_log(job_id, tmp_path / "job.log")
    assert (
        f"GitHub's log storage did not answer for the log of job {job_id}: its last answer was HTTP 502 (3 tries)"
        in (raised.value.cause)
    )
    assert "Re-run this job" in raised.value.remedy
    assert blob_statuses(github_emulator) == [502, 502, 502]


def test_a_log_host_that_stays_slow_says_it_did_not_answer_in_time(
    github_emulator: GitHubEmulator, job: tuple[GitHub, int], tmp_path: Path
) -> None:
    gh, job_id = job
    github_emulator.delay("GET", r"^/_signed/", 3, server="blob", times=None)
    with pytest.raises(UserError) as raised:
        gh.job_log(job_id, tmp_path / "job.log")
    assert "no answer within 1s (3 tries)" in raised.value.cause


@pytest.mark.parametrize(
    ("status", "reason"), [(404, HaltReason.LOGS_UNAVAILABLE), (410, HaltReason.LOGS_EXPIRED)]
)
def test_a_missing_log_halts_at_once(
    github_emulator: GitHubEmulator,
    job: tuple[GitHub, int],
    tmp_path: Path,
    status: int,
    reason: HaltReason,
) -> None:
    gh, job_id = job
    github_emulator.fail_blob(status, times=None)
    with pytest.raises(Halt) as raised:
        gh.job_log(job_id, tmp_path / "job.log")
    assert raised.value.reason == reason
    assert blob_statuses(github_emulator) == [status]


def test_a_refusal_is_not_tried_again(
    github_emulator: GitHubEmulator, job: tuple[GitHub, int], tmp_path: Path
) -> None:
    gh, job_id = job
    github_emulator.fail_blob(403, times=None)
    with pytest.raises(UserError) as raised:
        gh.job_log(job_id, tmp_path / "job.log")
    assert "log storage answered 403" in raised.value.cause
    assert blob_statuses(github_emulator) == [403]


def test_no_log_host_at_all_is_tried_again_with_a_doubling_backoff(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    slept: list[float] = []
    with pytest.raises(UserError) as raised:
        logs.download(
            7,
            {"Location": f"http://127.0.0.1:{port}/_signed/x"},
            tmp_path / "job.log",
            timeout=1,
            retries=3,
            backoff=0.25,
            sleep=slept.append,
        )
    assert slept == [0.25, 0.5, 1.0]
    assert "the connection failed (ConnectionError) (4 tries)" in raised.value.cause


def test_a_log_of_many_chunks_is_streamed_to_the_file_whole_and_replaces_what_was_there(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    # 3.5 MiB: several `CHUNK_BYTES` blocks of `iter_content`, each written in order
    big = b"".join(b"2026-01-01T00:00:00Z line %07d of the build\n" % i for i in range(85_000))
    gh, job_id = failed_job(github_emulator, tmp_path, big)
    dest = tmp_path / "job.log"
    dest.write_bytes(b"a stale, longer file " * 200_000)
    github_emulator.fail_blob(503, times=1)  # the second try writes the file again from its start
    assert gh.job_log(job_id, dest) == dest
    assert len(big) > 3 * logs.CHUNK_BYTES
    assert dest.read_bytes().removeprefix(b"\xef\xbb\xbf") == big  # the emulator adds GitHub's BOM
