"""Changing a finished run on disk into the state a crash would have left."""

from __future__ import annotations

from pathlib import Path


def unfinish(runs: Path, run_id: str = "r") -> None:
    """Make a finished run look like one that crashed before its end: drop its run_finished lines."""
    path = runs / run_id / "events.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if '"kind": "run_finished"' not in line), encoding="utf-8")
