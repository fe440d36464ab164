"""Benchmark: events written per second to a run's `events.jsonl`, durable against plain.

Three writers of the same events, measured in the same run on the same disk:

- plain append (the baseline): one line written and flushed per event, never fsynced;
- `JsonlSink`, the run's writer: the same, plus an fsync in a background thread at most
  every 0.2 s while lines arrive, so the emitting loop never waits on the disk;
- fsync per event: what "durable" costs done naively on the hot path.

The events are `tool` and `call` events, the most frequent kinds a run records (streamed
text, `delta`, is never written). Target: JsonlSink within 0.8x of plain append, while
fsync per event is many times slower.

A second table times what every event costs before it reaches a file or the wire: turning it
into a dict. `Event.to_dict()` (`model.plain`) against `dataclasses.asdict`, which it
replaced, over the same events plus `delta` events, which the wire carries most of.

    python bench/bench_events.py [--events 20000] [--dir PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path

from skilltui.model.bus import JsonlSink
from skilltui.model.events import Call, Delta, Event, ToolUsed


def sample_events(count: int) -> list[Event]:
    events: list[Event] = []
    for n in range(count):
        if n % 4 == 3:
            events.append(
                Call(
                    role="forward",
                    backend="offline",
                    model=None,
                    epoch=0,
                    step=n // 100,
                    work="kiln-yard",
                    input_tokens=1200 + n,
                    output_tokens=300,
                    cost_usd=0.0012,
                    seconds=0.3,
                    transcript=f"/runs/r/epoch0/step{n // 100}/works/kiln-yard/transcript.json",
                )
            )
        else:
            events.append(ToolUsed(role="forward", tool="view", path=f"dialogue/note-{n % 50}.md", work="kiln-yard"))
    return events


def plain(path: Path, events: list[Event]) -> float:
    started = time.perf_counter()
    with open(path, "a", encoding="utf-8") as f:
        for event in events:
            f.write(json.dumps(event.to_dict(), default=str, ensure_ascii=False) + "\n")
            f.flush()
    return time.perf_counter() - started


def sink(path: Path, events: list[Event]) -> float:
    started = time.perf_counter()
    writer = JsonlSink(path)
    for event in events:
        writer(event)
    writer.close()  # includes the last fsync: durable when it returns
    return time.perf_counter() - started


def fsync_each(path: Path, events: list[Event]) -> float:
    started = time.perf_counter()
    with open(path, "a", encoding="utf-8") as f:
        for event in events:
            f.write(json.dumps(event.to_dict(), default=str, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
    return time.perf_counter() - started


def to_dict_rates(events: list[Event]) -> dict[str, float]:
    """Events turned into dicts per second, best of three interleaved rounds each way."""
    ways = {
        "dataclasses.asdict (before)": lambda e: {"kind": e.kind, **dataclasses.asdict(e)},
        "Event.to_dict (model.plain)": lambda e: e.to_dict(),
    }
    rates: dict[str, float] = {}
    for _ in range(3):
        for name, way in ways.items():
            started = time.perf_counter()
            for event in events:
                way(event)
            rates[name] = max(rates.get(name, 0.0), len(events) / (time.perf_counter() - started))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: a temporary folder)")
    args = parser.parse_args()
    events = sample_events(args.events)
    fsync_events = events[: max(200, args.events // 20)]  # slow enough that a twentieth tells the rate
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        plain(root / "warm.jsonl", events[:1000])
        writers = (
            ("plain append", plain, events),
            ("JsonlSink (batched fsync)", sink, events),
            ("fsync per event", fsync_each, fsync_events),
        )
        rates: dict[str, float] = {}
        for round_ in range(3):  # interleaved rounds, best of three: a shared machine is noisy
            for name, writer, batch in writers:
                seconds = writer(root / f"{name.split()[0]}-{round_}.jsonl", batch)
                rates[name] = max(rates.get(name, 0.0), len(batch) / seconds)
    base = rates["plain append"]
    print(
        f"events.jsonl writes, {args.events} events, best of 3 (tool and call), in {args.dir or tempfile.gettempdir()}"
    )
    for name, rate in rates.items():
        print(f"  {name:<28} {rate:>12,.0f} events/s   {rate / base:5.2f}x plain append")
    deltas = [Delta(role="forward", text="INT. KILN YARD - NIGHT\n", work="kiln-yard") for _ in events]
    mixed = [e for pair in zip(events, deltas, strict=True) for e in pair]
    rates = to_dict_rates(mixed)
    base = rates["dataclasses.asdict (before)"]
    print(f"event to dict, {len(mixed)} events (half delta), best of 3")
    for name, rate in rates.items():
        print(f"  {name:<28} {rate:>12,.0f} events/s   {rate / base:5.2f}x asdict")


if __name__ == "__main__":
    main()
