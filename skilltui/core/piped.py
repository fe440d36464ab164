"""How wide the printing commands (`skilltui runs`, `compare`) draw when their output is not a terminal.

A pipe has no width. Piped to a pager or a filter in a terminal (`skilltui runs | less`),
the terminal the command's errors go to is the reader's, so its width is the one to draw
at; a pipe with no terminal at all (a script, a file from cron) gets a wide default, since
Rich's own fallback of 80 columns squeezes a ten-column table of runs. A person who sets
`COLUMNS` (`COLUMNS=100 skilltui runs | less`) means that width, pipe or not, as every
other command-line tool reads it.
"""

from __future__ import annotations

import os
import sys


def output_width(piped_default: int) -> int | None:
    """The width to hand Rich's Console: None (its own detection) on a terminal, else COLUMNS,
    the width of the terminal stderr is on, or the default."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return None
    try:
        if sys.stderr.isatty():
            return os.get_terminal_size(sys.stderr.fileno()).columns or piped_default
    except (OSError, ValueError, AttributeError):  # a closed or replaced stderr: no terminal to ask
        pass
    return piped_default
