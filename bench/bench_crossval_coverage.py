"""Benchmark: does crossval's interval hold the truth as often as it says, when the folds move together?

K folds of one crossval share training works, the validation work, the start pool and the
writer, so their test deltas are positively correlated. This simulates the fold deltas
thousands of times and asks `engine.validation.crossval.across_folds` (the one function the
command reports with) for its two intervals, against the plain t across folds it replaced
(variance s²/K), measured in the same run:

- *the mean's interval* holds the procedure's expected delta (the truth, 0 here);
- *a new work's interval* holds the delta of one more work trained and tested the same way.

Two models of the folds, one work per fold (leave one work out, N = K works):

- *equicorrelated*: d_k = c + u_k, Var 1, correlation rho between folds (c is what all
  folds share). rho = 1/K is the correlation Nadeau and Bengio's n_test/n_train stands for
  (each pair of folds shares all but two of its training works); 0.3 is the statistics
  review's setting. A new work has its own c (the procedure run again) and its own u.
- *shared works*: each work j has a contribution a_j to what a pool trained on it learns
  and an effect b_j of notes on it; fold k's delta is the mean of a over its training works
  + b of its test work + its run's own luck e_k; the correlation comes from the overlap.

Each rate is over `--reps` crossvals with a 95% exact binomial interval (scipy.stats).

    python bench/bench_crossval_coverage.py [--reps 20000] [--confidence 0.9] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import statistics

import numpy as np
from scipy import stats

from skilltui.engine.validation.crossval import across_folds
from skilltui.engine.validation.test_split import TestFigure


def figure(delta: float) -> TestFigure:
    return TestFigure(0.5, 0.5 + delta, delta, None, None, 0.9, 1, 2, 2)


def naive(deltas: list[float], confidence: float) -> tuple[float, float]:
    """The interval crossval printed before: Student's t on the fold deltas, variance s²/K."""
    k, mean = len(deltas), statistics.fmean(deltas)
    half = stats.t.ppf((1 + confidence) / 2, k - 1) * statistics.stdev(deltas) / math.sqrt(k)
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


def rate(hits: int, n: int) -> str:
    ci = stats.binomtest(hits, n).proportion_ci(0.95, method="exact")
    return f"{hits / n:6.1%} [{ci.low:.1%}, {ci.high:.1%}]"


def run(name: str, draw, k: int, reps: int, confidence: float, rng: np.random.Generator) -> None:
    plain = mean_in = new_in = plain_new = 0
    for _ in range(reps):
        deltas, new = draw(rng, k)
        found = across_folds([figure(float(d)) for d in deltas], confidence, works=k)
        assert found is not None and found.low is not None and found.new_low is not None
        low, high = naive(list(deltas), confidence)
        plain += low <= 0.0 <= high
        plain_new += low <= new <= high
        mean_in += found.low <= 0.0 <= found.high
        new_in += found.new_low <= new <= found.new_high
    print(
        f"{name:<34} K={k:<3} mean: plain t {rate(plain, reps)}  corrected {rate(mean_in, reps)}   "
        f"new work: mean's plain t {rate(plain_new, reps)}  prediction {rate(new_in, reps)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20000)
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"coverage at a stated {args.confidence:.0%}, {args.reps} crossvals each (95% exact intervals)")
    for k in (3, 5, 10):
        run(
            f"equicorrelated, rho 1/K = {1 / k:.2f}",
            lambda g, k: equicorrelated(g, k, 1 / k),
            k,
            args.reps,
            args.confidence,
            rng,
        )
    for k in (3, 5, 10):
        run("equicorrelated, rho 0.30", lambda g, k: equicorrelated(g, k, 0.3), k, args.reps, args.confidence, rng)
    for k in (3, 5, 10):
        run(
            "shared works, sd a=b=e",
            lambda g, k: shared_works(g, k, (1.0, 1.0, 1.0)),
            k,
            args.reps,
            args.confidence,
            rng,
        )
    for k in (3, 5, 10):
        run(
            "shared works, training-led a=3",
            lambda g, k: shared_works(g, k, (3.0, 1.0, 1.0)),
            k,
            args.reps,
            args.confidence,
            rng,
        )


if __name__ == "__main__":
    main()
