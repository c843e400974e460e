"""Redaction of a long job log as the agent's log store does it (4 MiB pieces of whole lines):
`redact` (each pattern run only where its hints occur) beside the same patterns all run over every
piece (the baseline: redaction before the hints), in one run.

    .venv/bin/python bench/redact.py [MB]      # default 17 MB of generated build output

The log has one `Authorization:` line (in one piece). CPU seconds of the best of three runs each;
the two outputs must be identical.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable

from triage_throughput import NOISY, WORDS  # beside this script

from ci_autofix.redact import MASK, SECRET_PATTERNS, redact


def every_pattern(text: str) -> str:
    """The baseline: every pattern over the whole text, hints ignored."""
    for pattern in SECRET_PATTERNS:
        group = pattern.keep_group
        text = pattern.regex.sub((lambda m, g=group: m.group(g) + MASK) if group else MASK, text)
    return text


def log(megabytes: float) -> str:
    rng = random.Random(7)
    lines, size = [], 0
    while size < megabytes * 1_000_000:
        body = (
            rng.choice(NOISY) if rng.random() < 0.001 else " ".join(rng.choices(WORDS, k=rng.randint(4, 14)))
        )
        line = f"2026-08-14T05:58:30.1000000Z {body}\n"
        lines.append(line)
        size += len(line)
    lines.insert(len(lines) // 2, "curl -H 'Authorization: token s3cr3tvalue' https://api\n")
    return "".join(lines)


PIECE = 4 * 1024 * 1024


def pieces(text: str) -> list[str]:
    out, at = [], 0
    while at < len(text):
        cut = text.find("\n", min(at + PIECE, len(text)) - 1)
        end = len(text) if cut == -1 else cut + 1
        out.append(text[at:end])
        at = end
    return out


def best(run: Callable[[str], str], parts: list[str]) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(3):
        started = time.process_time()
        out = "".join(run(part) for part in parts)
        times.append(time.process_time() - started)
    return min(times), out


def main() -> int:
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 17
    parts = pieces(log(megabytes))
    ours, masked = best(redact, parts)
    base, expected = best(every_pattern, parts)
    print(f"| redaction of {megabytes:g} MB | CPU s | MB/s |\n|---|---|---|")
    print(f"| redact (hints) | {ours:.2f} | {megabytes / ours:.0f} |")
    print(f"| every pattern over the whole text (baseline) | {base:.2f} | {megabytes / base:.0f} |")
    print(f"same output: {masked == expected}; secret masked: {'s3cr3tvalue' not in masked}")
    return 0 if masked == expected else 1


if __name__ == "__main__":
    sys.exit(main())
