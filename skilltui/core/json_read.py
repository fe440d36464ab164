"""Reading JSON back: the one place the project decodes JSON and refuses what is not JSON.

Everything the project reads as JSON comes through here: a run's records (`read_json`: the
settings, the markers and records a stage writes, the estimate, the theme settings, a kept
transcript), a line of `events.jsonl` (`model.parse`), a line on the pipe between the app and
its trainer (`drivers.messages`) and the judge's rubric (`engine.loss.rubric`). The backends'
own wire formats (the API's and the Claude Code SDK's) are theirs to read.

Why one place: the ways JSON text goes wrong are more than `json.loads` names in one
exception. Text that is not UTF-8 raises `UnicodeDecodeError`, and a line nested a few
thousand levels deep (a hand edit, a broken writer) raises `RecursionError`, which a reader
catching `ValueError` lets through as a crash. `loads` turns all of them into `BadJSON`, a
`json.JSONDecodeError` (so a `ValueError`) whose message is one line saying what and where,
the same words `json` uses. What shape the decoded value must have (an object, these fields)
is each reader's to check and to word: a wire message, a rubric and a run's settings are
refused in their own terms.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class BadJSON(json.JSONDecodeError):
    """Text that is not JSON; `msg`, `lineno` and `colno` say why and where, as `json`'s own error does."""


def loads(text: str | bytes) -> Any:
    """The value JSON `text` holds; `BadJSON` when it is not JSON (nor UTF-8, nor shallow enough to decode)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadJSON(exc.msg, exc.doc, exc.pos) from None
    except UnicodeDecodeError as exc:
        raise _not_utf8(exc) from None
    except RecursionError:
        raise BadJSON("nested too deeply to decode", "", 0) from None


def read_json(path: Path) -> Any:
    """The JSON a file holds: `OSError` when it cannot be read, `BadJSON` when it is not JSON."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(exc) from None
    return loads(text)


def _not_utf8(exc: UnicodeDecodeError) -> BadJSON:
    return BadJSON(f"not UTF-8 text ({exc.reason} at byte {exc.start})", "", 0)
