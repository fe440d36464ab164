"""The frame the apps ask a short question in: one box in the middle of a dimmed screen.

Confirming a roll back or a quit, and asking for a rerun's note, are the same kind of
moment: the app stops and waits for one answer. They share this frame so they look and
sit alike; each dialog says only what differs (its width, its border's colour, what it
asks), in its own `DEFAULT_CSS`, which Textual applies after this one.
"""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen

Answer = TypeVar("Answer")


class Dialog(ModalScreen[Answer]):
    """A modal screen whose content is one `Vertical` box, centred; `#keys` says how to answer."""

    DEFAULT_CSS = """
    Dialog {
        align: center middle;
        background: $background 60%;
    }
    Dialog > Vertical {
        width: 64;
        max-width: 90%;
        height: auto;
        border: thick $warning;
        background: $panel;
        padding: 1 2;
    }
    Dialog #keys { margin-top: 1; color: $text-accent; }
    """
