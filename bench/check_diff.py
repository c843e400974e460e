"""Speed of `ci-autofix check-diff` on a generated diff of about 10,000 lines, beside `git diff --stat`.

Usage: python bench/check_diff.py [LINES] [RUNS]   (defaults: 10000 lines, 7 runs; medians are printed)

A scratch git repository (in a temporary directory, with its own HOME) gets Python, JS/TS, Go,
Rust and Java test and source files; a second commit edits about a third of their lines
(changed values, new assertions, strings with markers in them, comments), so the diff is the kind
the policy reads, not a trivial one. The diff is made as the ladder makes it
(`git diff -M --full-index`, fixed prefixes). Timed:
- `check_diff(diff)` in this process (what the ladder calls), and
- `python -m ci_autofix check-diff FILE` as a fresh process (the command line, Python start-up included),
- `git diff --stat -M --full-index BASE HEAD` on the same two commits.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ci_autofix.policy import check_diff

TEMPLATES = {
    "py": (
        "tests/test_mod{n}.py",
        "def test_case_{i}():\n    value = compute({i}, 'label {i}')\n    assert value == {v}  # expected\n\n",
    ),
    "ts": (
        "src/mod{n}.test.ts",
        'it("case {i}", () => {{\n  const value = compute({i}, "label {i}");\n  expect(value).toBe({v});\n}});\n\n',
    ),
    "go": (
        "pkg/mod{n}_test.go",
        'func TestCase{i}(t *testing.T) {{\n\tif got := Compute({i}, "label {i}"); got != {v} {{\n'
        '\t\tt.Errorf("got %d", got)\n\t}}\n}}\n\n',
    ),
    "rs": (
        "tests/mod{n}.rs",
        '#[test]\nfn case_{i}() {{\n    let value = compute({i}, "label {i}");\n    assert_eq!(value, {v});\n}}\n\n',
    ),
    "java": (
        "src/test/java/mod/Mod{n}Test.java",
        '    @Test\n    void case{i}() {{\n        int value = Calc.compute({i}, "label {i}");\n'
        "        assertEquals({v}, value);\n    }}\n\n",
    ),
}


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | {
        "HOME": str(root.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    identity = [
        "-c",
        "user.name=bench",
        "-c",
        "user.email=bench@example.invalid",
        "-c",
        "core.quotePath=false",
    ]
    return subprocess.run(
        ["git", *identity, *args], cwd=root, env=env, check=True, capture_output=True, text=True
    )


def build(root: Path, target_lines: int, seed: int = 11) -> tuple[str, str, str]:
    """Two commits whose diff has about `target_lines` lines; returns (base, head, diff)."""
    probe = _build(root.with_name("probe"), 10, seed)[2]
    per_file = probe.count("\n") / 10
    return _build(root, max(1, round(target_lines / per_file)), seed)


def _build(root: Path, files: int, seed: int) -> tuple[str, str, str]:
    rng = random.Random(seed)
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    cases_per_file = 60
    versions: list[dict[str, str]] = [{}, {}]
    for n in range(files):
        kind = list(TEMPLATES)[n % len(TEMPLATES)]
        path, template = TEMPLATES[kind]
        for version in (0, 1):
            rng.seed(seed * 1000 + n)  # the same choices for both versions, but for the edits
            body = []
            for i in range(cases_per_file):
                v = i * 7
                if version == 1 and rng.random() < 0.5:
                    v += 1
                body.append(template.format(i=i, v=v))
            versions[version][path.format(n=n)] = "".join(body)
    shas = []
    for version in versions:
        for rel, text in version.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "v")
        shas.append(_git(root, "rev-parse", "HEAD").stdout.strip())
    diff = _git(
        root,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "-M",
        "--full-index",
        shas[0],
        shas[1],
    ).stdout
    return shas[0], shas[1], diff


def median_seconds(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    with tempfile.TemporaryDirectory(prefix="bench-check-diff-") as tmp:
        root = Path(tmp) / "repo"
        base, head, diff = build(root, target)
        diff_file = Path(tmp) / "fix.diff"
        diff_file.write_text(diff)
        lines = diff.count("\n")
        verdict = check_diff(diff, max_changed_lines=10**9, max_files=10**6)
        in_process = median_seconds(lambda: check_diff(diff, max_changed_lines=10**9, max_files=10**6), runs)
        command = [sys.executable, "-m", "ci_autofix", "check-diff", str(diff_file)]
        cli = median_seconds(lambda: subprocess.run(command, capture_output=True, check=False), runs)
        startup = median_seconds(
            lambda: subprocess.run([sys.executable, "-c", "import ci_autofix.policy"], check=True), runs
        )
        stat = median_seconds(lambda: _git(root, "diff", "--stat", "-M", "--full-index", base, head), runs)
        print(f"diff: {lines} lines, {len(diff.encode()) / 1000:.0f} kB, {diff.count('diff --git ')} files")
        print(f"verdict: {verdict.status}, {len(verdict.findings)} findings ({', '.join(verdict.codes)})")
        print(f"median of {runs} runs:")
        print(f"  check_diff(diff), in process        {in_process * 1000:8.0f} ms")
        print(
            f"  ci-autofix check-diff FILE, process {cli * 1000:8.0f} ms (Python start-up and imports: {startup * 1000:.0f} ms)"
        )
        print(f"  git diff --stat (same two commits)  {stat * 1000:8.0f} ms")
        print(f"reproduce: python bench/check_diff.py {target} {runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
