"""Benchmark: the key bench run several times, each run a process of its own, the keys pooled.

One run's p95 of the paused keys ("idle between", about 150 keys in a few windows) moved by
a fifth or more between runs of the same code, and with it that run's ratio: more than the 10%
the streaming keys are held to. So this runs `bench_tui.py` `--runs` times one after another
and prints:

- each run's p95s and its ratio streaming / idle between, and the ratios' median and range
  (the spread between runs, which no single run shows);
- the p95s over the keys of all runs pooled, and their ratio with a 95% interval from a
  two-stage bootstrap: runs drawn with replacement, then keys within each run drawn. Keys of
  one run (and one paused window) share that minute's machine, so drawing keys alone would
  count them as independent and give too narrow an interval.

The interval is checked where the truth is known: `--check 300` draws 300 sets of five
simulated runs whose streaming and paused keys come from one distribution (the true ratio
is 1.0), keys in windows of 24 that share a minute's speed, and prints how often the
interval held 1.0. It should be 95% or a little over; drawing runs only, or keys only, held
it far less often in the same simulation (86% and 78%).

    python bench/bench_tui_runs.py                      # 5 runs of 16 works, 10 steps
    python bench/bench_tui_runs.py --runs 5 --steps 6   # any other flag goes to bench_tui.py
    python bench/bench_tui_runs.py --check 300          # the interval's coverage, simulated

Not part of the test suite: it prints figures, it does not pass or fail.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from bench_tui import percentile  # a sibling script, as bench_gate.py imports gate_old

BENCH = Path(__file__).with_name("bench_tui.py")
DRAWS = 2000
SEED = 7
Q = 0.95


def p95(values) -> float:
    """The key bench's own p95, so a pooled figure is the same statistic as one run's."""
    return percentile(values.tolist() if isinstance(values, np.ndarray) else values, Q)  # Python floats sort faster


def run_once(extra: list[str], samples: Path) -> dict[str, list[float]]:
    """One whole key bench in a fresh interpreter (the cold start and the caches as a user has them)."""
    root = str(BENCH.parent.parent)  # the checkout, where bench_tui.py finds `tests.support`
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, str(BENCH), *extra, "--samples", str(samples)],
        cwd=root,
        env=os.environ | {"PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bench_tui.py failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return json.loads(samples.read_text())


def pooled_interval(runs: list[dict[str, list[float]]], over: str, rng: np.random.Generator) -> tuple[float, float]:
    """95% interval of p95(streaming) / p95(`over`) over pooled keys: runs drawn, then keys within each."""
    ratios = np.empty(DRAWS)
    for n in range(DRAWS):
        chosen = [runs[i] for i in rng.integers(0, len(runs), len(runs))]
        streaming = np.concatenate([rng.choice(run["streaming"], len(run["streaming"])) for run in chosen])
        baseline = np.concatenate([rng.choice(run[over], len(run[over])) for run in chosen])
        ratios[n] = p95(streaming) / p95(baseline)
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


HEADER = "run  idle after  idle between  streaming  every key  /between  /after"
BASELINES = {"between": "idle between (paused, same minutes)", "after": "idle after the run"}


def per_run(runs: list[dict[str, list[float]]]) -> None:
    """Each run's p95s and ratios, then the ratios' median and range: the spread between runs."""
    print(HEADER)
    ratios: dict[str, list[float]] = {over: [] for over in BASELINES}
    for number, run in enumerate(runs, 1):
        stream = p95(run["streaming"])
        for over in BASELINES:
            ratios[over].append(stream / p95(run[over]))
        every = p95(run["streaming"] + run["approve"])
        print(
            f"{number:>3} {p95(run['after']):>8.1f} ms {p95(run['between']):>10.1f} ms {stream:>7.1f} ms "
            f"{every:>7.1f} ms {ratios['between'][-1]:>8.2f}x {ratios['after'][-1]:>6.2f}x"
        )
    print("(p95 of a key in each run; the ratios are streaming / idle)")
    for over, label in BASELINES.items():
        got = ratios[over]
        print(
            f"streaming / {label}: median {np.median(got):.2f}x, "
            f"range {min(got):.2f}-{max(got):.2f}x over {len(got)} runs"
        )


def pooled(runs: list[dict[str, list[float]]]) -> None:
    """The p95s over every run's keys together, and their ratios with the two-stage bootstrap's interval."""
    keys = {kind: [ms for run in runs for ms in run[kind]] for kind in runs[0]}
    figures = ", ".join(f"{kind} {p95(keys[kind]):.1f} ms (n={len(keys[kind])})" for kind in ("streaming", *BASELINES))
    print(f"pooled p95: {figures}")
    rng = np.random.default_rng(SEED)
    for over, label in BASELINES.items():
        low, high = pooled_interval(runs, over, rng)
        ratio = p95(keys["streaming"]) / p95(keys[over])
        print(f"pooled streaming / {label}: {ratio:.2f}x [95% {low:.2f}, {high:.2f}]")
    print(f"(intervals: runs drawn with replacement, then keys within each, {DRAWS} times)")
    every = keys["streaming"] + keys["approve"]
    print(f"every key of every run: p95 {p95(every):.1f} ms, slowest {max(every):.1f} ms (target p95 <= 100 ms)")


def simulated_runs(rng: np.random.Generator, runs: int = 5) -> list[dict[str, list[float]]]:
    """Runs where streaming and paused keys differ only by chance: each run has its machine's speed, each
    window of 24 keys its minute's, each key its own noise and a tail (about the key bench's shape)."""

    def keys(speed: float, windows: int) -> list[float]:
        out: list[float] = []
        for _ in range(windows):
            minute = speed * np.exp(rng.normal(0, 0.10))
            out += list(15 * minute * np.exp(rng.normal(0, 0.2, 24)) + rng.exponential(1.0, 24))
        return out

    made = []
    for _ in range(runs):
        speed = float(np.exp(rng.normal(0, 0.12)))
        made.append({"streaming": keys(speed, 17), "between": keys(speed, 7), "after": keys(speed, 6), "approve": []})
    return made


def check(sets: int) -> None:
    """How often the interval holds the true ratio (1.0) over `sets` simulated sets of five runs."""
    from scipy.stats import binomtest

    rng = np.random.default_rng(SEED)
    held = 0
    for done in range(1, sets + 1):
        low, high = pooled_interval(simulated_runs(rng), "between", rng)
        held += low <= 1.0 <= high
        if done % 50 == 0:
            print(f"{done} of {sets} sets ...", file=sys.stderr, flush=True)
    bounds = binomtest(held, sets).proportion_ci()
    print(
        f"the 95% interval held the true ratio in {held} of {sets} simulated sets: "
        f"{held / sets:.1%} [95% {bounds.low:.1%}, {bounds.high:.1%}]"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="how many runs of bench_tui.py (default 5)")
    parser.add_argument("--check", type=int, metavar="SETS", help="simulate SETS sets with a known ratio instead")
    args, extra = parser.parse_known_args()
    if args.check is not None:
        if args.check < 1:
            parser.error("--check needs a number of simulated sets, 1 or more (300 take about ten minutes)")
        check(args.check)
        return
    if args.runs < 2:
        parser.error("--runs must be 2 or more: the point is the spread between runs")
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-tui-runs-") as tmp:
        for number in range(1, args.runs + 1):
            print(f"run {number} of {args.runs} ...", file=sys.stderr, flush=True)
            runs.append(run_once(extra, Path(tmp) / f"run-{number}.json"))
    print(f"skilltui TUI benchmark over {args.runs} runs ({' '.join(extra) or 'bench_tui.py defaults'})")
    per_run(runs)
    pooled(runs)


if __name__ == "__main__":
    main()
