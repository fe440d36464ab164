"""The run's event stream: the bus that fans events out, and the sinks that keep them.

Everything a person or a tool can learn about a run arrives as an event (the classes live in
`skilltui.model.events`, which the engine imports them from): the run's `events.jsonl`, the
headless console and the terminal app are all subscribers of one `EventBus`. If a pane needs
a fact, that fact is a field of an event, so no renderer ever reaches into the engine.

Streamed agent text (`delta`) is the one kind kept out of `events.jsonl`: it is high volume
and the call's full transcript already holds it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from ..core.safe_text import json_line
from .events import Event

Sink = Callable[["Event"], None]


class EventBus:
    """Fan one event out to every subscribed sink, in subscription order.

    A sink that raises is dropped from nothing and stops nothing: a broken renderer must
    never stop training, so the error is reported once on stderr and emission goes on.
    """

    def __init__(self) -> None:
        self._sinks: list[Sink] = []
        self._broken: set[int] = set()

    def subscribe(self, sink: Sink) -> Callable[[], None]:
        self._sinks.append(sink)
        return lambda: self._sinks.remove(sink) if sink in self._sinks else None

    def emit(self, event: Event) -> None:
        for sink in list(self._sinks):
            try:
                sink(event)
            except Exception as exc:  # noqa: BLE001 - a renderer bug must not stop training
                if id(sink) not in self._broken:
                    self._broken.add(id(sink))
                    print(f"[skilltui] an event sink failed ({exc!r}); training continues", file=sys.stderr)


class JsonlSink:
    """Append each event to `events.jsonl` as one line, written through at once, fsynced in batches.

    Every line reaches the operating system before `emit` returns, so a killed process
    loses at most the event it was writing. Reaching the disk (fsync) is batched: a
    background thread syncs at most every `sync_interval` seconds while lines arrive, so the
    streaming hot path never waits on the disk; `close()` syncs what is left. A power cut
    can cost the events of the last interval, never a line already synced, and never a
    stage's artifacts, which are written with `write_atomic`.

    On open, a last line cut short (a full disk, a crash mid-write, an edit by hand) is
    cut off, so the next event starts on a line of its own; `repaired` says how many bytes
    were dropped.
    """

    def __init__(self, path: Path, *, sync_interval: float = 0.2) -> None:
        self.path = path
        self.repaired = repair_tail(path)
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the run
        self._interval = sync_interval
        self._dirty = threading.Event()
        self._stop = threading.Event()
        self._closed = False
        self.error: OSError | None = None
        self._syncer = threading.Thread(target=self._sync_loop, name="events-fsync", daemon=True)
        self._syncer.start()

    def __call__(self, event: Event) -> None:
        if event.kind == "delta" or self.error is not None:
            return
        try:
            self._file.write(json_line(json.dumps(event.to_dict(), default=str, ensure_ascii=False)) + "\n")
            self._file.flush()
        except OSError as exc:
            # A full disk: the run stops at its next write of a record, and says why; a line cut
            # short here is cut off on the next open. Writing on would only tear more lines.
            self.error = exc
            return
        if not self._dirty.is_set():  # a plain read; set() takes a lock every time
            self._dirty.set()

    def _sync_loop(self) -> None:
        while True:
            self._dirty.wait()
            if self._closed:
                return
            self._dirty.clear()
            try:
                os.fsync(self._file.fileno())
            except (OSError, ValueError):  # closed under us, or a disk that cannot sync
                return
            if self._stop.wait(self._interval):  # close() ends the pause at once
                return

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._dirty.set()
        self._syncer.join()
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError:
            pass
        finally:
            try:
                self._file.close()
            except OSError:  # the buffered rest of a line on a full disk; repaired on next open
                pass


def repair_tail(path: Path) -> int:
    """Cut a last line that has no newline (a torn write); return how many bytes were cut."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with open(path, "rb+") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return 0
        keep = 0
        position = size
        while position > 0:  # scan back in blocks for the last newline
            step = min(65536, position)
            position -= step
            f.seek(position)
            block = f.read(step)
            found = block.rfind(b"\n")
            if found >= 0:
                keep = position + found + 1
                break
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    return size - keep
