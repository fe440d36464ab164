"""Cross-validation over works (`skilltui crossval`): what the training procedure does on this person's material.

One test work is a thin answer. Crossval splits the works into K folds, trains one run per
fold on the other works with that fold as its test split (`--test-work`), and reports each
fold's paired test delta with its interval, then the procedure's mean delta over the folds
with an interval across folds (Student's t on the K fold deltas, K - 1 degrees of freedom):
the spread between folds is what says how much the next work a person brings may differ.

The assignment is fixed by the works and `--seed`: the sorted names shuffled by a generator
seeded with `--seed`, dealt round-robin into K folds. It is kept in the crossval folder
(`folds.json`), so a resumed crossval is checked against it, never dealt again.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass

from ...core.errors import UsageError
from .stats import t_quantile
from .test_split import TestFigure


def assign_folds(names: list[str], folds: int, seed: int) -> list[list[str]]:
    """K folds of the works, each non-empty; the same for the same names and seed on any machine."""
    if folds < 2:
        raise UsageError(f"--folds {folds}: give 2 or more (each fold is tested by a run trained on the others)")
    if folds > len(names):
        raise UsageError(
            f"--folds {folds} is more than the {len(names)} works given; each fold needs a work: "
            f"use --folds {len(names)} or fewer"
        )
    order = sorted(names)
    random.Random(seed).shuffle(order)
    return [sorted(order[k::folds]) for k in range(folds)]


@dataclass(frozen=True)
class AcrossFolds:
    """The procedure's figure: the mean of the fold deltas and its interval across folds."""

    mean: float
    low: float | None  # None with fewer than two fold figures
    high: float | None
    confidence: float
    folds: int

    def text(self) -> str:
        interval = (
            "[needs 2 or more folds measured]"
            if self.low is None or self.high is None
            else f"[{self.low:+.3f}, {self.high:+.3f}] at {self.confidence:.0%} across folds"
        )
        return f"crossval: mean test Δ {self.mean:+.3f} {interval}, folds {self.folds}"

    def to_dict(self) -> dict[str, float | int | None]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def across_folds(figures: list[TestFigure], confidence: float) -> AcrossFolds | None:
    """Student's t on the fold deltas; None when no fold has a figure."""
    deltas = [f.delta for f in figures]
    if not deltas:
        return None
    mean = statistics.fmean(deltas)
    if len(deltas) < 2:
        return AcrossFolds(round(mean, 4), None, None, confidence, len(deltas))
    half = t_quantile((1 + confidence) / 2, len(deltas) - 1) * statistics.stdev(deltas) / math.sqrt(len(deltas))
    return AcrossFolds(round(mean, 4), round(mean - half, 4), round(mean + half, 4), confidence, len(deltas))
