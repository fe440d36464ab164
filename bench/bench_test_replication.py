"""Benchmark: a confidence interval is not a replication interval (issue 51, item 4).

The test figure's 90% interval holds the true paired delta 9 times in 10; it does not say
that a fresh measurement's own Δ lands in it 9 times in 10. Both measurements carry their
own noise, so the second Δ differs from the first by about sqrt(2) of one's standard error,
and it lands inside the first interval less often. This measures both rates on the test
split's procedure (`test_split.paired_test_delta`, the one function the test figure is
computed by) with the noise of bench/bench_test_split.py, a frozen pool (truth 0), each
rate with a 95% exact binomial interval (scipy.stats).

    python bench/bench_test_replication.py [--reps 4000] [--works 2] [--episodes 4] [--passes 3]
"""

from __future__ import annotations

import argparse
import random

from bench_test_split import one_side
from scipy import stats

from skilltui.engine.validation.test_split import paired_test_delta


def rate(hits: int, n: int) -> str:
    ci = stats.binomtest(hits, n).proportion_ci(0.95, method="exact")
    return f"{hits / n:.1%} [{ci.low:.1%}, {ci.high:.1%}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--works", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    for share in (0.0, 0.5):
        rng = random.Random(3)
        truth = again = 0
        for _ in range(args.reps):
            works = {
                f"w{w}": {e: rng.uniform(0.2, 0.8) for e in range(1, args.episodes + 1)} for w in range(args.works)
            }
            first, second = (
                paired_test_delta(
                    one_side(rng, works, args.passes, share), one_side(rng, works, args.passes, share), 0.9
                )
                for _ in range(2)
            )
            assert first is not None and second is not None and first.low is not None and first.high is not None
            truth += first.low <= 0.0 <= first.high
            again += first.low <= second.delta <= first.high
        print(
            f"noise per call {share:.0%}: the 90% interval held the truth {rate(truth, args.reps)}; "
            f"a fresh measurement's Δ landed in it {rate(again, args.reps)}"
        )


if __name__ == "__main__":
    main()
