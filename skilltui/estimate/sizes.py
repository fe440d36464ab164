"""The tokens one call is billed for, with and without the prompt cache, and what they cost.

An agent call is a few turns, and each turn sends the whole conversation again: the base
prompt (system, tools, lead, prefix, prompt) and everything the earlier turns added (the
model's output and the tool results). Without caching every turn pays for all of it as
input. With caching (`agents.cache_policy`: a rolling mark on an agent's latest turn) the
first turn writes the base to the cache, and each later turn reads what the turn before
sent and writes only what is new. A lead another request wrote (the story a work's earlier
step sent) is read, not written. One-shot text calls cache only their lead, when a later
call re-reads it (`lead_ttl`).

The dollars are `pricing.cost_usd` on these usages, per call, so a long-prompt band and
each model's own cache rates apply as they would on the bill.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from ..agents import pricing
from ..agents.base import Usage
from ..core.tokens import count_tokens

TURN_SECONDS = 2.0  # the time to a request's first token, per turn
# Output tokens per second by model family, for the wall time; an assumption printed with it.
OUTPUT_PER_SECOND = {"haiku": 150, "sonnet": 70, "opus": 45, "fable": 40, "mythos": 40}
DEFAULT_OUTPUT_PER_SECOND = 60


@dataclass(frozen=True)
class CallSize:
    """One call: its tokens uncached, its tokens as the cache splits them, and its turns."""

    input_tokens: int  # every turn's whole input, as if nothing were cached
    output_tokens: int
    cached: Usage  # the same input as the cache bills it: uncached, written, read
    turns: int = 1
    lead_ttl: str = "5m"

    def usd(self, model: str, *, caching: bool, batch: bool = False) -> float | None:
        usage = self.cached if caching else Usage(input_tokens=self.input_tokens, output_tokens=self.output_tokens)
        cost = pricing.cost_usd(model, usage, cache_ttl=self.lead_ttl if caching else "5m")
        # The Message Batches API bills every token of a call at half price.
        return None if cost is None else cost / 2 if batch else cost

    def seconds(self, model: str) -> float:
        family = next((f for f in OUTPUT_PER_SECOND if f in model), None)
        rate = OUTPUT_PER_SECOND.get(family, DEFAULT_OUTPUT_PER_SECOND) if family else DEFAULT_OUTPUT_PER_SECOND
        return self.turns * TURN_SECONDS + self.output_tokens / rate


def agent_call(base: int, lead: int, lead_cached: bool, turns: list[tuple[int, int]], minimum: int = 0) -> CallSize:
    """An agent call of len(turns) turns; turn t writes `turns[t][0]` tokens and gets `turns[t][1]` back.

    A turn whose input is shorter than the model's `minimum` cacheable length is not marked
    (the API would cache nothing), so it pays its whole input at the input rate.
    """
    sent = base + lead  # what the next turn sends as input
    total_in = plain = written = read = 0
    out = 0
    previous = 0  # what the cache holds from the turn before
    for index, (output, result) in enumerate(turns):
        total_in += sent
        if sent < minimum:
            plain += sent
        elif index == 0 or not previous:
            written += sent - (lead if lead_cached else 0)
            read += lead if lead_cached else 0
        else:
            read += previous
            written += sent - previous
        previous = sent if sent >= minimum else 0
        out += output
        sent += output + result
    cached = Usage(input_tokens=plain, output_tokens=out, cache_write_tokens=written, cache_read_tokens=read)
    return CallSize(total_in, out, cached, len(turns))


def text_call(
    base: int, lead: int, output: int, *, lead_ttl: str | None = None, lead_read: bool = False, minimum: int = 0
) -> CallSize:
    """A one-shot call: its lead is written to the cache when a later call re-reads it, read when one wrote it."""
    if lead < minimum:  # too short for the API to cache
        usage = Usage(input_tokens=base + lead, output_tokens=output)
    elif lead_read:
        usage = Usage(input_tokens=base, output_tokens=output, cache_read_tokens=lead)
    elif lead_ttl:
        usage = Usage(input_tokens=base, output_tokens=output, cache_write_tokens=lead)
    else:
        usage = Usage(input_tokens=base + lead, output_tokens=output)
    return CallSize(base + lead, output, usage, 1, lead_ttl or "5m")


def tool_tokens(role: str, backend: str) -> int:
    """Tokens of the tool definitions the anthropic and openai backends send (the offline one sends none)."""
    # A consolidation is sent the backward agent's tools.
    if backend not in ("anthropic", "openai"):
        return 0
    return _definitions(backend).get("backward" if role == "consolidate" else role, 0)


@functools.cache
def _definitions(backend: str) -> dict[str, int]:
    """The tool definitions an agent call sends on every turn (imported late: the anthropic SDK is big)."""
    if backend == "openai":
        from ..agents.openai_tools import COMMIT_TOOL, FILE_TOOLS, HISTORY_TOOLS

        forward = list(FILE_TOOLS)
    else:
        from ..agents.anthropic_backend import COMMIT_TOOL, DELETE_TOOL, EDITOR_TOOL, HISTORY_TOOLS

        forward = [EDITOR_TOOL, DELETE_TOOL]
    return {
        "forward": count_tokens(json.dumps(forward)),
        "backward": count_tokens(json.dumps([*forward, COMMIT_TOOL, *HISTORY_TOOLS])),
    }
