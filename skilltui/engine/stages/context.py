"""The context of every stage call: the run it writes to, the settings, whom to tell, and the books.

`Context` is frozen: what changes while a run trains lives in the narrow objects it holds,
each with one owner: the call books and the spend (`Calls`, calls.py), the training works and
the leakage guard built from them (`TrainingWorks`). A function that needs only one of them
takes only that one (`Calls` for a backend call, a `Lexicon` for the note checks).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property

from ...model import events as ev
from ...model.at import At
from ...model.bus import EventBus
from ...store.run_folder import Run
from ..data.works import Work
from ..notes.leakage import Lexicon
from ..prompts import Prompts
from ..settings import Settings
from .calls import Calls


class TrainingWorks:
    """The run's training works, and the leakage guard built from them once, on first use (it reads every episode)."""

    def __init__(self, works: list[Work]) -> None:
        self.works = list(works)

    @cached_property
    def lexicon(self) -> Lexicon:
        return Lexicon.from_works(self.works)


@dataclass(frozen=True)
class Context:
    """What every stage needs: where to write, the settings and prompts, whom to tell, the books, the works."""

    run: Run
    settings: Settings
    prompts: Prompts
    bus: EventBus
    calls: Calls
    training: TrainingWorks

    def stage(self, stage: str, status: str, at: At, *, started: float | None = None, error: str | None = None) -> None:
        """Tell the watchers a stage at `at` changed state; `started` (a monotonic time) gives its duration."""
        seconds = round(time.monotonic() - started, 3) if started is not None else None
        self.bus.emit(
            ev.Stage(
                stage=stage,
                status=status,
                epoch=at.epoch,
                step=at.step,
                work=at.work,
                group=at.group,
                attempt=at.attempt,
                seconds=seconds,
                error=error,
            )
        )
