"""Benchmark: what an 8-turn agent session sends, and how much of it the prompt cache serves.

    .venv/bin/python bench/agent.py [--min-cacheable 1024] [--json]

A scripted 8-turn session (reproduce, explore, edit, verify, finish) runs through the real
loop, the real SDK and the local Messages API fake on a throw-away repository, with the `logs`
tool over a one-job log as propose gives it. The fake bills every request the way the API
documents prompt caching: the prefix tools → system → messages up to each `cache_control`
breakpoint is written once it reaches the model's minimum cacheable length and read back by a
later request with the same prefix (lookback of 20 blocks). The same requests with the breakpoints removed are billed again as the baseline.

Tokens are estimated with `ci_autofix.triage.estimate_tokens` (UTF-8 bytes / 4) applied to the
JSON of each block, the same estimator every budget in the project uses; real tokenizers
differ by a few tens of percent, the shares do not move much.

Targets: ≥ 70% of the input tokens after the first turn are cache reads; the fixed overhead
(tools + system prompt) is ≤ 3,000 tokens. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ci_autofix.agent import AgentRequest, build_client, prompts, run_agent  # noqa: E402
from ci_autofix.agent.joblogs import JobLog, JobLogs  # noqa: E402
from ci_autofix.agent.pricing import Usage, cost_usd, price_for  # noqa: E402
from ci_autofix.agent.tools import Toolbox  # noqa: E402
from ci_autofix.sandbox import Sandbox  # noqa: E402
from ci_autofix.settings import Settings  # noqa: E402
from ci_autofix.triage.model import Category, Diagnosis, Failure  # noqa: E402
from tests.testing.fakes.messages import Billed, CacheModel, FakeMessagesAPI, reply, tool_use  # noqa: E402

try:
    from ci_autofix.triage import estimate_tokens
except ImportError:  # the triage package without its estimator: the same formula

    def estimate_tokens(text: str) -> int:
        return -(-len(text.encode("utf-8")) // 4)


MODEL = "claude-sonnet-5-5"
EDITOR = "str_replace_based_edit_tool"
TARGET_READ_SHARE = 0.70
TARGET_OVERHEAD = 3000

PRICING = '''\
"""Order totals."""

from dataclasses import dataclass


@dataclass
class Line:
    sku: str
    quantity: int
    unit_cents: int


def subtotal(lines: list[Line]) -> int:
    return sum(line.quantity * line.unit_cents for line in lines)


def discount(total_cents: int, percent: int) -> int:
    """The discount on `total_cents`, rounded down to a cent."""
    return total_cents * percent // 10


def total(lines: list[Line], percent: int = 0) -> int:
    gross = subtotal(lines)
    return gross - discount(gross, percent)
''' + "".join(f"\n\ndef helper_{i}(value: int) -> int:\n    return value * {i} + {i}\n" for i in range(40))

TESTS = """\
from shop.pricing import Line, discount, total


def test_discount_is_a_percentage():
    assert discount(1000, 10) == 100


def test_total_with_discount():
    assert total([Line("a", 2, 500)], percent=10) == 900
"""


def make_repo(root: Path) -> Path:
    repo = root / "shop-repo"
    (repo / "shop").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "shop" / "__init__.py").write_text("")
    (repo / "shop" / "pricing.py").write_text(PRICING)
    (repo / "tests" / "test_pricing.py").write_text(TESTS)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    return repo


def excerpt(command: str) -> str:
    """A log excerpt of the size triage typically hands over (about 1,500 tokens)."""
    head = [
        f"##[group]Run {command}",
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.4, pytest-8.3.2, pluggy-1.5.0",
        "rootdir: /home/runner/work/shop/shop",
        "collected 2 items",
        "",
        "tests/test_pricing.py FF                                                  [100%]",
        "",
        "=================================== FAILURES ===================================",
    ]
    body = []
    for name, call, got in (
        ("test_discount_is_a_percentage", "discount(1000, 10)", "1000"),
        ("test_total_with_discount", 'total([Line("a", 2, 500)], percent=10)', "0"),
    ):
        body += [
            f"_________________________ {name} _________________________",
            "",
            f"    def {name}():",
            f">       assert {call} == {'100' if 'discount' in name else '900'}",
            f"E       assert {got} == {'100' if 'discount' in name else '900'}",
            f"E        +  where {got} = {call}",
            "",
            "tests/test_pricing.py:5: AssertionError",
        ]
        body += [
            f"    frame {i}: shop/pricing.py:{20 + i} in discount  total_cents={1000 + i} percent=10"
            for i in range(24)
        ]
    tail = [
        "=========================== short test summary info ============================",
        "FAILED tests/test_pricing.py::test_discount_is_a_percentage - assert 1000 == 100",
        "FAILED tests/test_pricing.py::test_total_with_discount - assert 0 == 900",
        "============================== 2 failed in 0.05s ===============================",
        "##[error]Process completed with exit code 1.",
    ]
    return "\n".join(head + body + tail)


def script(command: str) -> list[dict[str, Any]]:
    """Eight turns: reproduce, look, search, look at the test, fix, verify, check the neighbours, finish."""
    return [
        reply("Reproducing the failure first.", tool_use("run", {"command": command})),
        reply(tool_use(EDITOR, {"command": "view", "path": "shop/pricing.py", "view_range": [1, 30]})),
        reply(tool_use("search", {"pattern": r"discount\(", "glob": "*.py"})),
        reply(tool_use(EDITOR, {"command": "view", "path": "tests/test_pricing.py"})),
        reply(
            "discount() divides by 10 instead of 100: the divergence is at shop/pricing.py:20.",
            tool_use(
                EDITOR,
                {
                    "command": "str_replace",
                    "path": "shop/pricing.py",
                    "old_str": "    return total_cents * percent // 10\n",
                    "new_str": "    return total_cents * percent // 100\n",
                },
            ),
        ),
        reply(tool_use("run", {"command": command})),
        reply(tool_use("search", {"pattern": r"// 10\b", "path": "shop"})),
        reply(
            tool_use(
                "finish",
                {
                    "summary": "discount() now divides by 100, so percentages are percentages.",
                    "root_cause": "shop/pricing.py:20 divided by 10 instead of 100",
                    "confidence": "high",
                    "notes_left_as_is": [],
                },
            )
        ),
    ]


def billed_of(response: dict[str, Any]) -> Billed:
    usage = response["usage"]
    return Billed(
        input=usage["input_tokens"],
        cache_write=usage["cache_creation_input_tokens"],
        cache_read=usage["cache_read_input_tokens"],
    )


def strip_breakpoints(body: dict[str, Any]) -> dict[str, Any]:
    clean = json.loads(json.dumps(body))
    for block in clean.get("tools", []) + clean.get("system", []):
        block.pop("cache_control", None)
    for message in clean["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            block.pop("cache_control", None)
    return clean


def measure(min_cacheable: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp))
        command = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
        failure = Failure(
            tool="pytest",
            kind="test",
            message="assert 1000 == 100",
            file="tests/test_pricing.py",
            line=5,
            test_id="tests/test_pricing.py::test_discount_is_a_percentage",
        )
        text = excerpt(command)
        diagnosis = Diagnosis(
            failures=[failure],
            log_commands=[command],
            category=Category.TEST,
            excerpt=text,
            excerpt_tokens=estimate_tokens(text),
            budget_tokens=6000,
        )
        sandbox = Sandbox(repo, timeout=120)
        # as propose gives it: the failed job's whole log (here the excerpt's text) behind the `logs` tool
        logs = JobLogs.write(Path(tmp) / "logs", [JobLog("test", text)])
        cache = CacheModel(min_cacheable=min_cacheable, estimate=estimate_tokens)
        with FakeMessagesAPI(script(command), cache=cache) as fake:
            llm = build_client(
                Settings(anthropic_api_key="sk-ant-bench"), base_url=fake.url, max_retries=0, strict=True
            )
            result = run_agent(
                AgentRequest(diagnosis=diagnosis, model=MODEL, max_turns=8, failing_commands=[command]),
                llm=llm,
                sandbox=sandbox,
                logs=logs,
            )
            bodies = fake.bodies
            cached = [billed_of(r.response) for r in fake.message_requests]
        baseline_model = CacheModel(min_cacheable=min_cacheable, estimate=estimate_tokens)
        baseline = [baseline_model.bill(strip_breakpoints(b)) for b in bodies]
        tools = Toolbox(
            sandbox, allowed_commands=[command], allow_shell=False, command_timeout=60, logs=logs
        ).definitions()
    tools_tokens = estimate_tokens(json.dumps(tools))
    logs_tool_tokens = tools_tokens - estimate_tokens(json.dumps([t for t in tools if t["name"] != "logs"]))
    system_tokens = estimate_tokens(prompts.load("agent_system"))
    price = price_for(MODEL)
    later = cached[1:]
    later_total = sum(b.total for b in later)
    return {
        "finished": result.finished,
        "turns": [{"cached": vars(c), "baseline": vars(b)} for c, b in zip(cached, baseline, strict=True)],
        "read_share_after_first": sum(b.cache_read for b in later) / later_total if later_total else 0.0,
        "overhead": {
            "tools": tools_tokens,
            "logs_tool": logs_tool_tokens,
            "system": system_tokens,
            "total": tools_tokens + system_tokens,
        },
        "excerpt_tokens": diagnosis.excerpt_tokens,
        "cost_usd": sum(
            cost_usd(Usage(input=c.input, cache_write=c.cache_write, cache_read=c.cache_read), price)
            for c in cached
        ),
        "baseline_cost_usd": sum(cost_usd(Usage(input=b.total), price) for b in baseline),
        "input_total": sum(c.total for c in cached),
        "min_cacheable": min_cacheable,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--min-cacheable", type=int, default=1024, help="the model's minimum cacheable prefix"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    figures = measure(args.min_cacheable)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(
            f"8-turn scripted session, model {MODEL}, min cacheable prefix {args.min_cacheable} tokens, "
            f"estimator bytes/4 on block JSON"
        )
        print(
            f"{'turn':>4} {'input':>7} {'uncached':>9} {'cache write':>12} {'cache read':>11} {'read %':>7}"
            f" | {'baseline (uncached)':>19}"
        )
        for number, turn in enumerate(figures["turns"], start=1):
            c, b = turn["cached"], turn["baseline"]
            total = c["input"] + c["cache_write"] + c["cache_read"]
            share = c["cache_read"] / total if total else 0.0
            base = b["input"] + b["cache_write"] + b["cache_read"]
            print(
                f"{number:>4} {total:>7} {c['input']:>9} {c['cache_write']:>12} {c['cache_read']:>11} "
                f"{share:>7.0%} | {base:>19}"
            )
        print(
            f"input tokens, all turns: {figures['input_total']} (same as the baseline; only the billing differs)"
        )
        print(
            f"cache reads among input tokens after turn 1: {figures['read_share_after_first']:.1%} "
            f"(target >= {TARGET_READ_SHARE:.0%})"
        )
        o = figures["overhead"]
        print(
            f"fixed overhead: tools {o['tools']} (the `logs` tool {o['logs_tool']}) + system prompt {o['system']} "
            f"= {o['total']} tokens "
            f"(target <= {TARGET_OVERHEAD}); triage excerpt {figures['excerpt_tokens']} tokens"
        )
        print(
            f"input cost at {MODEL} prices: ${figures['cost_usd']:.4f} with caching vs "
            f"${figures['baseline_cost_usd']:.4f} uncached (output tokens excluded: the same in both)"
        )
    ok = (
        figures["read_share_after_first"] >= TARGET_READ_SHARE
        and figures["overhead"]["total"] <= TARGET_OVERHEAD
        and figures["finished"]
    )
    if not args.json:
        print("targets: " + ("met" if ok else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
