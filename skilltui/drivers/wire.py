"""The pipes between the live app and its trainer process: one JSON message per line, each way.

What the lines hold, and how each is checked as it arrives, is `messages.py`. Both sides
write whole lines (`messages.line_of`, `write_all`) and read them with `read_lines`; the
child's events go through `EventWire`, which joins streamed text and goes quiet once the
app stopped reading.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace

from ..model import events as ev
from .messages import ForApp, line_of

LINE_LIMIT = 64 * 1024 * 1024  # a review's request carries whole patches and reports
DELTA_SECONDS = 0.05  # how long streamed text may wait in the child to go in one line (see EventWire)


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

    A `review_requested` is not sent: the reviewer sends the whole request right after it
    (`messages.ReviewAsked`), and the app derives the event from that, so a review crosses once.
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
        if type(event) is ev.ReviewRequested:
            return
        self.send(event)

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
            self.send(delta)

    def send(self, message: ForApp) -> None:
        if type(message) is not ev.Delta and self._deltas:
            self.flush()  # nothing may overtake the text streamed before it
        if not self.open:
            return
        try:
            write_all(self.fd, line_of(message))
        except OSError:
            self.open = False  # the app is gone or closing: the record in events.jsonl is what counts
