"""`skilltui diffuse` with a model backend: stream the retelling, and count what it cost.

`train` records every call as a `call` event and prints the tokens and dollars spent;
`diffuse` makes one call per episode and does the same. It has no run folder, so its
calls go to `<work>/diffuse.jsonl` beside the story they wrote, one `call` event per
line in the same shape as a run's `events.jsonl` (a failed call's partial usage
included: it was paid for), and the totals are printed when it ends.
"""

from __future__ import annotations

import asyncio
import sys
import time

from ...agents.base import Backend, BackendError, CallResult
from ...core.words import counted
from ...model.bus import JsonlSink
from ...model.events import Call
from ...model.view import RunView
from ..prompts import Prompts
from .diffuse import diffuse_with_model
from .works import Work


def diffuse_and_record(work: Work, backend: Backend, noise: float) -> str | None:
    """The story, or None when a call failed (one line on stderr says why; story.md is unchanged)."""
    sink = JsonlSink(work.root / "diffuse.jsonl")
    totals = RunView()  # the run model's tally of tokens and cost, with no run around it
    calls = [0]
    last = [0, time.monotonic()]

    def show(number: int, text: str) -> None:
        if number != last[0]:
            print(f"\n--- episode {number} ---", file=sys.stderr)
            last[0] = number
        print(text, end="", file=sys.stderr, flush=True)

    def on_call(number: int, result: CallResult) -> None:
        now = time.monotonic()
        event = Call(
            role="diffuse",
            backend=backend.name,
            model=result.model or backend.model,
            work=work.name,
            **result.spent(),
            seconds=round(now - last[1], 3),
        )
        last[1] = now
        sink(event)
        totals.apply(event)
        calls[0] += 1

    try:
        story = asyncio.run(diffuse_with_model(work, backend, Prompts(), noise=noise, on_delta=show, on_call=on_call))
    except BackendError as exc:
        print(
            f"\nskilltui: diffuse failed: {exc}; {work.story_path} is unchanged ({spent(calls[0], totals)})",
            file=sys.stderr,
        )
        return None
    finally:
        sink.close()
    print(f"\ndiffuse: {spent(calls[0], totals)}", file=sys.stderr)
    return story


def spent(calls: int, totals: RunView) -> str:
    cost = f"${totals.cost:.4f}" + ("" if totals.cost_known else "+ (some prices unknown)")
    return f"{counted(calls, 'call')}, {totals.tokens:,} tokens, cost {cost}"
