"""Image size and start time of the action's image.

Start time is measured the way a user feels it: from launching the container exactly as the runner
does (`ci/container/run-like-runner`: mounts, file commands, `INPUT_*`) to the first request that
reaches a local "GitHub API" (an HTTP server on 127.0.0.1 that notes the arrival and answers 404),
with a `workflow_run` event of a failed run, so the action gets past its guards to its first API
call. Median of N runs, beside two baselines run the same way in the same image:

- `floor`: the interpreter alone sending one request (`python -c 'urllib.request.urlopen(...)'`),
  i.e. what container start, Python start and one HTTP request cost with nothing of ours;
- `eager`: the same after importing every runtime dependency eagerly (anthropic, PyGithub,
  pydantic-settings, unidiff): what the entrypoint would cost without its lazy imports.

    .venv/bin/python bench/container.py --image localhost/ci-autofix:ci --runs 7

`--image-cost` measures instead what the image costs every job that uses the action, as a user sees
it, side by side in one run:

- `build`: what `runs.image: Dockerfile` costs: `podman build` of the repository's Dockerfile into
  an empty podman store (its own `--root` in a temp dir: no layer cache). The base cannot be pulled
  here, so the local stand-in (`--base`, made by ci/container/make-base) is copied into that store
  first, not timed: a runner also pulls python:3.13-slim (about 45 MB compressed) on top of this;
- `pull`: what `image: docker://...@sha256:...` costs: the image pushed once (not timed: that is the
  release) to Debian's docker-registry started on 127.0.0.1 with its storage in the temp dir, then
  pulled by digest into another empty store, gzip-compressed as docker's default push makes it.

    .venv/bin/python bench/container.py --image localhost/ci-autofix:ci --image-cost

Needs root and podman (build the image first: ci/container/check or ci/container/build); the image
cost also needs docker-registry (ci/container/setup-tools). The machine's podman store is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_LIKE_RUNNER = ROOT / "ci" / "container" / "run-like-runner"
REQUEST = "import os, urllib.request as u\ntry: u.urlopen(os.environ['GITHUB_API_URL'] + '/rate_limit', timeout=5)\nexcept Exception: pass"
BASELINES = {
    "floor": REQUEST,
    "eager": "import anthropic, github, pydantic_settings, unidiff\n" + REQUEST,
}


class FirstRequest:
    """An HTTP server on 127.0.0.1 that records when its first request arrived."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.arrived = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _answer(self) -> None:
                if outer.first is None:
                    outer.first = time.monotonic()
                    outer.arrived.set()
                body = json.dumps(
                    {
                        "message": "Not Found",
                        "documentation_url": "https://docs.github.com/rest",
                        "status": "404",
                    }
                ).encode()
                self.send_response(404)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def failed_run_event(head_sha: str) -> dict[str, object]:
    repo = {"id": 7, "full_name": "acme/widgets", "default_branch": "main"}
    run = {
        "id": 4242,
        "name": "CI",
        "head_branch": "main",
        "head_sha": head_sha,
        "path": ".github/workflows/ci.yml",
        "run_attempt": 1,
        "event": "push",
        "status": "completed",
        "conclusion": "failure",
        "pull_requests": [],
        "head_repository": repo,
        "repository": repo,
    }
    return {"action": "completed", "workflow_run": run, "repository": repo}


def one_run(image: str, workspace: Path, event: Path, code: str | None) -> float:
    """Seconds from launching the container to the first API request (fails if none comes)."""
    server = FirstRequest()
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "ANTHROPIC_"))}
        env.update(
            {
                "GITHUB_API_URL": server.url + "/api/v3",
                "GITHUB_SERVER_URL": server.url,
                "GITHUB_REPOSITORY": "acme/widgets",
                "INPUT_GITHUB-TOKEN": "ghs_benchmarkToken0123456789",
            }
        )
        argv = [
            str(RUN_LIKE_RUNNER),
            "--quiet",
            "--timeout",
            "60",
            "--event",
            str(event),
            "--pass",
            "GITHUB_API_URL",
            "--pass",
            "GITHUB_SERVER_URL",
            "--pass",
            "GITHUB_REPOSITORY",
        ]
        if code is not None:
            argv += ["--entrypoint", "python"]
        argv += [image, str(workspace)]
        if code is not None:
            argv += ["-c", code]
        start = time.monotonic()
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
        if server.first is None:
            raise SystemExit(
                f"no API request arrived (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
            )
        return server.first - start
    finally:
        server.close()


def checkout(path: Path) -> tuple[Path, str]:
    """A one-commit checkout owned by the runner's uid (1001), as actions/checkout leaves it."""
    path.mkdir()
    (path / "README.md").write_text("widgets\n")
    git = ["git", "-C", str(path), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    for args in (["init", "-q", "-b", "main"], ["add", "README.md"], ["commit", "-qm", "init"]):
        subprocess.run(git + args, check=True)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    for item in [path, *path.rglob("*")]:
        os.lchown(item, 1001, 1001)
    return path, head


def image_size(image: str) -> int:
    out = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Size}}", image],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip())


def _podman(store: Path, *args: str) -> list[str]:
    """A podman command on a store of its own (never the machine's)."""
    return ["podman", "--root", str(store / "root"), "--runroot", str(store / "run"), *args]


def _timed(argv: list[str], what: str, timeout: int = 1800) -> float:
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{what} failed (exit {proc.returncode}): {' '.join(argv)}\n{proc.stderr[-3000:]}")
    return time.monotonic() - start


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalRegistry:
    """Debian's docker-registry on 127.0.0.1:<free port>, storage in `root`, stopped by its pid."""

    def __init__(self, root: Path) -> None:
        if shutil.which("docker-registry") is None:
            raise SystemExit("docker-registry is not installed: run ci/container/setup-tools")
        self.address = f"127.0.0.1:{_free_port()}"
        config = root / "registry.yml"
        config.write_text(
            "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n"
            f"storage:\n  filesystem:\n    rootdirectory: {root / 'registry'}\n"
            f"http:\n  addr: {self.address}\n  secret: ci-autofix-bench-local-only\n"
        )
        self._log = (root / "registry.log").open("w")
        self._proc = subprocess.Popen(
            ["docker-registry", "serve", str(config)], stdout=self._log, stderr=self._log
        )
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://{self.address}/v2/", timeout=2).close()
                return
            except OSError:
                time.sleep(0.1)
        self.close()
        raise SystemExit(
            f"docker-registry did not answer on {self.address} within 10 s: see {root / 'registry.log'}"
        )

    def close(self) -> None:
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._log.close()


def image_cost(image: str, base: str, runs: int) -> dict[str, list[float]]:
    """Seconds per job: building the Dockerfile with no layer cache vs pulling the pushed image by digest."""
    rows: dict[str, list[float]] = {"build": [], "pull": []}
    with tempfile.TemporaryDirectory(prefix="ci-autofix-image-cost-") as tmp:
        root = Path(tmp)
        registry = LocalRegistry(root)
        stores: list[Path] = []
        try:
            digest_file = root / "digest"
            _timed(
                [
                    "podman", "push", "-q", "--tls-verify=false", "--digestfile", str(digest_file),
                    image, f"docker://{registry.address}/ci-autofix:bench",
                ],
                "podman push to the local registry",
            )  # fmt: skip
            pulled = f"{registry.address}/ci-autofix@{digest_file.read_text().strip()}"
            base_tar = root / "base.tar"
            _timed(["podman", "save", "-q", "-o", str(base_tar), base], f"podman save {base}")
            for n in range(runs):  # interleaved, so drift on a shared machine hits both rows alike
                pull_store, build_store = root / f"pull-{n}", root / f"build-{n}"
                stores += [pull_store, build_store]
                rows["pull"].append(
                    _timed(_podman(pull_store, "pull", "-q", "--tls-verify=false", pulled), "podman pull")
                )
                _timed(_podman(build_store, "load", "-q", "-i", str(base_tar)), "podman load of the base")
                build = [
                    "build", "-q", "--pull=never", "--network", "host", "--build-arg", f"BASE={base}",
                    "-t", "localhost/ci-autofix:image-cost", "-f", str(ROOT / "Dockerfile"), str(ROOT),
                ]  # fmt: skip
                rows["build"].append(_timed(_podman(build_store, *build), "podman build"))
                for store in (pull_store, build_store):  # free the disk before the next pair
                    subprocess.run(_podman(store, "rmi", "-af"), capture_output=True, check=False)
        finally:
            registry.close()
            for store in stores:
                subprocess.run(_podman(store, "rmi", "-af"), capture_output=True, check=False)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default="localhost/ci-autofix:ci")
    parser.add_argument(
        "--runs", type=int, help="runs to take the median of (default 7; 1 with --image-cost)"
    )
    parser.add_argument("--summary-line", action="store_true", help="print one line: the entrypoint's median")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--image-cost",
        action="store_true",
        help="per-job image cost instead: Dockerfile build with no cache vs pull by digest (default 1 run)",
    )
    parser.add_argument(
        "--base", default="localhost/python-base:trixie", help="the base for --image-cost's build"
    )
    ns = parser.parse_args(argv)
    if shutil.which("podman") is None:
        raise SystemExit("podman is not installed: run ci/container/setup-tools")
    if ns.image_cost:
        runs = ns.runs or 1
        cost = image_cost(ns.image, ns.base, runs)
        if ns.json:
            print(json.dumps({"image": ns.image, "base": ns.base, "runs": runs, "samples_s": cost}, indent=2))
            return 0
        print(f"image {ns.image}: {image_size(ns.image) / 1e6:.0f} MB; per job, median of {runs}:")
        labels = {
            "build": "runs.image: Dockerfile (build, no cache)",
            "pull": "image: docker://...@sha256 (pull)",
        }
        for name, values in cost.items():
            spread = f"{min(values):.1f}-{max(values):.1f}"
            print(f"  {labels[name]:<42} {statistics.median(values):6.1f} s   (range {spread} s)")
        print("  (the build also pulls the base on a runner; here the local stand-in is loaded untimed)")
        return 0
    ns.runs = ns.runs or 7
    with tempfile.TemporaryDirectory(prefix="ci-autofix-bench-") as tmp:
        workspace, head = checkout(Path(tmp) / "workspace")
        event = Path(tmp) / "event.json"
        event.write_text(json.dumps(failed_run_event(head)))
        one_run(ns.image, workspace, event, None)  # warm the page cache; not counted
        rows: dict[str, list[float]] = {"entrypoint": [], **{name: [] for name in BASELINES}}
        for _ in range(ns.runs):  # interleaved, so drift on a shared machine hits all rows alike
            rows["entrypoint"].append(one_run(ns.image, workspace, event, None))
            for name, code in BASELINES.items():
                rows[name].append(one_run(ns.image, workspace, event, code))
    medians = {name: statistics.median(values) for name, values in rows.items()}
    size = image_size(ns.image)
    if ns.json:
        print(
            json.dumps(
                {
                    "image": ns.image,
                    "size_bytes": size,
                    "runs": ns.runs,
                    "median_s": medians,
                    "samples_s": rows,
                },
                indent=2,
            )
        )
    elif ns.summary_line:
        print(
            f"{medians['entrypoint']:.2f} s median of {ns.runs} (floor {medians['floor']:.2f} s, "
            f"eager imports {medians['eager']:.2f} s)"
        )
    else:
        print(f"image {ns.image}: {size / 1e6:.0f} MB")
        print(f"container launch to first GitHub API request, median of {ns.runs}:")
        labels = {
            "entrypoint": "ci-autofix entrypoint",
            "floor": "floor: python + one request",
            "eager": "eager: import all deps + request",
        }
        for name, median in medians.items():
            spread = f"{min(rows[name]):.2f}-{max(rows[name]):.2f}"
            print(f"  {labels[name]:<36} {median:5.2f} s   (range {spread} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
