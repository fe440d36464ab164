"""How a run ends: finished, stopped (it resumes later) or failed, and the one line that says why.

The trainer (engine/loop.py) raises `RunStopped` or `RunFailed` from deep inside a step and
turns them, at the top of its loop, into an `Outcome` and a `RunFinished` event; whoever
drives a run (the command line, the app) reads the outcome. These live apart from the loop
because every driver needs them and none needs the loop's internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...core.durable import no_room


class RunStopped(Exception):
    """The run stopped before its end on purpose (a spend cap, a person); it resumes later."""


class RunFailed(Exception):
    """The run cannot go on (every work failed, a backward failed, the backend refused)."""


@dataclass
class Outcome:
    status: str  # finished, stopped, failed
    reason: str = ""


def disk_problem(exc: BaseException, root: Path, resume: str) -> str:
    """One line for a run stopped by its folder refusing writes, ending with how to resume (`OpenedRun.resume`)."""
    if no_room(exc, root):
        return f"the disk under {root} is full; free some space and {resume}"
    where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
    cause = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return f"the run folder could not be written{where}: {cause}; fix that and {resume}"
