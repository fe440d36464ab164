"""Cross-validation over works (`skilltui crossval`): what the training procedure does on this person's material.

One test work is a thin answer. Crossval splits the works into K folds, trains one run per
fold on the other works with that fold as its test split (`--test-work`), and reports each
fold's paired test delta with its interval, then two figures across folds:

- **The mean**, with the Nadeau-Bengio corrected variance: the folds share training works,
  the validation work, the start pool and the writer, so their deltas move together, and a
  plain t on them (variance s²/K) is too narrow, more so the more folds
  (bench/bench_crossval_coverage.py). The variance is s² (1/K + r) instead, on K - 1 degrees
  of freedom, where r = rho / (1 - rho) for a correlation rho between folds.
- **A new work**: a prediction interval, the range one more work may land in. It adds the
  new work's own spread to the mean's: the mean's interval says where the procedure's
  average is, not where the next work will be.

Both rest on an assumed rho, and say which. Nothing computed from K fold deltas can see what
all folds share (s² sees only the part each fold has alone), so the correlation is an
assumption, not a measurement: by default Nadeau and Bengio's r = n_test/n_train (rho about
1/K with one work a fold), or the one the user states (`--fold-correlation`). The interval
holds at its level when the folds correlate as assumed, and is too narrow when they
correlate more.

Only finished folds count. A fold that stopped or failed has a last test point measured on
a pool it had not finished training; mixing it in would average two procedures, so it is
named as left out, and the same command resumes it.

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


def check_fold_correlation(rho: float | None) -> None:
    """Refuse a stated fold correlation outside [0, 1): at 1 the folds are one measurement and
    r = rho / (1 - rho) has no value; below 0 says the folds cancel out, which what they share
    (training works, the validation work, the start pool, the writer) does not do."""
    if rho is not None and not 0 <= rho < 1:
        raise UsageError(
            f"--fold-correlation {rho:g}: give the correlation you assume between folds' deltas, "
            "at least 0 and below 1 (e.g. 0.3)"
        )


@dataclass(frozen=True)
class AcrossFolds:
    """The procedure's figures: the mean of the finished folds' deltas, its interval, and a new work's.

    `correlation` is the rho between folds both intervals assume; they hold at `confidence`
    only if the folds correlate that much, which no fold delta can show, so the line says it.
    """

    mean: float
    low: float | None  # the mean's interval; None with fewer than two finished folds
    high: float | None
    confidence: float
    folds: int  # finished folds measured, the ones the figures rest on
    correlation: float  # the assumed rho between folds' deltas (Nadeau-Bengio's unless stated)
    new_low: float | None = None  # where one new work's delta may land (a prediction interval)
    new_high: float | None = None
    left_out: tuple[str, ...] = ()  # folds not finished: named, not mixed into the mean

    def text(self) -> str:
        """The line crossval ends with; the level holds only at the correlation it names:

        `crossval: mean test Δ -0.603 [-0.944, -0.262] at 90% if folds correlate 0.33, a new work
        [-1.173, -0.032], folds 3`.
        """
        if self.low is None or self.high is None:
            interval = "[needs 2 or more finished folds]"
        else:
            interval = f"[{self.low:+.3f}, {self.high:+.3f}] at {self.confidence:.0%}"
            interval += f" if folds correlate {self.correlation:.2f}"
            if self.new_low is not None and self.new_high is not None:
                interval += f", a new work [{self.new_low:+.3f}, {self.new_high:+.3f}]"
        left = f"; {', '.join(self.left_out)} not finished: left out" if self.left_out else ""
        return f"crossval: mean test Δ {self.mean:+.3f} {interval}, folds {self.folds}{left}"

    def to_dict(self) -> dict[str, float | int | list[str] | None]:
        found = {k: getattr(self, k) for k in self.__dataclass_fields__}
        return {k: list(v) if isinstance(v, tuple) else v for k, v in found.items()}


def across_folds(
    figures: list[TestFigure],
    confidence: float,
    *,
    works: int,
    left_out: tuple[str, ...] = (),
    correlation: float | None = None,
) -> AcrossFolds | None:
    """The finished folds' mean delta, its corrected interval and a new work's; None when no fold has a figure.

    `works` is every work dealt into the folds, so each fold trained on `works - f.works`.
    The mean's variance is s² (1/K + r) (Nadeau and Bengio 2003): folds of spread σ² whose
    deltas correlate rho have Var(mean) = σ² (1 - rho) (1/K + r) with r = rho / (1 - rho),
    and s² estimates only σ² (1 - rho), the part each fold has alone. Nadeau and Bengio take
    r = n_test/n_train, averaged over the folds here: the overlap of the training sets (rho
    about 1/K with one work a fold). That is the default, because the fold deltas cannot
    measure rho; `correlation` states another rho, for folds that share more (one validation
    work, one writer). One new work adds its whole spread, s² (1 + r) for a fold's delta,
    times `m` for one work when a fold's delta is the mean of its m works.
    """
    check_fold_correlation(correlation)
    deltas = [f.delta for f in figures]
    if not deltas:
        return None
    if correlation is None:
        ratio = statistics.fmean(f.works / max(works - f.works, 1) for f in figures)
    else:
        ratio = correlation / (1 - correlation)
    rho = round(ratio / (1 + ratio), 3)
    k, mean = len(deltas), statistics.fmean(deltas)
    if k < 2:
        return AcrossFolds(round(mean, 4), None, None, confidence, k, rho, left_out=left_out)
    per_work = statistics.fmean(f.works for f in figures)
    t = t_quantile((1 + confidence) / 2, k - 1)
    s = statistics.stdev(deltas)
    half = t * s * math.sqrt(1 / k + ratio)
    new = t * s * math.sqrt(per_work * (1 + ratio) + 1 / k + ratio)
    return AcrossFolds(
        round(mean, 4),
        round(mean - half, 4),
        round(mean + half, 4),
        confidence,
        k,
        rho,
        round(mean - new, 4),
        round(mean + new, 4),
        left_out,
    )
