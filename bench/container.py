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

Needs root and podman (build the image first: ci/container/check or ci/container/build).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
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
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--image", default="localhost/ci-autofix:ci")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--summary-line", action="store_true", help="print one line: the entrypoint's median")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    ns = parser.parse_args(argv)
    if shutil.which("podman") is None:
        raise SystemExit("podman is not installed: run ci/container/setup-tools")
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
