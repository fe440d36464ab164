"""The pool's size in tokens, counted from a cache keyed by each note's stat, follows every change."""

from __future__ import annotations

import os
from pathlib import Path

from skilltui.core.tokens import count_tokens
from skilltui.engine.notes.note_checks import pool_tokens
from skilltui.pool.notes import Pool, render_note


def _fresh_count(pool: Pool) -> int:
    return sum(count_tokens(p.read_text(encoding="utf-8")) for p in sorted(pool.root.glob("*/*.md")))


def test_pool_tokens_follows_edits_removals_and_replaced_files(tmp_path: Path) -> None:
    pool = Pool(tmp_path / "memory")
    pool.init()
    (pool.root / "scene").mkdir()
    short = pool.root / "scene" / "short.md"
    short.write_text(render_note("Open on the place.", "Name the place first.\n"))
    (pool.root / "scene" / "other.md").write_text(render_note("Cut late.", "Enter a scene late.\n"))
    first = pool_tokens(pool)
    assert first == _fresh_count(pool) > 0

    short.write_text(render_note("Open on the place.", "Name the place first, then the time of day.\n" * 4))
    assert pool_tokens(pool) == _fresh_count(pool) > first

    # Same size and the same mtime, but a new file (a rename over it, as write_atomic does):
    # the inode in the key still tells it apart. Multi-byte characters change the count.
    before = os.stat(short)
    text = short.read_text(encoding="utf-8")
    replacement = text.replace("first, then", "fïrst, thén")[: len(text.encode("utf-8"))]
    while len(replacement.encode("utf-8")) > before.st_size:
        replacement = replacement[:-1]
    replacement += " " * (before.st_size - len(replacement.encode("utf-8")))
    assert count_tokens(replacement) != count_tokens(text)
    new = short.with_name("short.tmp")
    new.write_text(replacement, encoding="utf-8")
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(new, short)
    assert os.stat(short).st_size == before.st_size
    assert pool_tokens(pool) == _fresh_count(pool)

    short.unlink()
    assert pool_tokens(pool) == _fresh_count(pool) < first
