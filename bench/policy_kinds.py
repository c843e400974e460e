"""How many of the adversarial diffs in tests/policy/test_kinds_*.py are caught, and how many look-alikes stay clean.

Usage: python bench/policy_kinds.py   (from the repository root; scratch repositories in a temporary directory)
Each case is committed as two commits of a scratch repository and checked twice, on the bare diff
("hunks") and with whole files read by blob id ("contents"). An adversarial case counts as blocked,
flagged or missed by the verdict's status; a look-alike as clean or not (a look-alike the case table
expects to be flagged, such as a new conftest fixture, is counted apart).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ci_autofix.policy import check_diff  # noqa: E402
from ci_autofix.policy.contents import git_blob_reader  # noqa: E402
from tests.policy.conftest import Repo  # noqa: E402  (the tests' scratch-repository helper)

MODULES = ("python", "js", "go", "rust", "java", "config", "diffs")


def main() -> int:
    totals: dict[str, Counter[str]] = {"hunks": Counter(), "contents": Counter()}
    wrong: list[str] = []
    with tempfile.TemporaryDirectory(prefix="policy-kinds-") as tmp:
        number = 0
        for name in MODULES:
            module = importlib.import_module(f"tests.policy.test_kinds_{name}")
            for case in module.CASES:
                for mode in case.modes:
                    number += 1
                    repo = Repo(Path(tmp) / f"r{number}")
                    base = repo.commit(dict(case.before))
                    head = repo.commit(dict(case.after))
                    diff = repo.git.diff(base, head)
                    reader = git_blob_reader(repo.git) if mode == "contents" else None
                    status = check_diff(diff, read_blob=reader).status
                    if case.adversarial and case.want == "blocked":
                        key = {"blocked": "adversarial blocked", "flagged": "adversarial flagged"}.get(
                            status, "adversarial missed"
                        )
                    elif case.want == "flagged":
                        key = (
                            "infra look-alike flagged"
                            if status == "flagged"
                            else f"infra look-alike {status}"
                        )
                    else:
                        key = "look-alike clean" if status == "clean" else f"look-alike {status}"
                    totals[mode][key] += 1
                    if status != case.want:
                        wrong.append(f"  {name}/{case.id} [{mode}]: want {case.want}, got {status}")
    for mode, counts in totals.items():
        print(f"{mode}:")
        for key in sorted(counts):
            print(f"  {key:28} {counts[key]}")
    print(
        "cases whose verdict differs from the table:"
        if wrong
        else "every case gets the verdict its table says"
    )
    print("\n".join(wrong))
    print("reproduce: python bench/policy_kinds.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
