"""The live app's panes, one widget per file, each fed with data rather than with the engine.

The panes `skilltui review` shows too (commit list, diff, run header, the report view) are in
`skilltui.apps.shared`.
"""

from .live_output import LiveOutput
from .loss_curve import LossCurve
from .note_view import NoteView
from .pool_tree import PoolTree
from .works_table import WorksTable

__all__ = [
    "LiveOutput",
    "LossCurve",
    "NoteView",
    "PoolTree",
    "WorksTable",
]
