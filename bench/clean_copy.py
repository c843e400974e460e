"""Cost of a clean tree: `Workarea.clean_copy(tree)` beside exporting the same tree with plain git.

Usage: python bench/clean_copy.py [FILES] [RUNS]   (defaults: 3000 files, 7 runs; medians are printed)

A scratch repository (in a temporary directory, with its own HOME) gets FILES source and test
files of about 2 KB in nested directories. A work area is made for its HEAD, as the ladder makes
one, and then timed, each over RUNS runs:
- `clean_copy(tree)`: what every judged run now pays (the previous copy thrown away, the tree
  checked out with our private git directory, the copy's own one-commit `.git`, a fresh HOME and
  TMPDIR, all handed to the sandbox uid when we are root);
- baseline: `git archive HEAD | tar -x` into an empty directory (a tree exported, nothing else);
- baseline: `cp -a` of the work copy (what copying the agent's tree would cost).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ci_autofix.ladder.workarea import workarea


def _git(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
        "HOME": str(root.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    identity = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    done = subprocess.run(
        ["git", *identity, *args], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def _repository(root: Path, files: int) -> str:
    body = "".join(
        f"def function_{i}(value):\n    return value * {i}  # a line of code\n\n" for i in range(30)
    )
    for n in range(files):
        folder = root / ("tests" if n % 4 == 0 else "src") / f"pkg{n % 40}"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"test_mod{n}.py" if n % 4 == 0 else f"mod{n}.py"
        (folder / name).write_text(body, encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "bench")
    return _git(root, "rev-parse", "HEAD")


def _median(runs: int, action: Callable[[], object], reset: Callable[[], object] = lambda: None) -> float:
    times = []
    for _ in range(runs):
        reset()
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    with tempfile.TemporaryDirectory(prefix="bench-clean-copy-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        head = _repository(repo, files)
        export = Path(tmp) / "export"
        copied = Path(tmp) / "copied"
        with workarea(repo, head) as area:
            tree = area.git.tree_of(head)
            clean = _median(runs, lambda: area.clean_copy(tree, protected=(), timeout=60))

            def fresh(path: Path) -> None:
                shutil.rmtree(path, ignore_errors=True)

            def archive() -> None:
                export.mkdir()
                git_archive = subprocess.Popen(
                    ["git", "-C", str(repo), "archive", head], stdout=subprocess.PIPE
                )
                subprocess.run(["tar", "-x", "-C", str(export)], stdin=git_archive.stdout, check=True)
                git_archive.wait()

            exported = _median(runs, archive, lambda: fresh(export))
            cp = _median(
                runs,
                lambda: subprocess.run(["cp", "-a", str(area.work), str(copied)], check=True),
                lambda: fresh(copied),
            )
            size = sum(
                p.stat().st_size for p in area.work.rglob("*") if p.is_file() and ".git" not in p.parts
            )
    print(
        f"clean copy of a {files}-file tree ({size / 1e6:.1f} MB), median of {runs} runs, uid {os.geteuid()}:"
    )
    print(f"  Workarea.clean_copy(tree)        {clean * 1000:8.1f} ms")
    print(f"  git archive HEAD | tar -x        {exported * 1000:8.1f} ms   (baseline: a tree exported)")
    print(f"  cp -a of the work copy           {cp * 1000:8.1f} ms   (baseline: the agent's tree copied)")


if __name__ == "__main__":
    main()
