"""Opening a note in the person's own editor (`$VISUAL`, then `$EDITOR`), from either app.

The app is suspended while the editor runs (Textual's `App.suspend`), the way lazygit and
tig hand the terminal to `$EDITOR`. The editor works on a copy in a temporary folder, never
on the pool itself: the pool must only ever hold a note that passed the linter, and a
training process may read it at any moment; the caller decides what a changed copy
becomes (in a finished run's pool, a hand commit through `runs.operations.edit`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from textual.app import App

from ...runs import operations
from ...store.run_folder import Run


def editor_command() -> list[str] | None:
    """The editor to run, split as a shell would; None when neither variable is set."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            return shlex.split(value)
    return None


def edit_text(app: App, name: str, text: str) -> str | None:
    """Let the person edit `text` (shown as a file called `name`); the new text, or None if the editor failed.

    Raises `LookupError` with the line to show when no editor is set.
    """
    command = editor_command()
    if command is None:
        raise LookupError("no editor: set $VISUAL or $EDITOR (for example export EDITOR=nano)")
    with tempfile.TemporaryDirectory(prefix="skilltui-edit-") as folder:
        copy = Path(folder) / Path(name).name
        copy.write_text(text, encoding="utf-8")
        with app.suspend():
            try:
                done = subprocess.run([*command, str(copy)], check=False)
            except OSError as exc:
                raise LookupError(f"the editor {command[0]!r} could not start ({exc.strerror})") from None
        if done.returncode != 0:
            return None
        return copy.read_text(encoding="utf-8")


def edit_or_say_why(app: App, name: str, text: str) -> str | None:
    """`edit_text`, telling the person what went wrong: the new text, or None once they were told why."""
    try:
        edited = edit_text(app, name, text)
    except LookupError as exc:
        app.notify(str(exc), severity="warning", timeout=6)
        return None
    if edited is None:
        app.notify("The editor failed; nothing changed", severity="warning")
    return edited


def edit_note_by_hand(app: App, run: Run, path: str) -> None:
    """Open the pool's note `path` in the editor and commit what the person saved, saying what happened.

    The commit goes through `runs.operations.edit`, the path `skilltui review` changes
    history by: linted, refused while a training process holds the run, recorded as a
    `history` event.
    """
    try:
        text = (run.pool.root / path).read_text(encoding="utf-8")
    except OSError:
        app.notify(f"{path} is not in the pool at HEAD; there is nothing to edit", severity="warning")
        return
    edited = edit_or_say_why(app, path, text)
    if edited is None:
        return
    try:
        done = operations.edit(run, path, edited)
    except operations.Refused as exc:
        app.notify(str(exc), severity="warning", timeout=8)
        return
    app.notify(done.message)
