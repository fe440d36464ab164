"""The pipes between the live app and its forked trainer: one JSON object per line, each way.

- child to app (events pipe): `{"t": "event", "event": {...}}` for every event (streamed text
  joined per agent over up to `DELTA_SECONDS`, see `EventWire`);
  `{"t": "review", "id": n, "request": {...}}` when a micro-step waits for its review;
  `{"t": "held", "n": k}` when the number of stages waiting at the pause gate changes.
- app to child (commands pipe): `{"t": "pause"}`, `{"t": "resume"}`,
  `{"t": "stop", "reason": ..., "status": "stopped" | "failed"}`, and
  `{"t": "decision", "id": n, "decision": {...}}` (or `"error": ...` when the app's reviewer failed).

Both sides write whole lines (`line_of`, `write_all`) and read them with `read_lines`; the
child's events go through `EventWire`, which joins streamed text and goes quiet once the
app stopped reading.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import replace
from typing import Any

from ..model import events as ev

LINE_LIMIT = 64 * 1024 * 1024  # a review's request carries whole patches and reports
DELTA_SECONDS = 0.05  # how long streamed text may wait in the child to go in one line (see EventWire)


def line_of(message: dict[str, Any]) -> bytes:
    """One message as one line of the pipe (a newline inside a value is escaped by JSON)."""
    return (json.dumps(message, default=str, ensure_ascii=False) + "\n").encode()


def write_all(fd: int, data: bytes) -> None:
    """All of `data`, however many writes the pipe takes: a half-written line would break the reader."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def read_lines(fd: int) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
    """An asyncio reader of the pipe `fd` (which it now owns)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0)
    )
    return reader, transport


class EventWire:
    """The events pipe from the child: whole lines, and silence once the app stopped reading.

    Streamed text is the bulk of it (16 works streaming send hundreds of deltas a second), and
    the app only draws it every `FLUSH_SECONDS`. So deltas wait here up to `DELTA_SECONDS` and
    go as one line per agent, joined in order; any other event sends them first, so the app
    sees everything in the order it happened.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.open = True
        self._deltas: list[ev.Delta] = []
        self._flush: asyncio.TimerHandle | None = None

    def event(self, event: ev.Event) -> None:
        if isinstance(event, ev.Delta):
            self._deltas.append(event)
            if self._flush is None:
                self._flush = asyncio.get_running_loop().call_later(DELTA_SECONDS, self.flush)
            return
        self.flush()
        self.send({"t": "event", "event": event.to_dict()})

    def flush(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        joined: list[ev.Delta] = []
        for delta in self._deltas:
            last = joined[-1] if joined else None
            if last is not None and (last.role, last.work, last.group) == (delta.role, delta.work, delta.group):
                joined[-1] = replace(last, text=last.text + delta.text)
            else:
                joined.append(delta)
        self._deltas = []
        for delta in joined:
            self.send({"t": "event", "event": delta.to_dict()})

    def send(self, message: dict[str, Any]) -> None:
        if message.get("t") != "event":
            self.flush()  # a review or a count must not overtake the text streamed before it
        if not self.open:
            return
        try:
            write_all(self.fd, line_of(message))
        except OSError:
            self.open = False  # the app is gone or closing: the record in events.jsonl is what counts
