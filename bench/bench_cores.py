"""Benchmark: how much slower one core runs the same Python while another core is busy.

The key bench (`bench_tui.py`) compares keys pressed while the trainer streams against keys
pressed with the run paused. The trainer runs on another core, so even an app that did no
more work per key would see whatever the machine takes from one core while another is busy:
a shared cache, memory bandwidth, a host that clocks a busy socket lower. This measures that
floor directly: a fixed piece of Python (dict writes, string building, a sort; about 15 ms)
timed `--samples` times on one core with the other core idle, then with a busy loop on it
(niced and `SCHED_BATCH`, as the trainer is). It prints p50 and p95 of each and their ratios,
`--repeats` times: the repeats show how far a p95 of a few hundred samples moves on its own.

    python bench/bench_cores.py                    # 3 repeats of 300 samples each way
    python bench/bench_cores.py --repeats 5 --samples 500

Linux with two cores or more (it pins itself and the busy loop with `sched_setaffinity`).
Not part of the test suite: it prints figures, it does not pass or fail.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from bench_tui import percentile  # a sibling script: the key bench's own p95

BUSY = """
import os
os.sched_setaffinity(0, {%d})
os.nice(10)
if hasattr(os, "SCHED_BATCH"):
    os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
while True:
    sum(range(10_000))
"""


def work() -> float:
    """Milliseconds for one fixed piece of Python, about the size of a key's frame."""
    started = time.perf_counter()
    table: dict[int, str] = {}
    for n in range(40_000):
        table[n % 977] = str(n) * 2
    sorted(table.values())
    return (time.perf_counter() - started) * 1000


def sample(count: int) -> tuple[float, float]:
    """p50 and p95 of `count` timings, 10 ms apart (the key bench's keys are spaced too)."""
    times = []
    for _ in range(count):
        times.append(work())
        time.sleep(0.01)
    return percentile(times, 0.5), percentile(times, 0.95)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300, help="timings each way per repeat (default 300)")
    parser.add_argument("--repeats", type=int, default=3, help="idle/busy pairs (default 3)")
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 2:
        parser.error("needs Linux and two cores or more to pin one timing core and one busy core")
    if args.samples < 20 or args.repeats < 1:
        parser.error("--samples must be 20 or more and --repeats 1 or more")
    mine, other = cpus[0], cpus[1]
    os.sched_setaffinity(0, {mine})
    print(f"one core ({mine}) times a fixed piece of Python; core {other} idle, then busy")
    for repeat in range(1, args.repeats + 1):
        idle = sample(args.samples)
        busy = subprocess.Popen([sys.executable, "-c", BUSY % other])
        try:
            time.sleep(0.5)  # the busy loop is running before the first timing
            loaded = sample(args.samples)
        finally:
            busy.kill()
            busy.wait()
        print(
            f"repeat {repeat}: idle p50 {idle[0]:.2f} ms p95 {idle[1]:.2f} ms; "
            f"busy p50 {loaded[0]:.2f} ms p95 {loaded[1]:.2f} ms; "
            f"busy / idle p50 {loaded[0] / idle[0]:.3f}x p95 {loaded[1] / idle[1]:.3f}x"
        )


if __name__ == "__main__":
    main()
