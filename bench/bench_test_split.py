"""Benchmark: is the test figure's 90% interval as sure as it says when the pool did not change?

The test split's procedure, simulated in arithmetic thousands of times under the null (a
frozen pool: the trained side is the start side written again): per test work and pass,
each side's writing call gives per-episode losses = the episode's difficulty + noise. Two
kinds of noise:

- *independent*: every episode's noise its own (what `--offline-noise` does, paragraph by
  paragraph): the baseline, measured in the same run;
- *per call*: a share of the noise is the call's (a writer that skims the notes writes every
  episode of that call worse): episodes of one call move together. Counting episodes as the
  replicates (the gate's `paired` on raw units) missed 0 in 29% (half the noise per call) and
  43% (all of it) of 2,000 runs against 9.8% for the baseline; the figure counts writing
  calls instead (`test_split.by_call`), which this bench checks.

For each it prints the rate at which the interval from `test_split.paired_test_delta` (the
one function the test figure is computed by) leaves out 0, with a 95% Wilson interval, and
that miss rate's ratio to the baseline's. The nominal miss rate is 10%.

    python bench/bench_test_split.py [--reps 4000] [--works 2] [--episodes 4] [--passes 3]
"""

from __future__ import annotations

import argparse
import math
import random

from skilltui.engine.validation.test_split import paired_test_delta


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def one_side(rng: random.Random, difficulty: dict, passes: int, call_share: float) -> dict:
    samples: dict = {}
    for work, episodes in difficulty.items():
        for _ in range(passes):
            call = rng.gauss(0, 0.05) * math.sqrt(call_share)
            for episode, base in episodes.items():
                own = rng.gauss(0, 0.05) * math.sqrt(1 - call_share)
                samples.setdefault((work, episode), []).append(base + call + own)
    return samples


def miss_rate(reps: int, works: int, episodes: int, passes: int, call_share: float, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    missed = 0
    for _ in range(reps):
        difficulty = {f"w{w}": {e: rng.uniform(0.2, 0.8) for e in range(1, episodes + 1)} for w in range(works)}
        start = one_side(rng, difficulty, passes, call_share)
        trained = one_side(rng, difficulty, passes, call_share)
        figure = paired_test_delta(start, trained, 0.9)
        assert figure is not None and figure.low is not None and figure.high is not None
        missed += not (figure.low <= 0.0 <= figure.high)
    return missed, reps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--works", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    shape = (args.reps, args.works, args.episodes, args.passes)
    base_k, n = miss_rate(*shape, call_share=0.0, seed=1)
    print(f"test split under the null: {args.works} works x {args.episodes} episodes, {args.passes} passes a side")
    for label, share in (("independent (baseline)", 0.0), ("per call, half the noise", 0.5), ("per call, all", 1.0)):
        k, n = (base_k, n) if share == 0.0 else miss_rate(*shape, call_share=share, seed=1)
        low, high = wilson(k, n)
        ratio = (k / base_k) if base_k else float("nan")
        print(f"  {label:26} interval misses 0: {k / n:6.1%} [{low:.1%}, {high:.1%}]  x{ratio:.2f} of the baseline")


if __name__ == "__main__":
    main()
