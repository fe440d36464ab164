"""Benchmark: the test suite's time with its shortcuts against without them, in the same run.

The suite scores inline, trains the app's runs in the app's own loop and copies trained runs
from a template made once a session (tests/conftest.py). `--no-shortcuts` turns all three off:
scoring in the worker pool, a trainer process for every app, every trained run trained
afresh, as the product does and the suite once did. This runs the same selection both ways,
alternating, and prints each round's wall and CPU seconds (CPU: pytest and every process it
waited for) and the ratio of the medians.

The default selection is the files the shortcuts touch most: app tests, the users of the run
templates, the resume and damage tests. `--tests` takes any pytest arguments instead (`tests` for the
whole suite). On a shared machine the wall figures move with the load; the CPU figures less.

    python bench/bench_suite.py [--rounds 1] [--workers 0] [--per-file] [--tests tests/test_tui_app.py ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [
    "tests/test_tui_app.py",
    "tests/test_tui_review.py",
    "tests/test_tui_polish.py",
    "tests/test_review_keys_and_marks.py",
    "tests/test_history_review.py",
    "tests/test_history_runs.py",
    "tests/test_blame.py",
    "tests/test_history_operations.py",
    "tests/test_resume_repairs.py",
    "tests/test_damaged_records.py",
    "tests/test_compare.py",
    "tests/test_pool_damage.py",
]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(tests: list[str], workers: int, *, shortcuts: bool) -> tuple[float, float, str]:
    """(wall s, CPU s, pytest's last line) of one pytest run of `tests`."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
    if workers:
        argv += ["-n", str(workers)]
    if not shortcuts:
        argv.append("--no-shortcuts")
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as base:
        argv += ["--basetemp", base]
        cpu, started = children_cpu(), time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    if done.returncode != 0:
        print(f"  pytest exited {done.returncode}: {last}", file=sys.stderr)
    return wall, children_cpu() - cpu, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="runs each way, alternating (default 1)")
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist workers; 0 runs serially (default)")
    parser.add_argument("--tests", nargs="+", default=DEFAULT, help="what to run (pytest arguments)")
    parser.add_argument("--per-file", action="store_true", help="time each file of --tests on its own, both ways")
    args = parser.parse_args()
    os.environ.pop("SKILLTUI_SCORING", None)  # each way sets its own
    selections = [[test] for test in args.tests] if args.per_file else [args.tests]
    totals = {False: [0.0, 0.0], True: [0.0, 0.0]}
    for selection in selections:
        name = " ".join(selection)
        timings: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for round_ in range(1, args.rounds + 1):
            for shortcuts in (False, True):
                wall, cpu, last = one_run(selection, args.workers, shortcuts=shortcuts)
                timings[shortcuts].append((wall, cpu))
                way = "shortcuts   " if shortcuts else "no shortcuts"
                print(f"{name[:60]}: round {round_} {way}: wall {wall:6.1f} s  cpu {cpu:6.1f} s  ({last})", flush=True)
        for shortcuts, runs in timings.items():
            for i in (0, 1):
                totals[shortcuts][i] += statistics.median(t[i] for t in runs)
        report(name[:60], timings)
    if args.per_file:
        print(
            f"all {len(selections)} files: wall {totals[False][0]:.1f} s -> {totals[True][0]:.1f} s "
            f"({totals[False][0] / totals[True][0]:.2f}x), cpu {totals[False][1]:.1f} s -> {totals[True][1]:.1f} s "
            f"({totals[False][1] / totals[True][1]:.2f}x)"
        )


def report(name: str, timings: dict[bool, list[tuple[float, float]]]) -> None:
    old_wall, old_cpu = (statistics.median(t[i] for t in timings[False]) for i in (0, 1))
    new_wall, new_cpu = (statistics.median(t[i] for t in timings[True]) for i in (0, 1))
    print(
        f"{name}: median wall {old_wall:.1f} s -> {new_wall:.1f} s ({old_wall / new_wall:.2f}x), "
        f"cpu {old_cpu:.1f} s -> {new_cpu:.1f} s ({old_cpu / new_cpu:.2f}x)",
        flush=True,
    )


if __name__ == "__main__":
    main()
