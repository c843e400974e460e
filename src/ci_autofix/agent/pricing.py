"""What a model turn costs: one price table, overridable.

Prices are US dollars per million tokens, from Anthropic's public pricing pages
(platform.claude.com/docs/en/about-claude/pricing and the per-model overview pages,
read 2026-11-30), including the Sonnet 5.5 cache-read cut to $0.10 of 2026-10-07.
Cache writes are the 5-minute ones (the default TTL, the one we use).

Override or extend the table with the `CI_AUTOFIX_PRICES` environment variable: a JSON
object mapping a model id to `{"input": .., "output": .., "cache_write": .., "cache_read": ..}`
(`cache_write` defaults to 1.25 × input and `cache_read` to 0.1 × input). A model that is
in neither falls back to the most expensive price of its family (fail expensive: a budget
must never be overspent because a price was missing).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from ci_autofix.errors import UserError

PRICES_ENV = "CI_AUTOFIX_PRICES"


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_write: float
    cache_read: float
    # Some models price long prompts higher: above `long_prompt_tokens` input (counting cache
    # reads and writes), every token of the request is billed at `long`.
    long_prompt_tokens: int | None = None
    long: Price | None = None


def _p(inp: float, out: float, write: float | None = None, read: float | None = None) -> Price:
    return Price(
        inp, out, write if write is not None else inp * 1.25, read if read is not None else inp * 0.1
    )


PRICES: dict[str, Price] = {
    "claude-fable-5-1": _p(10, 50, 12.5, 0.25),
    "claude-mythos-5-1": _p(10, 50, 12.5, 0.25),
    "claude-fable-5": _p(10, 50, 12.5, 1.0),
    "claude-mythos-5": _p(10, 50, 12.5, 1.0),
    "claude-opus-5-5": _p(4, 20, 5.0, 0.20),
    "claude-opus-5": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-8": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-7": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-6": _p(5, 25, 6.25, 0.50),
    "claude-opus-4-5": _p(5, 25, 6.25, 0.50),
    "claude-sonnet-5-5": _p(2, 10, 2.5, 0.10),
    "claude-sonnet-5": _p(2, 10, 2.5, 0.20),
    "claude-sonnet-4-6": _p(3, 15, 3.75, 0.30),
    "claude-sonnet-4-5": _p(3, 15, 3.75, 0.30),
    "claude-haiku-5-5": Price(
        0.10, 0.50, 0.125, 0.01, long_prompt_tokens=100_000, long=_p(0.50, 2.50, 0.625, 0.05)
    ),
    "claude-haiku-4-5": _p(1, 5, 1.25, 0.10),
}

# Unknown models (a newer release, a gateway alias): the dearest known price of the family.
_FAMILY_FALLBACK: dict[str, Price] = {
    "fable": _p(10, 50, 12.5, 1.0),
    "mythos": _p(10, 50, 12.5, 1.0),
    "opus": _p(15, 75, 18.75, 1.5),
    "sonnet": _p(3, 15, 3.75, 0.30),
    "haiku": _p(1, 5, 1.25, 0.10),
}
_UNKNOWN = _p(15, 75, 18.75, 1.5)


@dataclass(frozen=True)
class Usage:
    """Tokens of one or more turns, as the API reports them."""

    input: int = 0  # uncached input
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_write + other.cache_write,
            self.cache_read + other.cache_read,
        )

    @property
    def prompt(self) -> int:
        """All input tokens of the request(s): uncached, written and read."""
        return self.input + self.cache_write + self.cache_read

    def to_json(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_write": self.cache_write,
            "cache_read": self.cache_read,
        }


def _base_model(model: str) -> str:
    """`anthropic.claude-sonnet-5-5-v1:0`, `claude-sonnet-4-5-20250929`, `claude-sonnet-5-5[1m]` → the table id."""
    name = model.lower().split("/")[-1]
    for region in ("us.", "eu.", "apac.", "jp.", "au.", "global."):
        name = name.removeprefix(region)
    name = name.removeprefix("anthropic.")
    name = name.split("[")[0].split("@")[0].split(":")[0]
    if name.endswith("-v1") or name.endswith("-v2"):
        name = name[:-3]
    parts = name.split("-")
    if parts and parts[-1].isdigit() and len(parts[-1]) == 8:  # a date suffix
        name = "-".join(parts[:-1])
    return name


def price_table(env: Mapping[str, str] | None = None) -> dict[str, Price]:
    """The built-in table with the `CI_AUTOFIX_PRICES` overrides applied."""
    table = dict(PRICES)
    raw = (os.environ if env is None else env).get(PRICES_ENV, "").strip()
    if not raw:
        return table
    remedy = (
        f'Set {PRICES_ENV} to a JSON object such as {{"my-model": {{"input": 3, "output": 15}}}} '
        "(US dollars per million tokens)."
    )
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        for model, entry in data.items():
            if not isinstance(entry, dict) or not {"input", "output"} <= entry.keys():
                raise ValueError(f"{model}: needs input and output")
            values = {
                k: float(entry[k]) for k in ("input", "output", "cache_write", "cache_read") if k in entry
            }
            if any(v < 0 for v in values.values()):
                raise ValueError(f"{model}: negative price")
            table[_base_model(str(model))] = _p(
                values["input"], values["output"], values.get("cache_write"), values.get("cache_read")
            )
    except (ValueError, TypeError) as exc:
        raise UserError(f"{PRICES_ENV} is not a valid price table ({exc}).", remedy) from None
    return table


def price_for(model: str, table: Mapping[str, Price] | None = None) -> Price:
    table = price_table() if table is None else table
    base = _base_model(model)
    if base in table:
        return table[base]
    if model in table:
        return table[model]
    for family, price in _FAMILY_FALLBACK.items():
        if family in base:
            return price
    return _UNKNOWN


def cost_usd(usage: Usage, price: Price) -> float:
    """The cost of one request's usage (the long-prompt tier applies per request)."""
    if (
        price.long is not None
        and price.long_prompt_tokens is not None
        and usage.prompt > price.long_prompt_tokens
    ):
        price = price.long
    return (
        usage.input * price.input
        + usage.output * price.output
        + usage.cache_write * price.cache_write
        + usage.cache_read * price.cache_read
    ) / 1_000_000
