#!/usr/bin/env python3
"""Cross-validation by repository and a rule-family ablation for `ci-autofix triage`.

Usage:
    .venv/bin/python bench/triage_cv.py CORPUS_DIR [--folds K] [--jobs J] [--max-tokens N]
        [--families all|none|NAME,NAME] [--per-case OUT.jsonl]

The rules are written by hand, not trained, so cross-validation cannot fit anything on k-1 folds.
What it can show is whether a rule's gain is spread over repositories or sits in the few it was
written for. The cases are grouped by repository (truth.json's `repo`; for CiDiff, which has no such
field, the case name without its build number: `jodatime_1837` -> `jodatime`), and the repositories
are dealt into K folds, dataset by dataset, so that no repository is in two folds. Printed:

1. recall per fold with the product's rule set (`engine.RULES`), the mean and the spread (standard
   deviation of the fold figures), and the same for the GitHub Actions logs only;
2. the ablation: for each rule family, the recall lost per fold when that family alone is switched
   off (a reduced `Rules` passed to the engine: the same code, less data), with the number of
   repositories whose recall it raises and lowers. A family whose gain sits in one fold or one
   repository is a rule tuned to what it was written for, and the held-out split will not see it.

Each case is scored as the corpus scorer (`score.py`, imported as it is) scores the CLI's stdout:
a labelled chunk counts only when every one of its non-blank lines is in the excerpt.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import re
import statistics
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

from ci_autofix.triage import engine
from ci_autofix.triage.jobs import DEFAULT_MAX_TOKENS, MIN_TOKENS
from ci_autofix.triage.logview import LogView
from ci_autofix.triage.normalize import without_marker
from ci_autofix.triage.parsers import FAMILIES

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "dev"
BUILD_NUMBER_RE = re.compile(r"_\d+$")


def _without_parsers(family: str) -> Callable[[engine.Rules], engine.Rules]:
    dropped = dict(FAMILIES)[family]
    return lambda r: dataclasses.replace(r, parsers=tuple(p for p in r.parsers if p not in dropped))


def _without(field: str, name: str) -> Callable[[engine.Rules], engine.Rules]:
    def reduce(r: engine.Rules) -> engine.Rules:
        if field == "strong":
            return dataclasses.replace(r, strong=tuple(p for p in r.strong if p[0] != name))
        return dataclasses.replace(r, noise=tuple(p for p in r.noise if p[0] != name))

    return reduce


def ablations() -> dict[str, Callable[[engine.Rules], engine.Rules]]:
    """Every rule family by name, with the function that switches it off."""
    table: dict[str, Callable[[engine.Rules], engine.Rules]] = {
        f"parsers:{name}": _without_parsers(name) for name, _ in FAMILIES
    }
    table |= {f"error-line:{name}": _without("strong", name) for name, _ in engine.STRONG}
    table |= {f"noise:{name}": _without("noise", name) for name, _ in engine.NOISE}
    table["werror-warnings"] = lambda r: dataclasses.replace(r, werror=None)
    table["frames-continue-paragraph"] = lambda r: dataclasses.replace(r, frame=None)
    table["failed-step-summary"] = lambda r: dataclasses.replace(r, summary_lines=0)
    table["error-annotations"] = lambda r: dataclasses.replace(r, annotation=None)
    table["failed-step-echo"] = lambda r: dataclasses.replace(r, echo=None)
    return table


def _scorer(corpus: Path) -> ModuleType:
    for folder in (corpus, *corpus.parents):
        path = folder / "score.py"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("corpus_score", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    sys.exit(f"bench/triage_cv.py: no score.py at or above {corpus}")


def repository(case: Path, truth: dict[str, Any]) -> str:
    """The case's repository: truth.json's `repo`, else the case name without its build number."""
    repo = truth.get("repo")
    return str(repo) if repo else BUILD_NUMBER_RE.sub("", case.name)


def is_github(truth: dict[str, Any]) -> bool:
    return "github-actions" in str(truth.get("log_format", ""))


@dataclasses.dataclass
class Case:
    path: Path
    dataset: str
    repo: str
    github: bool
    fold: int = -1


def load_cases(corpus: Path) -> list[Case]:
    cases = []
    for truth_path in sorted(corpus.rglob("truth.json")):
        folder = truth_path.parent
        if not (folder / "log.txt").is_file():
            continue
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        dataset = folder.relative_to(corpus).parts[0]
        cases.append(Case(folder, dataset, repository(folder, truth), is_github(truth)))
    return cases


def assign_folds(cases: list[Case], k: int) -> None:
    """Repositories dealt into `k` folds, dataset by dataset (largest repository first, to the fold
    with the fewest cases of that dataset): every fold holds a share of every dataset, and no
    repository is in two folds."""
    repo_fold: dict[str, int] = {}
    total = [0] * k
    for dataset in sorted({c.dataset for c in cases}):
        sizes: dict[str, int] = {}
        for c in cases:
            if c.dataset == dataset:
                sizes[c.repo] = sizes.get(c.repo, 0) + 1
        here = [0] * k
        for repo, size in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])):
            if repo not in repo_fold:
                repo_fold[repo] = min(range(k), key=lambda f: (here[f], total[f], f))
            here[repo_fold[repo]] += size
            total[repo_fold[repo]] += size
    for c in cases:
        c.fold = repo_fold[c.repo]


_SCORE: ModuleType | None = None


def _init(score_path: str) -> None:
    global _SCORE
    _SCORE = _scorer(Path(score_path))


def _can_matter(name: str, log: bytes) -> bool:
    """False only when switching `name` off cannot change this log's excerpt: none of its patterns
    matches a line it would be tried on (the shortcut that keeps the ablation to minutes)."""
    kind, _, part = name.partition(":")
    if kind not in ("parsers", "error-line", "noise", "werror-warnings", "error-annotations"):
        return True
    view = LogView(log)
    if kind == "parsers":
        lines = [without_marker(view.clean(i)) for i in engine._examined(view)]
        return any(p.trigger.search(line) for p in dict(FAMILIES)[part] for line in lines)
    anchors = [view.clean(i) for i in view.anchors]
    if kind == "error-annotations":
        return any(engine.ANNOTATION_RE.match(line) for line in anchors)
    if kind == "werror-warnings":
        return any(engine.WERROR_RE.search(line) for line in anchors)
    pattern = re.compile(dict(engine.STRONG if kind == "error-line" else engine.NOISE)[part], re.I)
    return any(pattern.search(without_marker(line)) for line in anchors)


def score_case(job: tuple[str, str, int]) -> tuple[str, str, float | None, int]:
    """(case, rule set name, chunk recall, excerpt bytes) as the corpus scorer computes them;
    recall None when the rule set cannot differ from the full one on this case."""
    case, name, max_tokens = job
    assert _SCORE is not None
    rules = engine.RULES if name == "all" else ablations()[name](engine.RULES)
    log = (Path(case) / "log.txt").read_bytes()
    if name != "all" and not _can_matter(name, log):
        return case, name, None, 0
    truth = json.loads((Path(case) / "truth.json").read_text(encoding="utf-8"))
    text = engine.diagnose_one(log, max_tokens=max(MIN_TOKENS, max_tokens), rules=rules).excerpt
    out = text + "\n" if text else ""  # what `ci-autofix triage -` prints
    excerpt = _SCORE.Excerpt(out)
    chunks = [c for c in (_SCORE.norm_lines(t) for t in truth.get("chunks", [])) if c]
    hit = sum(all(excerpt.has(t) for t in c) for c in chunks)
    return case, name, hit / len(chunks) if chunks else float("nan"), len(out.encode("utf-8"))


def _mean(xs: list[float]) -> float:
    return statistics.mean(xs) if xs else float("nan")


def _sd(xs: list[float]) -> float:
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


def _median_kb(xs: list[int]) -> float:
    return statistics.median(xs) / 1000 if xs else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS)
    parser.add_argument(
        "--families", default="all", help="the ablation: all (default), none, or NAME,NAME (see the table)"
    )
    parser.add_argument("--per-case", type=Path, help="write per-case rows (JSONL) here")
    args = parser.parse_args()

    corpus: Path = args.corpus.resolve()
    if not corpus.is_dir():
        print(f"bench/triage_cv.py: skipped: no corpus at {corpus} (pass the corpus directory)")
        return 0
    score_path = str(_scorer(corpus).__file__)
    cases = [c for c in load_cases(corpus)]
    assign_folds(cases, args.folds)
    names = list(ablations())
    if args.families == "none":
        names = []
    elif args.families != "all":
        names = [n for n in args.families.split(",") if n]
        unknown = sorted(set(names) - set(ablations()))
        if unknown:
            sys.exit(f"unknown families {unknown}; known: {', '.join(ablations())}")
    jobs = [(str(c.path), name, args.max_tokens) for name in ["all", *names] for c in cases]
    with ProcessPoolExecutor(max_workers=args.jobs, initializer=_init, initargs=(score_path,)) as pool:
        results = list(pool.map(score_case, jobs, chunksize=8))
    recall: dict[tuple[str, str], float] = {}
    size: dict[tuple[str, str], int] = {}
    for case, name, r, b in results:
        if r is not None:
            recall[(case, name)], size[(case, name)] = r, b
    for case, name, r, _ in results:
        if r is None:  # the same excerpt as with every rule
            recall[(case, name)], size[(case, name)] = recall[(case, "all")], size[(case, "all")]
    by_path = {str(c.path): c for c in cases}
    if args.per_case:
        with args.per_case.open("w") as out:
            for (case, name), r in sorted(recall.items()):
                c = by_path[case]
                row = {"case": case, "rules": name, "chunk_recall": r, "excerpt_bytes": size[(case, name)]}
                out.write(json.dumps(row | {"repo": c.repo, "fold": c.fold, "dataset": c.dataset}) + "\n")

    k = args.folds
    folds = [[c for c in cases if c.fold == f] for f in range(k)]

    def fold_recall(name: str, f: int, gha: bool = False) -> float:
        return _mean([recall[(str(c.path), name)] for c in folds[f] if c.github or not gha])

    print(
        f"## Cross-validation by repository: {len(cases)} cases, {len({c.repo for c in cases})} repositories, {k} folds\n"
    )
    print("| fold | repositories | cases | GitHub Actions cases | chunk recall | GHA recall | median KB |")
    print("|---|---|---|---|---|---|---|")
    per_fold, per_fold_gha = [], []
    for f in range(k):
        rows = folds[f]
        gha = [c for c in rows if c.github]
        r, rg = fold_recall("all", f), fold_recall("all", f, gha=True)
        per_fold.append(r)
        if gha:
            per_fold_gha.append(rg)
        kb = _median_kb([size[(str(c.path), "all")] for c in rows])
        print(
            f"| {f + 1} | {len({c.repo for c in rows})} | {len(rows)} | {len(gha)} | {r:.3f} | "
            f"{rg:.3f} | {kb:.1f} |"
        )
    overall = _mean([recall[(str(c.path), "all")] for c in cases])
    overall_gha = _mean([recall[(str(c.path), "all")] for c in cases if c.github])
    print(
        f"\nfold mean {_mean(per_fold):.3f} ± {_sd(per_fold):.3f} (sd over folds; range "
        f"{min(per_fold):.3f}-{max(per_fold):.3f}); all cases {overall:.3f}, median "
        f"{_median_kb([size[(str(c.path), 'all')] for c in cases]):.1f} KB"
    )
    print(
        f"GitHub Actions logs: fold mean {_mean(per_fold_gha):.3f} ± {_sd(per_fold_gha):.3f}; all "
        f"{sum(c.github for c in cases)} cases {overall_gha:.3f}"
    )
    if not names:
        return 0

    print("\n## Ablation: recall lost per fold when one rule family is switched off\n")
    head = " | ".join(f"fold {f + 1}" for f in range(k))
    print(f"| family | {head} | all | repos helped | repos hurt | gain outside its best repository |")
    print("|---|" + "---|" * (k + 4))
    for name in names:
        deltas = [fold_recall("all", f) - fold_recall(name, f) for f in range(k)]
        by_repo: dict[str, float] = {}
        for c in cases:
            d = recall[(str(c.path), "all")] - recall[(str(c.path), name)]
            by_repo[c.repo] = by_repo.get(c.repo, 0.0) + d
        helped = sorted((d, r) for r, d in by_repo.items() if d > 1e-9)
        hurt = [r for r, d in by_repo.items() if d < -1e-9]
        total = overall - _mean([recall[(str(c.path), name)] for c in cases])
        best = helped[-1][0] / len(cases) if helped else 0.0
        cells = " | ".join(f"{d:+.3f}" for d in deltas)
        print(f"| {name} | {cells} | {total:+.3f} | {len(helped)} | {len(hurt)} | {total - best:+.3f} |")
    print(
        "\nA positive figure is recall the family adds (recall with every rule minus recall without it);"
        " 'gain outside its best repository' is the overall gain minus the share of the one repository"
        " it helps most."
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
