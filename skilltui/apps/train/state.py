"""The shapes the panes draw: the run model's rows, and the commit record and its mark.

The app keeps no fold of its own: a work's row is the run model's `WorkView` (see
`skilltui.model.view`) and a commit is the one `Commit` record with its `Mark` (see
`skilltui.model.commits`). This module only names them for the panes. No Textual in here.
"""

from __future__ import annotations

from ...model.commits import Commit, Mark
from ...model.view import WorkView
from .output import OUTPUT_LIMIT, OutputBuffer

WorkRow = WorkView  # the works pane draws the run model's row as it is

__all__ = ["OUTPUT_LIMIT", "Commit", "Mark", "OutputBuffer", "WorkRow"]
