"""Provisioning time per runtime against the test mirror (real archives on 127.0.0.1, built from this
machine's node, golang-go and rustup toolchain by `tests/testing/toolchain_mirror.py`).

    .venv/bin/python bench/toolchains.py [runs]      # default 3

For each runtime: a cold install (a fresh toolchain directory: index, checksums, download, SHA-256,
extraction, modes) and a warm one (the same directory again: the index is read, the archive is not),
wall seconds (best and worst of `runs`) and our process's CPU seconds (best; the mirror's thread
is in the same process, serving costs little). The archive sizes are printed beside them: the publishers'
real archives are larger (Node ~30 MB, Go ~70 MB, Rust's five components ~130 MB), so over the
internet the download dominates; this measures our side of it.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ci_autofix.toolchains.declared import Declarations, Declared
from ci_autofix.toolchains.provision import provision_declared
from tests.testing.toolchain_mirror import MirrorServer, available, build


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    missing = available()
    if missing:
        sys.exit(f"cannot build the mirror here: {missing}")
    built = build()
    specs = {"node": built.node, "go": built.go, "rust": built.rust}
    print(
        f"{'runtime':8} {'version':9} {'archive MB':>10} {'cold s (best-worst)':>20} {'cold CPU s':>10} {'warm s':>8}"
    )
    with MirrorServer(built.tree).running() as mirror:
        for runtime, version in specs.items():
            wanted = Declarations((Declared(runtime, version, "bench"),))
            cold, cpu, warm, size = [], [], [], 0
            for _ in range(runs):
                dest = Path(tempfile.mkdtemp(prefix="ci-autofix-bench-toolchains-")) / "tc"
                try:
                    started, started_cpu = time.monotonic(), time.process_time()
                    first = provision_declared(wanted, dest=dest, mirror=mirror.url)
                    cold.append(time.monotonic() - started)
                    cpu.append(time.process_time() - started_cpu)
                    assert not first.failures, first.failures
                    started = time.monotonic()
                    again = provision_declared(wanted, dest=dest, mirror=mirror.url)
                    warm.append(time.monotonic() - started)
                    assert again.runtimes[0].installed.cached
                    size = sum(
                        len(mirror.read(url.removeprefix(mirror.url)))
                        for url in first.runtimes[0].installed.urls
                    )
                finally:
                    shutil.rmtree(dest.parent, ignore_errors=True)
            print(
                f"{runtime:8} {version:9} {size / 1e6:10.1f} "
                f"{f'{min(cold):.2f}-{max(cold):.2f}':>20} {min(cpu):10.2f} {min(warm):8.2f}"
            )


if __name__ == "__main__":
    main()
