"""Benchmark: the engine's own overhead per backward micro-step, by pool size.

With the offline backend at zero latency, a micro-step's time is all engine: rendering
the prompt with the pool's headers, the agent's tool calls and commit, the three checks,
the patch, the records and the review. This measures it for pools of 10, 100 and 1,000
notes and prints how it grows.

The baseline, measured in the same run on the same pools, is what the earlier trainer did
on every micro-step: copy the whole pool twice (before and after) and diff the copies.
Target: under 50 ms per micro-step at 1,000 notes, growing with the change, not the pool.

Each pool gets a `--pool-budget` it fits in (the filler notes alone are about 88 tokens
each, so 100 of them are over the default 4,000): a pool over budget has every commit
refused, and the bench would time three failed attempts and a skipped micro-step instead
of one that counts. A measured micro-step that does not end approved stops the bench.

The CPU time per micro-step (this process's and its git processes') is printed beside the
wall time: on a machine other work shares, the wall time moves with their load, the CPU
time much less.

    python bench/bench_engine.py [--repeat 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from skilltui.agents.offline import OfflineBackend
from skilltui.engine.opening import open_run
from skilltui.engine.settings import DEFAULT_POOL_BUDGET, Settings
from skilltui.engine.stages.calls import Calls
from skilltui.engine.stages.context import Context, TrainingWorks
from skilltui.engine.stages.passes import forward, loss
from skilltui.engine.update.micro_step import Evidence, MicroStep
from skilltui.engine.update.review import AutoReviewer
from skilltui.model.at import At
from skilltui.model.bus import EventBus, JsonlSink
from skilltui.pool.notes import FOLDERS, render_note
from tests.support.works import write_work


def fill_pool(root: Path, count: int) -> None:
    """`count` lint-clean filler notes spread over the folders, committed as one commit."""
    folders = list(FOLDERS)
    for i in range(count):
        folder = root / folders[i % len(folders)]
        folder.mkdir(exist_ok=True)
        body = f"Filler guidance number {i}. Keep lines short; prefer the concrete to the general.\n" * 3
        (folder / f"filler-{i:04d}.md").write_text(render_note(f"Filler note {i} about pacing.", body))


def old_trainer_copy(pool: Path, scratch: Path) -> float:
    """The earlier trainer's per-micro-step cost: two full copies of the pool and a recursive diff."""
    started = time.perf_counter()
    for name in ("before", "after"):
        target = scratch / name
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(pool, target, ignore=shutil.ignore_patterns(".git"))
    subprocess.run(["diff", "-ruN", str(scratch / "before"), str(scratch / "after")], capture_output=True)
    return time.perf_counter() - started


def cpu_seconds() -> float:
    """CPU time of this process and of the children it waited for (git)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


async def measure(size: int, repeat: int, base: Path) -> tuple[float, float, float]:
    works = base / "works"
    work = write_work(works, f"bench{size}", 2)
    budget = max(DEFAULT_POOL_BUDGET, 200.0 * size)  # room for the filler and the edits
    opened = open_run(
        Settings(works=[work], runs_dir=base / "runs", run_id=f"pool{size}", auto=True, steps=1, pool_budget=budget)
    )
    pool = opened.run.pool
    fill_pool(pool.root, size)
    pool.commit_all(f"fill {size}")
    bus = EventBus()
    sink = JsonlSink(opened.run.events_path)
    bus.subscribe(sink)
    calls = Calls(OfflineBackend(), opened.settings, opened.prompts, bus)
    ctx = Context(opened.run, opened.settings, opened.prompts, bus, calls, TrainingWorks([]))
    # One real forward + loss gives the micro-steps real evidence to act on.
    await forward(ctx, opened.works[0], At(0, 0), (1, 2))
    sample, _ = await loss(ctx, opened.works[0], At(0, 0), (1, 2))
    ours: list[float] = []
    cpu = 0.0
    for i in range(repeat + 1):
        started, started_cpu = time.perf_counter(), cpu_seconds()
        step = MicroStep(ctx, AutoReviewer(), Evidence([sample], None), At(0, 0, i + 1), repeat + 1)
        await step.run()
        if i:  # the first warms caches (headers, git's index), as every step after the first finds them
            ours.append(time.perf_counter() - started)
            cpu += cpu_seconds() - started_cpu
        decision = json.loads((step.records.out / "commit.txt").read_text())["decision"]
        if decision != "approve":
            raise SystemExit(f"{size} notes: micro-step {i + 1} ended {decision}, not approved; nothing to time")
    scratch = base / f"scratch{size}"
    scratch.mkdir()
    baseline = [old_trainer_copy(pool.root, scratch) for _ in range(max(3, repeat // 2))]
    sink.close()
    opened.lock.release()
    # A mean, not a median: the CPU clock ticks in hundredths of a second.
    return statistics.median(ours), cpu / repeat, statistics.median(baseline)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for size in (10, 100, 1000):
            ours, cpu, baseline = asyncio.run(measure(size, args.repeat, Path(tmp) / str(size)))
            rows.append((size, ours, cpu, baseline))
    print(f"{'notes':>6} {'micro-step':>12} {'its CPU':>9} {'old copy+diff':>14} {'ours/old':>9}")
    for size, ours, cpu, baseline in rows:
        times = f"{ours * 1000:>10.1f}ms {cpu * 1000:>7.1f}ms {baseline * 1000:>12.1f}ms"
        print(f"{size:>6} {times} {ours / baseline:>9.2f}")
    growth, cpu_growth = rows[-1][1] / rows[0][1], rows[-1][2] / rows[0][2]
    old_growth = rows[-1][3] / rows[0][3]
    print(f"growth 10 -> 1000 notes: micro-step x{growth:.2f} (CPU x{cpu_growth:.2f}), old copy+diff x{old_growth:.2f}")
    print(f"target: < 50 ms at 1000 notes -> {'met' if rows[-1][1] < 0.05 else 'NOT met'}")


if __name__ == "__main__":
    main()
