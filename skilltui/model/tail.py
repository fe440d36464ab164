"""Following a run another process trains: read only what `events.jsonl` gained, fold it into one `RunView`.

`skilltui review` and `skilltui runs` look at runs that may be training right now. Reading
the whole file again at every look would grow with the run; a tail remembers where it
stopped, parses the complete lines added since (a line still being written waits for its
newline) and folds them into the same `RunView` the live app and the console use. A file
that shrank (cut back after a crash) or was replaced is read again from the start.
"""

from __future__ import annotations

import threading
from pathlib import Path

from .parse import RunRecord, parse_lines
from .view import RunView


class EventTail:
    """A `RunView` of one events file, brought up to date by `poll()`; safe to poll from several threads."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        self.view = RunView()
        self.record = RunRecord([])
        self.offset = 0
        self.identity: tuple[int, int] | None = None

    def poll(self) -> RunView:
        """Fold the lines added since the last poll; returns the view (hold `lock` while reading it)."""
        with self.lock:
            try:
                stat = self.path.stat()
            except FileNotFoundError:
                self._reset()
                return self.view
            size, identity = stat.st_size, (stat.st_dev, stat.st_ino)
            if size < self.offset or identity != self.identity:
                self._reset()
                self.identity = identity
            if size == self.offset:
                return self.view
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read(size - self.offset)
            complete = data[: data.rfind(b"\n") + 1]
            self.offset += len(complete)
            before = len(self.record.events)
            parse_lines(complete.decode("utf-8", errors="replace").split("\n")[:-1], self.record)
            self.view.fold(self.record.events[before:])
            self.record.events = []  # folded: the view holds what they said
            return self.view


_TAILS: dict[Path, EventTail] = {}
_TAILS_LOCK = threading.Lock()


def tail_of(path: Path) -> EventTail:
    """The one tail of `path` in this process, so every look at a run reads on from the last."""
    key = Path(path).resolve()
    with _TAILS_LOCK:
        if key not in _TAILS:
            _TAILS[key] = EventTail(key)
        return _TAILS[key]
