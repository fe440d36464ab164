"""The run's step folders, and which of them are settled: read once per process, not at every micro-step.

The backward prompt and the panes join what the whole run recorded so far (the read traces
and scores of every forward pass for attribution, every micro-step's record for the
optimizer's feedback). Walking and reading every step's folder again at each micro-step would
make a step's time grow with the run (docs/benchmarks.md, "A long run").

Within one training session the loop writes only the step it is on: a step is *settled*
once a later step's folder exists, and its records do not change after that (a resume,
which may repair them, is a new process and starts with nothing remembered). So a fold of
the settled steps is carried forward as steps settle, and only the newest step is read
again at every look. The memory is per process (keyed by its id): a trainer forked from
the app starts from nothing rather than from what the app had read before the fork.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from ..model.at import StepKey

S = TypeVar("S")

_EPOCH = re.compile(r"epoch(\d+)")
_STEP = re.compile(r"step(\d+)")


def _numbered(folder: str | Path, pattern: re.Pattern[str]) -> list[int]:
    try:
        with os.scandir(folder) as entries:
            return [int(m.group(1)) for e in entries if (m := pattern.fullmatch(e.name)) and e.is_dir()]
    except OSError:
        return []


_EPOCH_STEPS: dict[tuple[int, str, int], list[int]] = {}


def step_keys(root: Path) -> list[StepKey]:
    """Every `epoch<E>/step<S>` folder of the run, in run order (a scan of names, no file is read).

    An epoch before the newest gains no step folder: its steps are listed once per process.
    """
    keys: list[StepKey] = []
    epochs = sorted(_numbered(root, _EPOCH))
    for epoch in epochs:
        remembered = (os.getpid(), str(root), epoch)
        steps = _EPOCH_STEPS.get(remembered)
        if steps is None:
            steps = sorted(_numbered(os.path.join(root, f"epoch{epoch}"), _STEP))
            if epoch != epochs[-1]:
                if len(_EPOCH_STEPS) > 10_000:
                    _EPOCH_STEPS.clear()
                _EPOCH_STEPS[remembered] = steps
        keys += [(epoch, step) for step in steps]
    return keys


@dataclass
class Settled(Generic[S]):
    """A fold over a run's settled steps, and the last step folded into it."""

    state: S
    through: StepKey | None = None


class SettledCache(Generic[S]):
    """Per run and process, one `Settled` fold, brought forward by `fold_into` as steps settle."""

    def __init__(self, start: Callable[[], S]) -> None:
        self._start = start
        self._folds: dict[tuple[int, str], Settled[S]] = {}
        self.lock = threading.Lock()

    def get(self, root: Path) -> Settled[S]:
        key = (os.getpid(), str(root))
        if key not in self._folds:
            if len(self._folds) > 64:  # one per run this process looked at; a browser opens a few
                self._folds.clear()
            self._folds[key] = Settled(self._start())
        return self._folds[key]


def settled_and_live(keys: list[StepKey], through: StepKey | None, upto: StepKey | None) -> tuple[list, list]:
    """Split the steps after `through` (up to `upto`) into the settled ones and the live newest one."""
    newest = keys[-1] if keys else None
    later = [k for k in keys if (through is None or k > through) and (upto is None or k <= upto)]
    return [k for k in later if k != newest], [k for k in later if k == newest]
