"""Dollar prices for Claude and OpenAI models: turns a call's token usage into what it cost.

Training spends money on every forward, loss, reduce and backward call, and
`--max-cost` stops a run on it, so the price table must be honest: a model that is not
in the table has no price (`None`), and the app shows its tokens without inventing a
dollar figure.

Sources (USD per million tokens, checked for this release):

- Anthropic's pricing page, https://platform.claude.com/docs/en/about-claude/pricing
  ("Model pricing": base input, 5m cache writes, 1h cache writes, cache hits, output),
  for the Fable 5 / 5.1, Mythos 5 / 5.1, Opus 4.1-5, Sonnet 4.5 / 4.6 and Haiku 4.5 rows;
- the per-model overview pages, https://platform.claude.com/docs/en/models/<id>/overview,
  for Opus 5.5 (opus-5-5), Sonnet 5 (sonnet-5), Sonnet 5.5 (sonnet-5-5) and Haiku 5.5
  (haiku-5-5, two bands by prompt length);
- newer than the snapshots of those pages available here, and taken from price trackers
  that re-checked the live pricing page: Sonnet 5.5 cache hits cut from $0.20 to $0.10 on
  2026-10-07 (0.05x input, like Opus 5.5), and Fable 5.2 at list price ($8 / $40, cache
  writes $10 / $16, cache hits $0.20) from its release on 2026-11-09. Mythos models share
  their Fable model's specifications and prices (the Fable overview pages say so), so
  Mythos 5.2 carries the Fable 5.2 row. Re-check these three rows first when prices move.

Model ids come from the installed SDK (`anthropic.types.Model`). `claude-mythos-preview`
has no published per-token price here, so it stays unpriced on purpose.

The multipliers are the published ones, not a formula: most models pay 1.25x input for a
5-minute cache write, 2x for a 1-hour write and 0.1x for a cache hit, but Opus 5.5 and
Sonnet 5.5 read the cache at 0.05x, Fable 5.1 at 0.025x, so every rate is listed.

Run on its own to print the table: `python -m skilltui.agents.pricing`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import Usage

MTOK = 1_000_000


@dataclass(frozen=True)
class Rates:
    """USD per million tokens for each kind of token a call is billed for."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float


@dataclass(frozen=True)
class Price:
    """A model's rates. `long_prompt` applies when one request's prompt exceeds `long_prompt_tokens`.

    Haiku 5.5 bills a request whose prompt (input + cache reads + cache writes) is over
    100,000 tokens at a higher rate on every token of that request, output included, so
    a price is a function of one request's usage, never of a sum over requests.
    """

    rates: Rates
    long_prompt: Rates | None = None
    long_prompt_tokens: int | None = None

    def rates_for(self, usage: Usage) -> Rates:
        prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        if self.long_prompt and self.long_prompt_tokens is not None and prompt > self.long_prompt_tokens:
            return self.long_prompt
        return self.rates


def _standard(input_: float, output: float) -> Rates:
    """Rates with the standard cache multipliers: 1.25x / 2x to write, 0.1x to read."""
    return Rates(input_, output, input_ * 1.25, input_ * 2, input_ * 0.1)


_FABLE_5_2 = Price(Rates(8.0, 40.0, 10.0, 16.0, 0.20))
_FABLE_5_1 = Price(Rates(10.0, 50.0, 12.50, 20.0, 0.25))
_FABLE_5 = Price(_standard(10.0, 50.0))
_OPUS_5_5 = Price(Rates(4.0, 20.0, 5.0, 8.0, 0.20))
_OPUS_4_5_TO_5 = Price(_standard(5.0, 25.0))
_OPUS_4_1 = Price(_standard(15.0, 75.0))
_SONNET_5_5 = Price(Rates(2.0, 10.0, 2.50, 4.0, 0.10))
_SONNET_5 = Price(_standard(2.0, 10.0))
_SONNET_4 = Price(_standard(3.0, 15.0))
_HAIKU_5_5 = Price(
    Rates(0.10, 0.50, 0.125, 0.20, 0.01),
    long_prompt=Rates(0.50, 2.50, 0.625, 1.00, 0.05),
    long_prompt_tokens=100_000,
)
_HAIKU_4_5 = Price(_standard(1.0, 5.0))

PRICES: dict[str, Price] = {
    "claude-fable-5-2": _FABLE_5_2,
    "claude-mythos-5-2": _FABLE_5_2,
    "claude-fable-5-1": _FABLE_5_1,
    "claude-mythos-5-1": _FABLE_5_1,
    "claude-fable-5": _FABLE_5,
    "claude-mythos-5": _FABLE_5,
    "claude-opus-5-5": _OPUS_5_5,
    "claude-opus-5": _OPUS_4_5_TO_5,
    "claude-opus-4-8": _OPUS_4_5_TO_5,
    "claude-opus-4-7": _OPUS_4_5_TO_5,
    "claude-opus-4-6": _OPUS_4_5_TO_5,
    "claude-opus-4-5": _OPUS_4_5_TO_5,
    "claude-opus-4-1": _OPUS_4_1,
    "claude-sonnet-5-5": _SONNET_5_5,
    "claude-sonnet-5": _SONNET_5,
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,
    "claude-haiku-5-5": _HAIKU_5_5,
    "claude-haiku-4-5": _HAIKU_4_5,
}


def _openai(input_: float, cached: float, output: float) -> Price:
    """OpenAI's rates: caching is automatic and writing the cache costs nothing extra (input rate)."""
    return Price(Rates(input_, output, input_, input_, cached))


# OpenAI models (the `openai` backend), USD per million tokens: input, cached input, output.
# From OpenAI's pricing page (https://developers.openai.com/api/docs/pricing) as mirrored by
# price trackers in 2026 (the GPT-5.4 / 5.5 rows as of June 2026, GPT-5.2 from its release),
# and the model launch posts for GPT-5, GPT-4.1, GPT-4o, o3 (after its June 2025 cut) and
# o4-mini. Only exact ids are listed: OpenAI's dated snapshots do not always share a price
# (gpt-4o-2024-05-13 costs twice gpt-4o), and a model served under another id (OpenRouter's
# "openai/gpt-4o", a local "llama3") has no price here unless its provider reports one. The
# GPT-6 family and GPT-5.6 had no price in any source here, so they stay unpriced on purpose.
_GPT_5_5 = _openai(5.00, 0.50, 30.00)
_GPT_5_4 = _openai(2.50, 0.25, 15.00)
_GPT_5 = _openai(1.25, 0.125, 10.00)
_GPT_5_MINI = _openai(0.25, 0.025, 2.00)
_GPT_4_1 = _openai(2.00, 0.50, 8.00)
_GPT_4_1_MINI = _openai(0.40, 0.10, 1.60)
_GPT_4O = _openai(2.50, 1.25, 10.00)
_GPT_4O_MINI = _openai(0.15, 0.075, 0.60)
OPENAI_PRICES: dict[str, Price] = {
    "gpt-5.5": _GPT_5_5,
    "gpt-5.5-2026-04-23": _GPT_5_5,
    "gpt-5.4": _GPT_5_4,
    "gpt-5.4-mini": _openai(0.75, 0.075, 4.50),
    "gpt-5.4-mini-2026-03-17": _openai(0.75, 0.075, 4.50),
    "gpt-5.4-nano": _openai(0.20, 0.02, 1.25),
    "gpt-5.4-nano-2026-03-17": _openai(0.20, 0.02, 1.25),
    "gpt-5.2": _openai(1.75, 0.175, 14.00),
    "gpt-5.2-2025-12-11": _openai(1.75, 0.175, 14.00),
    "gpt-5": _GPT_5,
    "gpt-5-2025-08-07": _GPT_5,
    "gpt-5-mini": _GPT_5_MINI,
    "gpt-5-mini-2025-08-07": _GPT_5_MINI,
    "gpt-5-nano": _openai(0.05, 0.005, 0.40),
    "gpt-5-nano-2025-08-07": _openai(0.05, 0.005, 0.40),
    "gpt-4.1": _GPT_4_1,
    "gpt-4.1-2025-04-14": _GPT_4_1,
    "gpt-4.1-mini": _GPT_4_1_MINI,
    "gpt-4.1-mini-2025-04-14": _GPT_4_1_MINI,
    "gpt-4.1-nano": _openai(0.10, 0.025, 0.40),
    "gpt-4.1-nano-2025-04-14": _openai(0.10, 0.025, 0.40),
    "gpt-4o": _GPT_4O,
    "gpt-4o-2024-08-06": _GPT_4O,
    "gpt-4o-2024-11-20": _GPT_4O,
    "gpt-4o-mini": _GPT_4O_MINI,
    "gpt-4o-mini-2024-07-18": _GPT_4O_MINI,
    "o3": _openai(2.00, 0.50, 8.00),
    "o3-2025-04-16": _openai(2.00, 0.50, 8.00),
    "o4-mini": _openai(1.10, 0.275, 4.40),
    "o4-mini-2025-04-16": _openai(1.10, 0.275, 4.40),
}

# Dated snapshots (claude-haiku-4-5-20251001) and Claude Code's context suffix
# (claude-sonnet-5-5[1m]) name the same model at the same price.
_SUFFIX = re.compile(r"(-\d{8})?(\[[^\]]*\])?$")


def canonical(model: str) -> str:
    """The table key for a model id: lower case, without a date or a `[1m]` suffix."""
    return _SUFFIX.sub("", model.strip().lower())


def price_for(model: str | None) -> Price | None:
    """The model's price, or None when it is not in the table (never a guess)."""
    if not model:
        return None
    if (exact := OPENAI_PRICES.get(model.strip())) is not None:
        return exact
    return PRICES.get(canonical(model))


def cost_usd(model: str | None, usage: Usage, *, cache_ttl: str = "5m") -> float | None:
    """What ONE request cost, in USD; None for a model without a known price.

    Call it per API request and add the results: long-prompt pricing depends on each
    request's own prompt size. Cache writes are billed at the 5-minute rate, except the
    `cache_write_1h_tokens` the API reported as 1-hour writes (or all of them with
    `cache_ttl="1h"`).
    """
    price = price_for(model)
    if price is None:
        return None
    rates = price.rates_for(usage)
    if cache_ttl == "1h":
        writes = usage.cache_write_tokens * rates.cache_write_1h
    else:  # the 1-hour share the API reported is billed at its own rate, the rest at the 5-minute one
        hour = min(usage.cache_write_1h_tokens, usage.cache_write_tokens)
        writes = (usage.cache_write_tokens - hour) * rates.cache_write_5m + hour * rates.cache_write_1h
    return (
        usage.input_tokens * rates.input
        + usage.output_tokens * rates.output
        + writes
        + usage.cache_read_tokens * rates.cache_read
    ) / MTOK


if __name__ == "__main__":
    print(f"{'model':22} {'input':>8} {'output':>8} {'write5m':>8} {'write1h':>8} {'read':>8}")
    for name, price in {**PRICES, **OPENAI_PRICES}.items():
        r = price.rates
        print(
            f"{name:22} {r.input:8.3f} {r.output:8.3f} {r.cache_write_5m:8.3f} "
            f"{r.cache_write_1h:8.3f} {r.cache_read:8.3f}"
        )
