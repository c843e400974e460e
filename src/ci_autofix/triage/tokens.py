"""The one token estimator every budget in the project uses.

`estimate_tokens(text)` = ceil(UTF-8 bytes / 4). Real tokenizers give about 3.5-4.5 bytes per
token on English and log text, so the estimate is deliberately simple, cheap (no model call,
no vocabulary) and stable across models; budgets are therefore budgets of bytes/4.
"""

from __future__ import annotations

BYTES_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: its UTF-8 size divided by 4, rounded up."""
    return -(-len(text.encode("utf-8", "surrogatepass")) // BYTES_PER_TOKEN)


def token_bytes(tokens: int) -> int:
    """The UTF-8 byte size that `tokens` estimated tokens allow."""
    return max(0, tokens) * BYTES_PER_TOKEN
