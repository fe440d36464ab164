"""Widgets both apps draw: the commit list and its detail, a diff, a report, the run header."""

from __future__ import annotations

from typing import TypedDict


class WidgetOptions(TypedDict, total=False):
    """What every Textual widget takes besides its own arguments; the widgets here pass them on as they are."""

    name: str | None
    id: str | None
    classes: str | None
    disabled: bool
