"""How wide the printing commands (`skilltui runs`, `compare`) draw when their output is not a terminal.

A pipe has no width, and Rich then falls back to 80 columns, which squeeze a ten-column
table of runs; so a pipe gets a wider default. A person who sets `COLUMNS`
(`COLUMNS=100 skilltui runs | less`) means that width, pipe or not, as every other
command-line tool reads it.
"""

from __future__ import annotations

import os
import sys


def output_width(piped_default: int) -> int | None:
    """The width to hand Rich's Console: None (its own detection) on a terminal, else COLUMNS or the default."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return None if sys.stdout.isatty() else piped_default
