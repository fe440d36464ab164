"""One work's agent output, bounded: the last characters the Output pane can show.

Streamed text arrives in tiny deltas for as long as a run lasts; keeping only the tail
keeps the app's memory flat however many steps go by. Here too: where a line breaks to
fit the pane (at words), the wrapped rows a work's text grows into (for the pane's shown
work and the works it keeps), and the output of a stage an earlier session finished, read
back from the transcript it kept. No Textual in here.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.cells import cell_len, get_character_cell_size

from ...core.json_read import read_json

OUTPUT_LIMIT = 60_000
MAX_LINES = 3000  # logical lines the Output pane keeps wrapped for one work
_CONTROL = re.compile("[\u0000-\u0008\u000b-\u001f\u007f]")  # tab and newline are handled on their own


def clean(text: str) -> str:
    """Text as one cell per character: tabs as spaces, control characters as a visible mark."""
    return _CONTROL.sub("\N{REPLACEMENT CHARACTER}", text.replace("\t", "    ").replace("\r", ""))


def wrap_spans(line: str, width: int) -> list[tuple[int, int]]:
    """Where `line` breaks to fit `width` cells: (start, end) offsets, at spaces when there is one.

    A word longer than the width is cut where the width ends; the space a line breaks at
    is not drawn, so the next row starts with the next word.
    """
    width = max(1, width)
    n = len(line)
    if n <= width and (line.isascii() or cell_len(line) <= width):
        return [(0, n)]
    spans: list[tuple[int, int]] = []
    start = 0
    ascii_only = line.isascii()
    while start < n:
        if ascii_only:
            end = min(n, start + width)
        else:
            end, cells = start, 0
            while end < n and cells + get_character_cell_size(line[end]) <= width:
                cells += get_character_cell_size(line[end])
                end += 1
            end = max(end, start + 1)  # a character wider than the pane still takes a row
        if end >= n:
            spans.append((start, n))
            break
        cut = line.rfind(" ", start, end + 1)
        if cut > start:
            spans.append((start, cut))
            start = cut + 1
        else:
            spans.append((start, end))
            start = end
    return spans or [(0, 0)]


def extend_rows(lines: list[str], rows: list[tuple[int, int, int]], dropped: int, text: str, width: int) -> None:
    """Append streamed `text` to `lines`, and to `rows` the wrapped rows of every line it touched.

    The open last line grows: its rows are dropped and it is wrapped again with what it gained.
    """
    pieces = clean(text).split("\n")
    if not lines:
        lines.append("")
    last = dropped + len(lines) - 1
    while rows and rows[-1][0] == last:
        rows.pop()
    lines[-1] += pieces[0]
    lines.extend(pieces[1:])
    for number in range(last, dropped + len(lines)):
        rows.extend((number, start, end) for start, end in wrap_spans(lines[number - dropped], width))


def trim_rows(lines: list[str], rows: list[tuple[int, int, int]], dropped: int) -> tuple[int, int]:
    """Keep at most MAX_LINES lines, dropping from the front in batches (rows shift once per batch).

    Returns the lines dropped from the front so far, and how many rows went now.
    """
    excess = len(lines) - MAX_LINES
    if excess < MAX_LINES // 10:
        return dropped, 0
    del lines[:excess]
    dropped += excess
    first = bisect_right(rows, (dropped, -1, -1))
    del rows[:first]
    return dropped, first


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


class KeptTranscripts:
    """Where the latest step's calls kept their transcripts, per work (or group), from the `Call` events.

    Only the latest step of each is kept, so memory stays flat over a long run and a resume
    reads back what the step it resumes had written, not the whole history.
    """

    def __init__(self) -> None:
        self._calls: dict[tuple[str | None, int | None], tuple[tuple[int, int], list[tuple[str, str]]]] = {}

    def record(self, call: Any) -> None:
        """Note a finished call (a `model.events.Call`): its role and where its transcript is."""
        if not call.transcript or call.epoch is None:
            return
        place, key = (call.work, call.group), (call.epoch, call.step or 0)
        kept, calls = self._calls.get(place, (key, []))
        self._calls[place] = (key, [*(calls if kept == key else []), (call.role, call.transcript)])

    def texts(
        self, work: str | None, group: int | None, stage: str, key: tuple[int, int], short: Callable[[str], str] = str
    ) -> list[str]:
        """What each call of `stage` wrote at `key`, read from its transcript; empty when none was kept."""
        kept, calls = self._calls.get((work, group), (None, []))
        return [transcript_text(path, short) for role, path in calls if role == stage] if kept == key else []


def transcript_text(path: str, short: Callable[[str], str] = str) -> str:
    """A kept transcript as the Output pane would have streamed it: tools used, then the answer.

    On a resume, a stage an earlier session finished is not run again; this is how its
    output comes back into the pane. Backends keep different shapes (the offline and Claude
    Code tools as `{"tool": ..., "input": ...}`, the API's `tool_use` blocks inside messages);
    all of them keep the final text, which is what the pane mostly showed.
    """
    try:
        record = read_json(Path(path))
    except (OSError, ValueError):
        return f"   (the transcript {Path(path).name} could not be read)"
    if not isinstance(record, dict):
        return ""
    lines = [f"  ▸ {name} {short(target)}".rstrip() for name, target in _tools(record.get("transcript") or [])]
    text = record.get("text") or ""
    if record.get("error"):
        text = f"{text}\n✗ {record['error']}".strip()
    return "\n".join([*lines, text.rstrip()]).strip("\n")


def _tools(entries: list) -> list[tuple[str, str]]:
    found = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if "tool" in entry:
            found.append((str(entry["tool"]), _target(entry.get("input"))))
        content = entry.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    found.append((str(block.get("name", "")), _target(block.get("input"))))
    return found


def _target(arguments: object) -> str:
    if isinstance(arguments, dict):
        return str(arguments.get("path") or arguments.get("rev") or "")
    return ""
