"""Provisioning time per runtime against the test mirror (real archives on 127.0.0.1, built from this
machine's node, golang-go and rustup toolchain by `tests/testing/toolchain_mirror.py`).

    .venv/bin/python bench/toolchains.py [runs]                    # default 3, in this process
    .venv/bin/python bench/toolchains.py [runs] --image IMAGE      # inside the action's image

For each runtime: a cold install (a fresh toolchain directory: index, checksums, download, SHA-256,
extraction, modes) and a warm one (the same directory again: the index is read, the archive is not),
wall seconds (best and worst of `runs`) and the installing process's CPU seconds (best; in-process,
the mirror's thread is in the same process, serving costs little). The archive sizes are printed
beside them: the publishers' real archives are larger (Node ~30 MB, Go ~70 MB, Rust's five
components ~130 MB), so over the internet the download dominates; this measures our side of it.

With `--image`, the same `provision_declared` runs in the image (`podman run --network host`, as root
like the runner runs the action; the mirror is served from here on 127.0.0.1), one container per
runtime, its toolchain directory in the container's own /tmp; the image's size is printed too.
Needs root and podman, and an image (ci/container/build).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ci_autofix.toolchains.declared import Declarations, Declared
from ci_autofix.toolchains.provision import provision_declared
from tests.testing.toolchain_mirror import MirrorServer, available, build

# Runs in the image: `python -c MEASURE runtime version mirror runs`; prints one JSON object.
MEASURE = """
import json, shutil, sys, tempfile, time
from pathlib import Path
from ci_autofix.toolchains.declared import Declarations, Declared
from ci_autofix.toolchains.provision import provision_declared

runtime, version, mirror, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
wanted = Declarations((Declared(runtime, version, "bench"),))
cold, cpu, warm, urls = [], [], [], []
for _ in range(runs):
    dest = Path(tempfile.mkdtemp(prefix="bench-")) / "tc"
    started, started_cpu = time.monotonic(), time.process_time()
    first = provision_declared(wanted, dest=dest, mirror=mirror)
    cold.append(time.monotonic() - started)
    cpu.append(time.process_time() - started_cpu)
    assert not first.failures, [f.describe() for f in first.failures]
    started = time.monotonic()
    again = provision_declared(wanted, dest=dest, mirror=mirror)
    warm.append(time.monotonic() - started)
    assert again.runtimes[0].installed.cached
    urls = list(first.runtimes[0].installed.urls)
    shutil.rmtree(dest.parent)
print(json.dumps({"cold": cold, "cpu": cpu, "warm": warm, "urls": urls}))
"""


def in_process(
    runtime: str, version: str, mirror: MirrorServer, runs: int
) -> dict[str, list[float] | list[str]]:
    wanted = Declarations((Declared(runtime, version, "bench"),))
    cold: list[float] = []
    cpu: list[float] = []
    warm: list[float] = []
    urls: list[str] = []
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
            urls = list(first.runtimes[0].installed.urls)
        finally:
            shutil.rmtree(dest.parent, ignore_errors=True)
    return {"cold": cold, "cpu": cpu, "warm": warm, "urls": urls}


def in_image(image: str, runtime: str, version: str, mirror: MirrorServer, runs: int) -> dict[str, list[float] | list[str]]:  # fmt: skip
    argv = ["podman", "run", "--rm", "--network", "host", "--entrypoint", "python", image]
    ran = subprocess.run(
        [*argv, "-c", MEASURE, runtime, version, mirror.url, str(runs)],
        capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip
    if ran.returncode != 0:
        sys.exit(f"provisioning {runtime} {version} in {image} failed:\n{ran.stderr[-3000:]}")
    result: dict[str, list[float] | list[str]] = json.loads(ran.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", type=int, default=3)
    parser.add_argument("--image", help="measure inside this image (podman, as root)")
    args = parser.parse_args()
    missing = available()
    if missing:
        sys.exit(f"cannot build the mirror here: {missing}")
    built = build(Path(tempfile.gettempdir()))  # kept there between runs, keyed by its sources
    specs = {"node": built.node, "go": built.go, "rust": built.rust}
    if args.image:
        size = subprocess.run(
            ["podman", "image", "inspect", "--format", "{{.Size}}", args.image],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        print(f"image {args.image}: {int(size) / 1e6:.0f} MB ({size} bytes)")
    print(
        f"{'runtime':8} {'version':9} {'archive MB':>10} {'cold s (best-worst)':>20} {'cold CPU s':>10} {'warm s':>8}"
    )
    with MirrorServer(built.tree).running() as mirror:
        for runtime, version in specs.items():
            if args.image:
                got = in_image(args.image, runtime, version, mirror, args.runs)
            else:
                got = in_process(runtime, version, mirror, args.runs)
            cold, cpu, warm = (list(map(float, got[k])) for k in ("cold", "cpu", "warm"))
            size = sum(len(mirror.read(str(url).removeprefix(mirror.url))) for url in got["urls"])
            print(
                f"{runtime:8} {version:9} {size / 1e6:10.1f} "
                f"{f'{min(cold):.2f}-{max(cold):.2f}':>20} {min(cpu):10.2f} {min(warm):8.2f}"
            )


if __name__ == "__main__":
    main()
