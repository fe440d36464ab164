"""One work's agent output, bounded: the last characters the Output pane can show.

Streamed text arrives in tiny deltas for as long as a run lasts; keeping only the tail
keeps the app's memory flat however many steps go by. No Textual in here.
"""

from __future__ import annotations

from collections import deque

OUTPUT_LIMIT = 60_000


class OutputBuffer:
    """The last `limit` characters of one work's agent output.

    `total` counts every character ever appended, so a reader that remembers how much it
    has shown can ask for just the new text, or learn that it fell too far behind and must
    reload the whole (bounded) buffer.
    """

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self._chunks: deque[str] = deque()
        self._size = 0
        self.total = 0

    def _store(self, text: str) -> None:
        if self._chunks and len(self._chunks[-1]) < 4096:
            # Deltas are tiny; merging keeps the deque short without copying much.
            self._size -= len(self._chunks[-1])
            text = self._chunks.pop() + text
        self._chunks.append(text)
        self._size += len(text)
        while self._size > self.limit:
            excess = self._size - self.limit
            first = self._chunks[0]
            if len(first) <= excess:
                self._chunks.popleft()
                self._size -= len(first)
            else:
                self._chunks[0] = first[excess:]
                self._size -= excess

    def line(self, text: str) -> None:
        """Append `text` as a line of its own, whatever the agent left unfinished before it."""
        prefix = "" if self.ends_line() else "\n"
        self.write(prefix + text + "\n")

    def write(self, text: str) -> None:
        if text:
            self.total += len(text)
            self._store(text)

    def ends_line(self) -> bool:
        return not self._chunks or self._chunks[-1].endswith("\n")

    def text(self) -> str:
        return "".join(self._chunks)

    def since(self, seen: int) -> str | None:
        """The text appended after the first `seen` characters, or None when part of it was dropped."""
        new = self.total - seen
        if new <= 0:
            return ""
        if new > self._size:
            return None
        text = self._chunks[-1] if len(self._chunks[-1]) >= new else self.text()
        return text[len(text) - new :]
