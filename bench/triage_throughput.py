"""Throughput of `ci-autofix triage` on a generated GitHub log (default 50 MB), with peak RSS.

Usage: python bench/triage_throughput.py [MEGABYTES]   (the log is written to a temporary file and
triaged in a fresh process, so the peak RSS reported is that of the triage)
The log is generated in memory: a runner header, a long build step of ordinary output (with a
sprinkling of warnings and `error`-looking words), then a failing pytest step.
"""

from __future__ import annotations

import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ci_autofix.triage import diagnose

WORDS = [
    "compiling",
    "building",
    "linking",
    "module",
    "package",
    "resolved",
    "downloaded",
    "installing",
    "checking",
    "target",
    "src",
    "lib",
    "main",
    "test",
    "cache",
    "hit",
    "miss",
    "step",
    "done",
    "ok",
    "info",
    "debug",
    "version",
    "using",
    "from",
    "with",
    "for",
    "the",
    "a",
    "to",
]
NOISY = (
    "warning: unused variable `x`",
    "npm WARN deprecated request@2.88.2: request has been deprecated",
    "checking for error.h... yes",
    "Downloading https://files.example.org/pkg-1.0.tar.gz (120 kB)",
)


HEADER = (
    "\ufeff2026-08-14T05:58:30.1000000Z Current runner version: '2.331.0'",
    "2026-08-14T05:58:31.0000000Z ##[group]Run make build",
    "2026-08-14T05:58:31.0010000Z \x1b[36;1mmake build\x1b[0m",
    "2026-08-14T05:58:31.0020000Z ##[endgroup]",
)
FAILURE = (
    "2026-08-14T07:00:00.0000000Z ##[group]Run python -m pytest -q",
    "2026-08-14T07:00:00.0010000Z \x1b[36;1mpython -m pytest -q\x1b[0m",
    "2026-08-14T07:00:00.0020000Z ##[endgroup]",
    "2026-08-14T07:00:01.0000000Z =================================== FAILURES ===================================",
    "2026-08-14T07:00:01.0010000Z ________________________________ test_add ______________________________________",
    "2026-08-14T07:00:01.0020000Z >       assert add(1, 2) == 4",
    "2026-08-14T07:00:01.0030000Z E       assert 3 == 4",
    "2026-08-14T07:00:01.0040000Z tests/test_calc.py:5: AssertionError",
    "2026-08-14T07:00:01.0050000Z FAILED tests/test_calc.py::test_add - assert 3 == 4",
    "2026-08-14T07:00:01.0060000Z ##[error]Process completed with exit code 1.",
)


def generate(megabytes: float, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    out = list(HEADER)
    size, target, n = 0, int(megabytes * 1_000_000), 0
    while size < target:
        n += 1
        if n % 997 == 0:
            body = rng.choice(NOISY)
        else:
            body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 14)))
        line = f"2026-08-14T06:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}.{n % 10_000_000:07d}Z {body}"
        out.append(line)
        size += len(line) + 1
    out += FAILURE
    return "\n".join(out).encode()


def measure(path: Path) -> None:
    """Time `diagnose` of the log file (read in chunks, as the CLI and propose read it), report
    this process's peak RSS."""
    start = time.perf_counter()
    diagnosis = diagnose(path)
    seconds = time.perf_counter() - start
    peak = _own_peak_kib()
    mb = path.stat().st_size / 1_000_000
    with path.open("rb") as f:
        lines = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b"")) + 1
    print(f"log: {mb:.1f} MB, {lines} lines")
    print(f"diagnose: {seconds:.2f} s = {mb / seconds:.1f} MB/s")
    print(f"peak RSS of the process: {peak / 1024:.0f} MiB")
    print(f"failures: {[(f.tool, f.test_id) for f in diagnosis.failures]}, category: {diagnosis.category}")
    print(f"excerpt: {diagnosis.excerpt_tokens} tokens (budget {diagnosis.budget_tokens})")


def _own_peak_kib() -> int:
    """This process's peak RSS in KiB: its own VmHWM where Linux has it (`ru_maxrss` would start at
    the RSS of the parent that forked it, the generator holding the whole log)."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--measure":
        measure(Path(sys.argv[2]))
        return 0
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 50.0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generated.log"
        path.write_bytes(generate(megabytes))
        # a fresh process, so that its peak RSS is the triage's and not the generator's
        return subprocess.run([sys.executable, __file__, "--measure", str(path)], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
