"""Benchmark: does crossval's interval hold the truth as often as it says, when the folds move together?

K folds of one crossval share training works, the validation work, the start pool and the
writer, so their test deltas are positively correlated. This simulates the fold deltas
thousands of times and asks `engine.validation.crossval.across_folds` (the one function the
command reports with) for its two intervals, against the plain t across folds it replaced
(variance s²/K), all on the same draws:

- *the mean's interval* holds the procedure's expected delta (the truth, 0 here);
- *a new work's interval* holds the delta of one more work trained and tested the same way.

Each interval is asked for twice: at the correlation it assumes by default (Nadeau and
Bengio's n_test/n_train, rho = 1/K with one work a fold), and at the folds' true correlation
stated (`--fold-correlation`), which the simulation knows and a user has to judge.

Two models of the folds, one work per fold (leave one work out, N = K works):

- *equicorrelated*: d_k = c + u_k, Var 1, correlation rho between folds (c is what all
  folds share). rho = 1/K is the correlation Nadeau and Bengio's n_test/n_train stands for
  (each pair of folds shares all but two of its training works); 0.3 is the statistics
  review's setting. A new work has its own c (the procedure run again) and its own u.
- *shared works*: each work j has a contribution a_j to what a pool trained on it learns
  and an effect b_j of notes on it; fold k's delta is the mean of a over its training works
  + b of its test work + its run's own luck e_k; the correlation comes from the overlap:
  cov = (K-2) sd_a²/(K-1)², var = sd_a²/(K-1) + sd_b² + sd_e², rho = cov/var.

Each rate is over `--reps` crossvals with a 95% exact binomial interval (scipy.stats). The
output is the Markdown docs/benchmarks.md shows.

    python bench/bench_crossval_coverage.py [--reps 20000] [--confidence 0.9] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from skilltui.engine.validation.crossval import across_folds
from skilltui.engine.validation.test_split import TestFigure


def figure(delta: float) -> TestFigure:
    return TestFigure(0.5, 0.5 + delta, delta, None, None, 0.9, 1, 2, 2)


def naive(deltas: list[float], t: float) -> tuple[float, float]:
    """The interval crossval printed before: Student's t on the fold deltas, variance s²/K."""
    k, mean = len(deltas), statistics.fmean(deltas)
    half = t * statistics.stdev(deltas) / math.sqrt(k)
    return mean - half, mean + half


def equicorrelated(rng: np.random.Generator, k: int, rho: float) -> tuple[np.ndarray, float]:
    """K fold deltas with correlation rho, and one new work's delta (its own shared part)."""
    shared, own = rng.normal(0, math.sqrt(rho), 2), rng.normal(0, math.sqrt(1 - rho), k + 1)
    return shared[0] + own[:k], float(shared[1] + own[k])


def shared_works(rng: np.random.Generator, k: int, sd: tuple[float, float, float]) -> tuple[np.ndarray, float]:
    """Leave-one-work-out over K works drawn from the population, and a pool trained on K - 1 fresh ones."""
    sd_a, sd_b, sd_e = sd
    a, b, e = rng.normal(0, sd_a, k), rng.normal(0, sd_b, k), rng.normal(0, sd_e, k)
    folds = (a.sum() - a) / (k - 1) + b + e
    new = rng.normal(0, sd_a, k - 1).mean() + rng.normal(0, sd_b) + rng.normal(0, sd_e)
    return folds, float(new)


def shared_works_rho(k: int, sd: tuple[float, float, float]) -> float:
    """The shared-works folds' exchangeable correlation: two folds' training sets share K - 2 works."""
    sd_a, sd_b, sd_e = sd
    cov = (k - 2) * sd_a**2 / (k - 1) ** 2
    return cov / (sd_a**2 / (k - 1) + sd_b**2 + sd_e**2)


def rate(hits: int, n: int) -> str:
    ci = stats.binomtest(hits, n).proportion_ci(0.95, method="exact")
    return f"{hits / n:.1%} [{100 * ci.low:.1f}, {100 * ci.high:.1f}]"


@dataclass(frozen=True)
class Model:
    """One way the folds move together: its name, its draw of K fold deltas and a new work's, its true rho."""

    name: str
    draw: Callable[[np.random.Generator, int], tuple[np.ndarray, float]]
    rho: Callable[[int], float]


# Hits per interval: the mean's (plain t, default, true rho stated), then a new work's.
KINDS = ("plain", "default", "stated", "new plain", "new default", "new stated")


def run(model: Model, k: int, reps: int, confidence: float, rng: np.random.Generator) -> dict[str, float]:
    """Hits per interval kind, and how much wider stating the true rho makes each interval than the default."""
    t = float(stats.t.ppf((1 + confidence) / 2, k - 1))
    hits: dict[str, float] = dict.fromkeys(KINDS, 0)
    for _ in range(reps):
        deltas, new = model.draw(rng, k)
        folds = [figure(float(d)) for d in deltas]
        low, high = naive(list(deltas), t)
        hits["plain"] += low <= 0.0 <= high
        hits["new plain"] += low <= new <= high
        widths = {}
        for kind, rho in (("default", None), ("stated", model.rho(k))):
            f = across_folds(folds, confidence, works=k, correlation=rho)
            assert f is not None and f.low is not None and f.high is not None
            assert f.new_low is not None and f.new_high is not None
            hits[kind] += f.low <= 0.0 <= f.high
            hits[f"new {kind}"] += f.new_low <= new <= f.new_high
            widths[kind] = (f.high - f.low, f.new_high - f.new_low)
    # Both widths scale with the same s, so one draw's ratio is every draw's (to the rounding).
    hits["width"] = widths["stated"][0] / widths["default"][0]
    hits["new width"] = widths["stated"][1] / widths["default"][1]
    return hits


MODELS = [
    Model(
        "equicorrelated, rho 1/K (what n_test/n_train assumes)",
        lambda g, k: equicorrelated(g, k, 1 / k),
        lambda k: 1 / k,
    ),
    Model("equicorrelated, rho 0.3 (the review's)", lambda g, k: equicorrelated(g, k, 0.3), lambda k: 0.3),
    Model("equicorrelated, rho 0.5", lambda g, k: equicorrelated(g, k, 0.5), lambda k: 0.5),
    Model(
        "shared works, sd of training, test work and run luck equal",
        lambda g, k: shared_works(g, k, (1.0, 1.0, 1.0)),
        lambda k: shared_works_rho(k, (1.0, 1.0, 1.0)),
    ),
    Model(
        "shared works, training 3x the others",
        lambda g, k: shared_works(g, k, (3.0, 1.0, 1.0)),
        lambda k: shared_works_rho(k, (3.0, 1.0, 1.0)),
    ),
]


def table(rows: list[tuple[str, int, float, dict[str, float]]], reps: int, prefix: str, plain: str) -> None:
    print(
        f"| folds | K | true rho | {plain} | assuming Nadeau-Bengio's rho 1/K | stating the true rho "
        "| its width / the default's |"
    )
    print("|---|---|---|---|---|---|---|")
    for i, (name, k, rho, hits) in enumerate(rows):
        cells = [rate(int(hits[prefix + kind]), reps) for kind in ("plain", "default", "stated")]
        shown = name if i == 0 or rows[i - 1][0] != name else ""
        print(f"| {shown} | {k} | {rho:.3f} | {' | '.join(cells)} | {hits[prefix + 'width']:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20000)
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = [(m.name, k, m.rho(k), run(m, k, args.reps, args.confidence, rng)) for m in MODELS for k in (3, 5, 10)]
    print(
        f"Coverage at a stated {args.confidence:.0%}, {args.reps} crossvals a row, exact binomial 95% intervals; "
        "every column of a row on the same draws.\n"
    )
    print("The mean's interval, holding the procedure's expected delta:\n")
    table(rows, args.reps, "", "plain t (s²/K)")
    print("\nA new work's interval, holding one more work's delta:\n")
    table(rows, args.reps, "new ", "the mean's plain t")
    worst = {
        label: max(abs(hits[kind] / args.reps - args.confidence) for *_, hits in rows)
        for label, kind in (("the mean", "stated"), ("a new work", "new stated"))
    }
    print(
        "\nStating the true rho, the furthest row from "
        f"{args.confidence:.0%}: " + ", ".join(f"{label} {100 * gap:.1f} points" for label, gap in worst.items())
    )


if __name__ == "__main__":
    main()
