"""The prompt cache of the fake Messages API, with the API's rules, so tests and benches can price marks.

The real API caches a request's prefix at each `cache_control` breakpoint. `fakeapi.py`
hands every request to one `PromptCache`, which splits the input into cache reads,
cache writes and plain input the way the API does:

- **Prefix match up to a mark.** The prompt is tools, then system, then messages, block by
  block. A breakpoint stores the prefix that ends at its block; a later request reads
  the longest stored prefix it starts with, looking back at most 20 blocks from each of
  its own breakpoints (the API's lookback window). A request with no breakpoint reads
  nothing and writes nothing.
- **A minimum length.** A breakpoint whose prefix is shorter than the model's minimum
  cacheable length stores nothing and costs nothing (`min_tokens`: one number, or a
  table by model id with `"*"` as the fallback).
- **A life.** An entry lives 5 minutes (or 1 hour with `"ttl": "1h"`) from when it was
  written or last read; a read refreshes it. `clock` is injectable so a test can move
  time on instead of waiting.

Tokens are the same estimate as the rest of the fake (characters / 4). Every write is
kept in `writes` with whether any later request read it, so a bench can say which share
of the tokens it paid to write was never read.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

LOOKBACK_BLOCKS = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass
class CacheWrite:
    """Tokens one request wrote at one breakpoint; `read` turns True when a later request reads them."""

    request: int  # index of the request in FakeAnthropic.requests
    tokens: int
    ttl: str
    read: bool = False
    parent: str | None = None


@dataclass
class _Entry:
    expires: float
    ttl: str
    write: CacheWrite


@dataclass
class Split:
    """One request's input tokens, split the way the API bills them."""

    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cache_write_1h_tokens: int = 0


@dataclass
class PromptCache:
    min_tokens: int | dict[str, int] = 0
    clock: Callable[[], float] = time.monotonic
    writes: list[CacheWrite] = field(default_factory=list)
    _entries: dict[str, _Entry] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def minimum(self, model: str) -> int:
        if isinstance(self.min_tokens, int):
            return self.min_tokens
        return self.min_tokens.get(model, self.min_tokens.get("*", 0))

    def split(self, body: dict[str, Any], request_index: int) -> Split:
        pieces = list(_pieces(body))
        ends, hashes, digest, total = [], [], hashlib.sha256(), 0
        for chunk, _ in pieces:
            digest.update(chunk.encode())
            total += len(chunk)
            ends.append(total // 4)
            hashes.append(digest.copy().hexdigest())
        tokens = total // 4
        floor = self.minimum(str(body.get("model", "")))
        marks = [(i, ttl) for i, (_, ttl) in enumerate(pieces) if ttl and ends[i] >= max(floor, 1)]
        now = self.clock()
        with self._lock:
            if not marks:
                return Split(max(1, tokens), 0, 0)
            hit: int | None = None
            for bp, _ in marks:
                for i in range(bp, max(-1, bp - LOOKBACK_BLOCKS - 1), -1):
                    entry = self._entries.get(hashes[i])
                    if entry is not None and entry.expires > now:
                        hit = i if hit is None else max(hit, i)
                        break
            read = ends[hit] if hit is not None else 0
            parent = hashes[hit] if hit is not None else None
            if hit is not None:
                entry = self._entries[hashes[hit]]
                entry.expires = now + TTL_SECONDS[entry.ttl]
                self._mark_read(hashes[hit])
            written = written_1h = 0
            start = read
            for bp, ttl in marks:
                if hit is not None and bp <= hit:
                    continue
                piece = ends[bp] - start
                record = CacheWrite(request_index, piece, ttl, parent=parent)
                self.writes.append(record)
                self._entries[hashes[bp]] = _Entry(now + TTL_SECONDS[ttl], ttl, record)
                written += piece
                if ttl == "1h":
                    written_1h += piece
                start, parent = ends[bp], hashes[bp]
            return Split(max(1, tokens - read - written), read, written, written_1h)

    def _mark_read(self, key: str | None) -> None:
        """A read of a prefix reads every write that prefix is made of."""
        seen: set[str] = set()
        while key is not None and key not in seen:
            seen.add(key)
            entry = self._entries.get(key)
            if entry is None:
                return
            entry.write.read = True
            key = entry.write.parent


def _pieces(body: dict[str, Any]):
    """(canonical text of a block, the ttl of its breakpoint or None) in the API's order."""
    for tool in body.get("tools", []) or []:
        yield _piece(tool)
    system = body.get("system")
    if isinstance(system, str):
        yield system, None
    elif isinstance(system, list):
        for block in system:
            yield _piece(block)
    for message in body.get("messages", []):
        blocks = message.get("content")
        role = message.get("role", "")
        if isinstance(blocks, str):
            yield role + blocks, None
        else:
            for block in blocks or []:
                yield _piece(block, role)


def _piece(block: dict[str, Any], role: str = "") -> tuple[str, str | None]:
    clean = {k: v for k, v in block.items() if k != "cache_control"}
    mark = block.get("cache_control")
    ttl = (mark.get("ttl") or "5m") if isinstance(mark, dict) else None
    return role + json.dumps(clean, sort_keys=True), ttl
