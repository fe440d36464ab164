"""A micro-step's decision as one atomic fact: written whole first, then carried out, again if need be.

Deciding a round moves several things: a ref per attempt (its commit with provenance
trailers), the pool's HEAD, each attempt's `review.json`, the `decision` event, and for a
final decision `commit.txt`. A kill between any two of them must not leave a resumed run
deciding the micro-step again from scratch: it could approve twice and leave the first
approved commit on no ref. So the decision is written first, in one atomic file (`decision.json` in the
micro-step's folder, `Decided`), naming every ref and the HEAD it leaves; `carry_out`
then makes each of those moves, every one of which can be made twice with the same
result. A resumed run that finds the file with its micro-step unfinished carries it out
again (`MicroStep.run`), emitting the event only when the record lacks it; a rerun's file
goes once its moves are made, since the new round is then the micro-step's state.

Consolidation (consolidation.py) is a `MicroStep`, so it is decided the same way.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...model import events as ev
from ...model.parse import read_run
from ...store.micro_records import MicroRecords
from ...store.reconcile import kept_notice
from ...store.run_folder import DECISION, read_json, write_json

if TYPE_CHECKING:
    from ..stages.context import Context


@dataclass
class Decided:
    """Everything a decision moves, known before the first move."""

    label: str
    action: str  # approve, rerun, rollback
    refs: dict[str, str]  # full ref name -> the commit (with trailers) it keeps
    head: str  # where the pool's HEAD is once decided
    reviews: dict[str, dict]  # attempt number -> its review.json
    event: dict  # the decision event's fields
    finished: dict | None  # commit.txt, for a final decision


def path_of(records: MicroRecords) -> Path:
    return records.out / DECISION


def record(records: MicroRecords, decided: Decided) -> None:
    """The decision, whole, before anything moves: from here on a resume carries it out."""
    write_json(path_of(records), asdict(decided))


def pending(records: MicroRecords) -> Decided | None:
    """A decision recorded and perhaps not yet carried out; None when there is none."""
    path = path_of(records)
    if not path.exists():
        return None
    try:
        return Decided(**read_json(path))
    except (OSError, ValueError, TypeError):
        return None  # a torn file never was a decision: write_json is atomic, so only a hand did this


def _recorded(ctx: Context, fields: dict) -> bool:
    """Whether the run's record already holds this decision event (a kill after it was emitted)."""
    keys = ("epoch", "step", "group", "attempt", "decision", "after")
    for event in read_run(ctx.run.events_path).events:
        if isinstance(event, ev.DecisionMade) and all(getattr(event, k) == fields[k] for k in keys):
            return True
    return False


async def carry_out(ctx: Context, records: MicroRecords, decided: Decided, *, resumed: bool = False) -> None:
    """Make every move the decision names; each is the same when made twice."""
    pool = ctx.run.pool
    for ref, sha in decided.refs.items():
        await asyncio.to_thread(pool.git, "update-ref", ref, sha)
    if await asyncio.to_thread(pool.head) != decided.head:
        kept = await asyncio.to_thread(pool.reset, decided.head)
        if kept:
            notice = kept_notice(pool, kept, decided.head, " during review")
            ctx.bus.emit(ev.Warning_(message=f"{decided.label}: {notice}"))
        ctx.bus.emit(ev.PoolChanged(head=decided.head, reason=f"{decided.action} {decided.label}"))
    for attempt, review in decided.reviews.items():
        records.reviewed(int(attempt), review)
    if not (resumed and await asyncio.to_thread(_recorded, ctx, decided.event)):
        ctx.bus.emit(ev.DecisionMade(**decided.event))
    if decided.finished is not None:
        records.finished(decided.finished)
    else:
        path_of(records).unlink(missing_ok=True)  # a rerun: the next round is the micro-step's state now
