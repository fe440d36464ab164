"""Command palette entries of the live app beyond Textual's own: pause, resume, theme, copy, review, jump to a work."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from textual.app import SystemCommand

from ..shared.palette import EntriesProvider, choose_theme


class WorkCommands(EntriesProvider):
    """Command palette entries "Jump to work NAME", one per work of the run."""

    discover_help = "show this work's output, loss report and curve"
    search_help = "show this work's output, report and curve"

    def entries(self) -> list[tuple[str, Callable[[], None]]]:
        app: Any = self.app
        if not hasattr(app, "main"):
            return []
        return [(f"Jump to work {name}", partial(app.main.jump_to_work, name)) for name in app.view.works]


def training_commands(app: Any) -> Iterator[SystemCommand]:
    """The live app's own palette entries, offered when they apply."""
    if app.training and not app.driver.paused:
        yield SystemCommand("Pause after the current stage", "calls in flight finish; p resumes", app.action_pause)
    if app.training and app.driver.paused:
        yield SystemCommand("Resume training", "the next stage starts", app.action_resume)
    yield SystemCommand("Switch theme", "choose among the dark, light and your own themes", partial(choose_theme, app))
    yield SystemCommand("Copy the run folder path", str(app.run_dir), app.action_copy_run_path)
    if app.reviews.asking is not None:
        yield SystemCommand("Open the waiting review", "the micro-step waits for you", app.show_review)


def copy_run_path(app: Any) -> None:
    """Ask the terminal to put the run folder's path on the clipboard, and say what was tried.

    OSC 52 is a request; no terminal answers whether it did (tmux drops it unless
    set-clipboard is on), so the notice shows the path to copy by hand as well.
    """
    path = str(app.run_dir)
    app.copy_to_clipboard(path)
    tmux = " tmux passes it on only with `set -g set-clipboard on`." if "TMUX" in os.environ else ""
    app.notify(f"{path}\nSent to the clipboard with OSC 52, if the terminal allows it.{tmux}", timeout=10)
