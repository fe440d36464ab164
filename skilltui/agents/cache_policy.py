"""Where the `anthropic` backend puts prompt-cache marks: only where a later request can read them.

A `cache_control` mark makes the API store the prompt's prefix up to that block: writing
it costs 1.25x the input price (2x for the 1-hour life) and reading it later 0.1x or
less. A mark pays only when a later request starts with the same prefix; on a one-shot
tail it is a surcharge for nothing. So a block gets a mark only when:

- it ends a prefix that some later request sends again word for word: the system prompt
  and tools (every call of a role), the `lead` a request declares re-read (a work's story
  in every step, the human episodes a judge sees again next epoch), the pool listing and
  note rules (every work of a step), and in an agent the latest turn (its next turn);
- the prefix up to it reaches the model's minimum cacheable length (`MIN_CACHEABLE`):
  shorter prefixes are not cached by the API, and a useless mark still uses one of the
  four a request may carry;
- for an agent's latest turn, the task is not already done: once every episode is
  written or the commit is made, the next answer is the last request, so that turn's
  tail is one-shot and gets no mark.

The 1-hour life is used only for a lead whose re-read falls past 5 minutes (the request
says so in `lead_ttl`); everything else keeps the default 5 minutes, which every read
renews. The API wants longer lives before shorter ones, so a 5-minute mark never
precedes a 1-hour one (the later 1-hour mark covers that prefix anyway).

Tokens are estimated from characters, on the generous side (3.5 characters a token): a
mark a little under the true minimum is ignored by the API at no charge, while a missing
mark over it loses the saving.
"""

from __future__ import annotations

from typing import Any

from ..core.tokens import count_tokens
from . import pricing
from .base import Request

FIVE_MINUTES: dict[str, str] = {"type": "ephemeral"}
ONE_HOUR: dict[str, str] = {"type": "ephemeral", "ttl": "1h"}

# Minimum cacheable prompt length in tokens, by model (the API caches nothing shorter).
# From Anthropic's prompt-caching documentation as mirrored by gateway docs (LiteLLM,
# orq.ai); no figure was found for the 5.5 models and Haiku 5.5, which get the family's
# lowest published value, since a mark under the real minimum costs nothing.
MIN_CACHEABLE: dict[str, int] = {
    "claude-opus-4-5": 4096,
    "claude-opus-4-6": 4096,
    "claude-opus-4-7": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 2048,
    "claude-opus-5": 512,
    "claude-opus-5-5": 512,
    "claude-fable-5": 512,
    "claude-fable-5-1": 512,
    "claude-fable-5-2": 512,
    "claude-mythos-5": 512,
    "claude-mythos-5-1": 512,
    "claude-mythos-5-2": 512,
}
DEFAULT_MIN_CACHEABLE = 1024  # Sonnet 4.5 to 5.5, Opus 4.1 and 4.8, and models not listed


def min_cacheable(model: str) -> int:
    return MIN_CACHEABLE.get(pricing.canonical(model), DEFAULT_MIN_CACHEABLE)


def tokens(value: Any) -> int:
    """A generous token estimate of a block, a list of blocks or a string (core.tokens' rule)."""
    return count_tokens(value)


class Marks:
    """The marks of one request, placed in prompt order: tools, system, then message blocks.

    `offer(block, size, ttl)` walks the prompt block by block; a block is marked when its
    caller says it is re-read (`ttl` not None) and the prefix so far reaches the minimum.
    `rolling(block)` moves an agent's latest-turn mark.
    """

    LIMIT = 4

    def __init__(self, model: str) -> None:
        self.minimum = min_cacheable(model)
        self.length = 0
        self.placed: list[dict[str, Any]] = []
        self._rolling: dict[str, Any] | None = None

    def grow(self, size: int) -> None:
        self.length += size

    def offer(self, block: dict[str, Any], size: int, ttl: str | None) -> bool:
        """Add `size` tokens ending at `block`; mark it if it is re-read and long enough."""
        self.length += size
        if ttl is None or self.length < self.minimum:
            return False
        if ttl == "1h":  # a 5-minute mark may not precede a 1-hour one; this mark covers it
            for earlier in self.placed:
                earlier.pop("cache_control", None)
            self.placed = []
        if len(self.placed) >= self.LIMIT - 1:  # keep one for the rolling mark
            self.placed.pop(0).pop("cache_control", None)
        block["cache_control"] = dict(ONE_HOUR if ttl == "1h" else FIVE_MINUTES)
        self.placed.append(block)
        return True

    def rolling(self, block: dict[str, Any] | None, size: int) -> None:
        """Move the latest-turn mark to `block`.

        None means the turn is a one-shot tail: the mark stays where it was, so the last
        request still reads everything up to it and writes nothing new.
        """
        self.length += size
        if block is None or self.length < self.minimum or "cache_control" in block:
            return
        if self._rolling is not None and self._rolling not in self.placed:
            self._rolling.pop("cache_control", None)
        block["cache_control"] = dict(FIVE_MINUTES)
        self._rolling = block


def opening(request: Request, marks: Marks, *, agent: bool) -> list[dict[str, Any]]:
    """The first user turn: the re-read lead, the shared prefix, then the prompt.

    The lead and the prefix are marked when other requests send them again; an agent's
    prompt carries the rolling mark its next turn reads; a one-shot prompt carries none.
    """
    blocks: list[dict[str, Any]] = []
    if request.lead:
        blocks.append({"type": "text", "text": request.lead})
        marks.offer(blocks[-1], tokens(request.lead), request.lead_ttl)
    if request.prefix:
        blocks.append({"type": "text", "text": request.prefix})
        # Behind a lead, the prefix is this request's own (the lead differs per work): the
        # rolling mark covers it. Otherwise the other works of the step re-read it.
        shared = request.prefix_shared and not request.lead
        marks.offer(blocks[-1], tokens(request.prefix), "5m" if shared else None)
    blocks.append({"type": "text", "text": request.prompt})
    if agent:
        marks.rolling(blocks[-1], tokens(request.prompt))
    return blocks
