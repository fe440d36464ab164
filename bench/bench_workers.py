"""Benchmark: how much `--workers` speeds up a step when every call takes real time.

Six works, two steps, `--offline-latency 0.3` (every backend call takes 0.3 s and streams
its output), trained headless once with `--workers 1` (the baseline, measured in the same
run) and once with `--workers 6`. Forward and loss of different works overlap; reduce and
backward stay in order, as the loop requires. Target: at least 2.5x.

    python bench/bench_workers.py [--latency 0.3] [--works 6]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

from skilltui.cli import main as skilltui
from tests.support.works import write_work


def timed_run(works: list[Path], runs: Path, workers: int, latency: float) -> float:
    argv = [
        "train",
        "--auto",
        "--steps",
        "2",
        "--runs-dir",
        str(runs),
        "--run-id",
        f"w{workers}",
        "--workers",
        str(workers),
        "--offline-latency",
        str(latency),
    ]
    for work in works:
        argv += ["--work", str(work)]
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = skilltui(argv)
    if code != 0:
        raise SystemExit(f"training failed with exit code {code}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--works", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        works = [write_work(Path(tmp) / "works", f"work{i}", 4) for i in range(args.works)]
        one = timed_run(works, Path(tmp) / "runs", 1, args.latency)
        many = timed_run(works, Path(tmp) / "runs", args.works, args.latency)
    print(f"{args.works} works, 2 steps, latency {args.latency}s per call")
    print(f"--workers 1: {one:6.2f} s (baseline)")
    print(f"--workers {args.works}: {many:6.2f} s")
    print(f"speed-up: x{one / many:.2f} (target x2.5)")


if __name__ == "__main__":
    main()
