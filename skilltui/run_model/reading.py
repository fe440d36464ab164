"""Opening a run for reading: the run folder as the review app sees it, and whether it moved.

`skilltui review` reads a run that another process may be training right now. It needs the
folder (the engine's `Run`: where the events file, the pool and each step's records are)
and a cheap way to tell that something changed since its last look, so it reloads only
then. Both come from here: the apps reach the engine only through the run model and its
driver (an import-linter contract, pyproject.toml), and what "the run moved" means is
decided once, beside the tail that follows the same events file.
"""

from __future__ import annotations

import os
from typing import Any

from ..engine.run import Run, is_locked

__all__ = ["Run", "marks"]


def marks(run: Run) -> tuple[Any, ...]:
    """What changes whenever the run's history could have changed: the pool's HEAD and kept
    refs, the events file's size and whether a trainer holds the lock. Cheap enough to poll."""
    pool = run.pool
    try:
        size = os.stat(run.events_path).st_size
    except OSError:
        size = -1
    return pool.head(), pool.kept_refs(), size, is_locked(run.root)
