"""The app's panes, one widget per file, each fed with data rather than with the engine."""

from .commit_list import CommitList
from .diff_view import DiffView, FilePatch, parse_patch
from .live_output import LiveOutput
from .loss_curve import LossCurve
from .note_view import NoteView
from .pool_tree import PoolTree
from .report_view import ReportView
from .works_table import WorksTable

__all__ = [
    "CommitList",
    "DiffView",
    "FilePatch",
    "LiveOutput",
    "LossCurve",
    "NoteView",
    "PoolTree",
    "ReportView",
    "WorksTable",
    "parse_patch",
]
