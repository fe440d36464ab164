"""Benchmark: does a long run stay as fast and as small at its end as near its start?

Four works trained headless through the offline backend at zero latency, so a step's time
is all engine: forward and loss of every work, the backward micro-step, the checks, the
records. Over 300 steps (10 steps an epoch, 30 epochs) any per-step work that grows with
the run (globbing every earlier micro-step's records, folding the whole events file, walking
the whole git log) shows up as a step that gets slower, and anything the process keeps per
step as memory that keeps growing.

The baseline is the same run's own step 50 (caches are warm by then, the pool has settled
to its size): the bench prints RSS and step time at the last step against it, as ratios.
Step time is the median over the ten steps up to each point, so one slow step (a git gc, a
full garbage collection) does not decide it. Target: at most 1.2x for both.

Beside the step time, what it is made of, so a reader can tell work that grows with the
run from a machine that got busier:

- CPU per step: this process's (every thread's) plus its git processes';
- fsync per step: the time spent waiting for the disk to take the records (`os.fsync`,
  summed over the threads that call it). A record is durable before the run goes on, so on
  ext4 every fsync also waits for whatever else the disk was given, other programs' writes
  included: on a shared machine this column moves with their load, not with the run.

Engine work that grew with the run would show in the CPU column.

    python bench/bench_long_run.py               # 300 steps, about ten minutes
    python bench/bench_long_run.py --steps 80    # a short look (the baseline stays at step 50)

Not part of the test suite: it prints figures, it does not pass or fail.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from skilltui.agents.offline import OfflineBackend
from skilltui.drivers.driver import RunDriver
from skilltui.engine.opening import open_run
from skilltui.engine.settings import Settings
from skilltui.engine.update.review import AutoReviewer
from skilltui.model import events as ev
from tests.support.works import write_work  # the tests' generator of works the project never saw

STEPS_PER_EPOCH = 10
BASELINE_STEP = 50
WINDOW = 10
TARGET = 1.2


class FsyncClock:
    """Seconds spent in os.fsync so far, from every thread: the bench wraps os.fsync with it."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._lock = threading.Lock()
        self._fsync = os.fsync

    def __call__(self, fd: int) -> None:
        started = time.perf_counter()
        try:
            self._fsync(fd)
        finally:
            with self._lock:
                self.seconds += time.perf_counter() - started


FSYNC = FsyncClock()
os.fsync = FSYNC  # every record's fsync, the engine's and the events sink's, goes through it


def cpu_seconds() -> float:
    """CPU time of this process and of the children it waited for (git): the engine's own work."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def rss_kb() -> int:
    """Resident set size of this process now (Linux /proc); its peak where /proc is missing."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class StepClock:
    """Per finished step: the seconds since the previous one finished, and the RSS then."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.cpu: list[float] = []
        self.fsync: list[float] = []
        self.rss: list[int] = []
        self._last = time.perf_counter()
        self._last_cpu = cpu_seconds()
        self._last_fsync = FSYNC.seconds

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.StepFinished):
            now, cpu, synced = time.perf_counter(), cpu_seconds(), FSYNC.seconds
            self.seconds.append(now - self._last)
            self.cpu.append(cpu - self._last_cpu)
            self.fsync.append(synced - self._last_fsync)
            self.rss.append(rss_kb())
            self._last, self._last_cpu, self._last_fsync = now, cpu, synced
            done = len(self.seconds)
            if done % 25 == 0:
                print(f"  step {done}: {self.seconds[-1] * 1000:.0f} ms, RSS {self.rss[-1] / 1024:.1f} MB", flush=True)

    def at(self, step: int) -> tuple[float, float, float, int]:
        """Over the window ending at `step` (1-based): the median step time, the mean CPU and fsync
        time (the CPU clock ticks in hundredths of a second: a median would round to them), and
        the RSS after it."""
        window = slice(max(0, step - WINDOW), step)
        cpu, synced = (statistics.fmean(series[window]) for series in (self.cpu, self.fsync))
        return statistics.median(self.seconds[window]), cpu, synced, self.rss[step - 1]


async def train(base: Path, steps: int, works: int) -> StepClock:
    paths = [write_work(base / "works", f"work{i}", STEPS_PER_EPOCH) for i in range(works)]
    settings = Settings(
        works=paths,
        runs_dir=base / "runs",
        run_id="long",
        auto=True,
        steps=STEPS_PER_EPOCH,
        episodes_per_step=1,
        epochs=-(-steps // STEPS_PER_EPOCH),
    )
    opened = open_run(settings)
    clock = StepClock()
    driver = RunDriver(opened, OfflineBackend(), AutoReviewer(), secrets=[], sinks=(clock,))
    try:
        outcome = await driver.run()
    finally:
        driver.close()
        opened.lock.release()
    if outcome.status != "finished":
        raise SystemExit(f"the run ended {outcome.status}: {outcome.reason}")
    return clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300, help="steps to train (a multiple of 10; at least 60)")
    parser.add_argument("--works", type=int, default=4)
    args = parser.parse_args()
    if args.steps < BASELINE_STEP + WINDOW or args.steps % STEPS_PER_EPOCH:
        parser.error(f"--steps must be a multiple of {STEPS_PER_EPOCH} and at least {BASELINE_STEP + WINDOW}")
    print(f"{args.works} works, {args.steps} steps ({STEPS_PER_EPOCH} an epoch), offline backend, latency 0")
    with tempfile.TemporaryDirectory() as tmp:
        clock = asyncio.run(train(Path(tmp), args.steps, args.works))
    last = len(clock.seconds)
    base_time, base_cpu, base_sync, base_rss = clock.at(BASELINE_STEP)
    end_time, end_cpu, end_sync, end_rss = clock.at(last)
    growth = (end_rss - base_rss) / (last - BASELINE_STEP)
    print(f"{'':>10} {'step time':>10} {'RSS':>10} {'CPU/step':>10} {'fsync/step':>11}")
    print(
        f"{'step ' + str(BASELINE_STEP):>10} {base_time * 1000:>8.0f}ms {base_rss / 1024:>8.1f}MB"
        f" {base_cpu * 1000:>8.0f}ms {base_sync * 1000:>9.0f}ms  (baseline)"
    )
    print(
        f"{'step ' + str(last):>10} {end_time * 1000:>8.0f}ms {end_rss / 1024:>8.1f}MB"
        f" {end_cpu * 1000:>8.0f}ms {end_sync * 1000:>9.0f}ms"
    )
    time_ratio, rss_ratio = end_time / base_time, end_rss / base_rss
    cpu_ratio = end_cpu / base_cpu if base_cpu else float("nan")
    sync_ratio = end_sync / base_sync if base_sync else float("nan")
    print(
        f"{'ratio':>10} {time_ratio:>9.2f}x {rss_ratio:>9.2f}x {cpu_ratio:>9.2f}x {sync_ratio:>10.2f}x"
        f"  (target <= {TARGET}x for time and RSS)"
    )
    print(f"RSS growth after step {BASELINE_STEP}: {growth:.1f} kB/step")
    met = time_ratio <= TARGET and rss_ratio <= TARGET
    print(f"target: {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
