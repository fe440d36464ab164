"""The shapes the panes draw: the run model's rows and marks, and what a read of the pool returned.

The app keeps no fold of its own: a work's row is the run model's `WorkView` and a
commit's mark is its `Mark` (see `skilltui.run_model.view`). What stays here is the pool as
the panes read it from git, which is not an event fact. No Textual in here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..run_model.view import Mark, StepKey, WorkView
from .output import OUTPUT_LIMIT, OutputBuffer

WorkRow = WorkView  # the works pane draws the run model's row as it is

__all__ = ["OUTPUT_LIMIT", "Commit", "Mark", "OutputBuffer", "PoolView", "StepKey", "WorkRow"]


@dataclass
class Commit:
    """One commit of the pool as the commit list shows it."""

    sha: str
    subject: str
    mark: Mark | None = None

    @property
    def short(self) -> str:
        return self.sha[:7]


@dataclass
class PoolView:
    """What a read of the pool returned: its notes (path, description) and its commits, newest first."""

    notes: list[tuple[str, str]] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    head: str = ""
