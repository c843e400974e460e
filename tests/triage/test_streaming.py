"""Triage reads a log in chunks, never whole: the chunks' lines and anchors are those of the whole
text wherever the cuts fall, and peak memory does not grow with the log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ci_autofix.triage import diagnose, logview
from ci_autofix.triage.logfile import LogFile, normal_bytes
from ci_autofix.triage.logview import LogView
from ci_autofix.triage.normalize import to_text

# pieces that make chunk and block cuts interesting: every line break, NUL between CR and LF,
# byte-order marks, invalid and multi-byte UTF-8, prompts and anchor words at line starts
PIECES = st.sampled_from(
    [
        b"\n",
        b"\r",
        b"\r\n",
        b"\r\x00\n",
        b"\x00",
        b"\xef\xbb\xbf",
        b"\xc3",
        b"\xc3\xa9",
        b"\xe2\x82",
        b"$ make test",
        b"> npm test",
        b"+ ./run.sh",
        b"Error: boom",
        b"FAILED tests/a.py::t",
        b"##[group]Run pytest",
        b"##[error]Process completed with exit code 1.",
        b"\x1b[0K$ ls",
        b"src/a.py:1:2: E1",
        b"ordinary build output",
        b"  ",
        b"FAIL",
        b"eRRor",
        b"##[group]Run make",
    ]
)


def whole_lines(data: bytes) -> list[str]:
    lines = to_text(data).split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=60), st.integers(1, 40), st.integers(1, 40))
def test_small_chunks_and_blocks_read_the_same_lines_and_anchors_as_the_whole_text(
    pieces: list[bytes], chunk: int, block: int
) -> None:
    data = b"".join(pieces)
    whole = LogView(data, chunk_bytes=1 << 20, block_bytes=1 << 20)  # one chunk: the whole text
    cut = LogView(data, chunk_bytes=chunk, block_bytes=block)
    assert [whole.raw(i) for i in range(len(whole))] == whole_lines(data)
    assert [cut.raw(i) for i in range(len(cut))] == whole_lines(data)
    assert cut.anchors == whole.anchors
    assert [(s.header, s.end, s.exit_line) for s in cut.steps] == [
        (s.header, s.end, s.exit_line) for s in whole.steps
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=60), st.integers(1, 40), st.integers(1, 40))
# one chunk cut into several blocks, hits in the later ones (a line counted from the chunk's start)
@example([b"a\n", b"b\n", b"c\n", b"Error: boom", b"\n", b"d\n", b"FAIL", b"\n"], 40, 4)
# two hits in one block, a line break before each (the second counted from the first, not the block)
@example([b"a\n", b"Error: boom\n", b"FAIL\n"], 40, 40)
def test_the_cheap_search_puts_each_hit_on_its_line_wherever_the_chunks_and_blocks_are_cut(
    pieces: list[bytes], chunk: int, block: int
) -> None:
    data = b"".join(pieces)
    whole = normal_bytes(data, True).lower()  # what every chunk's lowered bytes add up to
    cheap = logview._index(LogFile(data, block), chunk)
    for word in logview.CHEAP_WORDS:
        expected = []
        if word != "##[error]":  # found through `error` (see `_Cheap`)
            needle = word.encode()
            at = whole.find(needle)
            while at != -1:
                expected.append(whole.count(b"\n", 0, at))
                at = whole.find(needle, at + len(needle))
        assert list(cheap.hits[word]) == expected, word


def test_a_log_file_gives_the_diagnosis_its_bytes_give(tmp_path: Path) -> None:
    log = (Path(__file__).parent / "fixtures" / "github-synthetic.txt").read_bytes()
    path = tmp_path / "job.log"
    path.write_bytes(log)
    by_path, by_bytes = diagnose(path), diagnose(log)
    assert by_path.excerpt and by_path.failures
    assert by_path.to_json() == by_bytes.to_json()


BUILD = "".join(
    f"2026-08-14T06:00:{i % 60:02d}.{i:07d}Z compiling module {i} of the package with the cache\n"
    if i % 997
    else f"2026-08-14T06:00:{i % 60:02d}.{i:07d}Z checking for error.h... yes\n"
    for i in range(1, 12_000)
).encode()  # about 1 MB of build output, an `error`-looking line now and then
FAILURE = (
    b"2026-08-14T07:00:00.0000000Z ##[group]Run python -m pytest -q\n"
    b"2026-08-14T07:00:00.0010000Z \x1b[36;1mpython -m pytest -q\x1b[0m\n"
    b"2026-08-14T07:00:00.0020000Z ##[endgroup]\n"
    b"2026-08-14T07:00:01.0020000Z >       assert add(1, 2) == 4\n"
    b"2026-08-14T07:00:01.0030000Z E       assert 3 == 4\n"
    b"2026-08-14T07:00:01.0040000Z tests/test_calc.py:5: AssertionError\n"
    b"2026-08-14T07:00:01.0050000Z FAILED tests/test_calc.py::test_add - assert 3 == 4\n"
    b"2026-08-14T07:00:01.0060000Z ##[error]Process completed with exit code 1.\n"
)
# The child reports its own high-water mark (VmHWM): `ru_maxrss` of a child would start at the
# RSS of the process that forked it (Linux keeps that across exec), here the test runner's.
TRIAGE = (
    "import sys\nfrom pathlib import Path\nfrom ci_autofix.triage import diagnose\n"
    "d = diagnose(Path(sys.argv[1]))\nprint(d.failures[0].test_id)\n"
    "print(next(line for line in open('/proc/self/status') if line.startswith('VmHWM:')))\n"
)


def peak_rss_mib(log: Path, home: Path) -> float:
    """The peak RSS of a fresh process that triages `log` (its own VmHWM, in MiB)."""
    if not Path("/proc/self/status").is_file():
        pytest.skip("needs /proc/self/status (Linux) to read a process's own peak RSS")
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run([sys.executable, "-c", TRIAGE, str(log)], capture_output=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    found, hwm = done.stdout.decode().splitlines()[:2]
    assert found.endswith("::test_add")  # the failure at the very end was found
    return int(hwm.split()[1]) / 1024  # "VmHWM:   23456 kB"


def write_log(path: Path, megabytes: int) -> Path:
    with path.open("wb") as out:
        out.write(b"\xef\xbb\xbf2026-08-14T05:58:31.0000000Z ##[group]Run make build\n")
        for _ in range(megabytes):
            out.write(BUILD)
        out.write(FAILURE)
    return path


def test_peak_memory_stays_flat_as_the_log_grows_sixfold(tmp_path: Path) -> None:
    small = peak_rss_mib(write_log(tmp_path / "small.log", 30), tmp_path)
    (tmp_path / "small.log").unlink()
    large = peak_rss_mib(write_log(tmp_path / "large.log", 180), tmp_path)
    # reading the 180 MB log whole would add hundreds of MiB; streaming adds the index and anchors
    assert large - small < 8, (small, large)
    print(f"peak RSS: {small:.1f} MiB (30 MB log), {large:.1f} MiB (180 MB log)")
    assert large < 150, large
