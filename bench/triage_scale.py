"""Triage of a very large GitHub job log beside the simplest tools, each in a fresh process, in one run.

Usage: .venv/bin/python bench/triage_scale.py [MEGABYTES] [--base REV] [--runs N]

Writes a generated GitHub job log of MEGABYTES (default 300) to a temporary directory: a runner
header, one long build step of timestamped output (with a sprinkling of warnings and
`error`-looking words), then a failing pytest step at the end. Then it runs, one after the
other, each as a fresh process so that its peak RSS is its own:

- `ci-autofix triage FILE` from this checkout;
- the same command from REV (default: the last commit before triage streamed the log), extracted
  with `git archive` into the temporary directory: the baseline, measured in the same run;
- a bare Python line scan of the file (`for line in open(path, "rb")`);
- `grep -c error FILE` and `tail -c 24000 FILE`.

It prints a Markdown table: wall-clock and CPU seconds (best of N runs; CPU time is the steadier
figure on a shared machine), each as a multiple of the line scan's, and peak RSS; then whether the
two triage excerpts are byte-identical.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from triage_throughput import FAILURE, HEADER, NOISY, WORDS  # beside this script: the same build output

ROOT = Path(__file__).resolve().parent.parent
BASE = "498e9d6"  # main before triage streamed the log (issue 17, part 4)
LINE_SCAN = "import sys\nn = 0\nfor line in open(sys.argv[1], 'rb'):\n    n += 1\nprint(n)\n"


def generate(path: Path, megabytes: float, seed: int = 7) -> int:
    """Write the log to `path` in batches (never whole in memory); its size in bytes."""
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    size, n = 0, 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write("\n".join(HEADER) + "\n")
        while size < target:
            batch = []
            for _ in range(10_000):
                n += 1
                body = (
                    rng.choice(NOISY) if n % 997 == 0 else " ".join(rng.choices(WORDS, k=rng.randint(4, 14)))
                )
                batch.append(
                    f"2026-08-14T06:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}.{n % 10_000_000:07d}Z {body}\n"
                )
            text = "".join(batch)
            out.write(text)
            size += len(text)
        out.write("\n".join(FAILURE))
    return path.stat().st_size


def measure(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int, bytes]:
    """Wall-clock seconds, CPU seconds (user + system), peak RSS in KiB (of that process alone)
    and stdout of one run."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"{argv[:3]} exited with {proc.returncode}")
        out.seek(0)
        return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out.read()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("megabytes", nargs="?", type=float, default=300.0)
    parser.add_argument("--base", default=BASE, help=f"the baseline's revision (default {BASE})")
    parser.add_argument("--runs", type=int, default=3, help="runs of each command; the best time is shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="triage-scale-") as tmp:
        root = Path(tmp)
        log = root / "job.log"
        size = generate(log, args.megabytes)
        base = root / "base"
        base.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.base, "src"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        triage = [sys.executable, "-m", "ci_autofix.cli.triage", str(log)]
        commands: list[tuple[str, list[str], dict[str, str] | None]] = [
            ("ci-autofix triage (this checkout)", triage, {**os.environ, "PYTHONPATH": str(ROOT / "src")}),
            (
                f"ci-autofix triage at {args.base} (baseline)",
                triage,
                {**os.environ, "PYTHONPATH": str(base / "src")},
            ),
            ("bare Python line scan", [sys.executable, "-c", LINE_SCAN, str(log)], None),
            ("grep -c error", ["grep", "-c", "error", str(log)], None),
            ("tail -c 24000", ["tail", "-c", "24000", str(log)], None),
        ]
        results: dict[str, tuple[float, float, int, bytes]] = {}
        for name, argv, env in commands:
            runs = [measure(argv, env) for _ in range(max(1, args.runs))]
            results[name] = (
                min(r[0] for r in runs),
                min(r[1] for r in runs),
                max(r[2] for r in runs),
                runs[0][3],
            )
        scan, scan_cpu = results["bare Python line scan"][:2]
        print(
            f"log: {size / 1_000_000:.0f} MB generated GitHub job log, failure at the end; best of {args.runs} runs"
        )
        print(
            "| command | wall s | x line scan | CPU s | x line scan | peak RSS MiB |\n|---|---|---|---|---|---|"
        )
        for name, (seconds, cpu, rss, _) in results.items():
            print(
                f"| {name} | {seconds:.2f} | {seconds / scan:.1f} | {cpu:.2f} | {cpu / scan_cpu:.1f} | {rss / 1024:.0f} |"
            )
        ours, baseline = (results[name][3] for name, _, _ in commands[:2])
        print(
            f"excerpts of this checkout and of the baseline byte-identical: {'yes' if ours == baseline else 'NO'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
