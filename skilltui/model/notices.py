"""The events a person should be told about as they happen, each with its severity decided by its kind.

The app shows these as notifications; a severity read off the message's words ("failed"
in the text) would call "0 failed" an error and miss a rejection that says "refused".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.words import counted
from . import events as ev
from .view import batch_text


@dataclass(frozen=True)
class Notice:
    message: str
    severity: str  # information, warning, error


def notice_of(event: ev.Event) -> Notice | None:
    match event:
        case ev.Stage(status="failed"):
            where = event.work or f"group {event.group}"
            return Notice(f"{event.stage} {where} failed: {event.error}", "error")
        case ev.MicroStepSkipped():
            return Notice(
                f"{event.label or f'group {event.group}'}: skipped after {counted(event.attempts, 'failed attempt')}, "
                f"the pool stays as it was ({event.reason})",
                "warning",
            )
        case ev.Warning_():
            return Notice(event.message, "warning")
        case ev.Throttled():
            return Notice(("throttled: " if event.throttled else "throttle lifted: ") + event.reason, "warning")
        case ev.BatchState():
            return Notice(f"batch {batch_text(event)}", "information")
        case ev.RunFinished():
            text = f"run {event.status}" + (f": {event.reason}" if event.reason else "")
            severity = {"finished": "information", "failed": "error"}.get(event.status, "warning")
            return Notice(text, severity)
    return None
