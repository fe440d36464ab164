"""What a run recorded, read the way the product reads it: `model.parse.read_run`, the one reader.

Tests check the record line by line, so this hands back each typed event as its JSON object
(`Event.to_dict()`, the shape `events.jsonl` holds): a line the reader would skip, or a copy
it would drop, is not here either, exactly as for `train`, `report`, `runs` and `compare`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skilltui.model.parse import read_run


def recorded(path: Path) -> list[dict[str, Any]]:
    """Every event the file at `path` holds (an `events.jsonl`, a work's `diffuse.jsonl`), in order."""
    return [event.to_dict() for event in read_run(path).events]
