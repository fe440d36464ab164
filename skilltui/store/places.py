"""Where a work-step's files live in the run folder, and the evidence a work hands the backward pass.

The stages write through a `Place`, so training (`epoch<E>/step<S>/`) and validation (`val/`)
share one layout and the store's readers (micro-step records, validation samples) name the
same files the stages wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .run_folder import Run


@dataclass(frozen=True)
class Place:
    """Where one work-step's forward and loss artifacts live.

    Training writes under `epoch<E>/step<S>/`; validation (engine/validation/validator.py) passes a
    place under the run's `val/` folder, so the same stages serve both and a held-out
    work's scripts and reports never land where the backward pass can read.
    """

    work_dir: Path  # scripts/, prompt.md, reads.json, transcript.json, done.json
    story: Path
    loss_dir: Path  # <work>.md, <work>.json, <work>.transcript.json
    validation: bool = False
    # Validation writes from a copy of the notes it measures (any tree, not only the live pool's).
    notes: Path | None = None

    @classmethod
    def training(cls, run: Run, epoch: int, step: int, work: str) -> Place:
        return cls(run.work_dir(epoch, step, work), run.story_path(work), run.loss_dir(epoch, step))


@dataclass
class Sample:
    """One work's evidence for the backward pass: its loss report and what its writer read."""

    work: str
    first: int
    last: int
    loss: float
    report: Path
    scores: Path
    reads: Path

    def to_dict(self) -> dict[str, Any]:
        return {k: str(v) if isinstance(v, Path) else v for k, v in vars(self).items()}
