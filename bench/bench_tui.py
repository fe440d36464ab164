"""Benchmark: does the terminal app answer keys while sixteen works stream, and does it stay small?

Drives the real app headless (`App.run_test`) on 16 generated works through the offline
backend, which streams every call's output in pieces over `--latency` seconds, and
approves every micro-step from the review screen like a person would. Meanwhile it presses
keys and times each one from the moment the key reaches the app to the end of the first
frame Textual draws with its effect in place (`Frames`):

- `down`/`up` in the works table: the live output switches to the other work;
- `a` on the review screen (pressed 0.3 s after it appears): the screen is gone and the
  main screen is back.

The baseline is the same navigation key with the engine idle after the run finished (warm
caches, full output buffers), in the same process; the key is also timed with the engine
paused before training starts. On a shared machine the load of other processes moves by
more than the app's own cost between the run and the minute after it, so the key is also
timed while the run itself stands paused, every `--idle-every` seconds: the trainer held
before its next stage and nothing in flight, same buffers, same minute's load
("idle between"). The figures that matter are the ratios streaming / idle and the p95 over
every key of the run against the 100 ms target. Memory is the proportional
set size (PSS) of the app and of its trainer's process together after each finished step
(the app trains in a process of its own; PSS counts a page they share once); the growth
per step is the slope over the second half of the run (over the default 10 steps that is
mostly caches and buffers still filling to their bounds; 30 steps or more show what a long
run keeps), with the count of the app's live Python allocations beside it (memory rarely
shrinks once Python has taken it; the allocation count shows what is kept).
The per-work output buffers fill up to their bound over the first dozen or so steps; the
bench prints that share of the growth apart (as characters held, about a byte each).

    python bench/bench_tui.py                       # 16 works, 10 steps, 0.3 s per call
    python bench/bench_tui.py --works 16 --steps 30 --latency 0.2

Not part of the test suite: it prints figures, it does not pass or fail.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from textual import events
from textual.screen import Screen

from skilltui.agents.offline import OfflineBackend
from skilltui.apps.train.app import TrainingApp
from skilltui.apps.train.collector import settle_heap
from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.apps.train.widgets.live_output import LiveOutput
from skilltui.engine.opening import open_run
from skilltui.engine.settings import Settings
from tests.support.works import write_work  # the tests' generator of works the project never saw

TARGET_MS = 100.0
# Keys per paused window: a p95 "between" over 16 keys (8 a window, two windows in a short run)
# was the second-slowest key, and moved by a third between runs of the same code.
WINDOW_PRESSES = 24


def rss_kb(pid: int | str = "self") -> int:
    """Memory of a process now: its proportional share (PSS), so a page the trainer's process
    shares with the app (a mapped library) counts once between them. Linux /proc; this one's
    peak elsewhere, 0 for a child."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            return next(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
    except (OSError, StopIteration):
        if pid != "self":
            return 0
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def percentile(values, q: float) -> float:
    """The value at round(q * (n - 1)) in order: a time some key took, never one between two.
    Plain Python: numpy imported here would add about 11 MB to the app's memory this bench reports."""
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))])


class Frames:
    """Ends of the frames Textual draws, for the key being timed.

    A frame is drawn by `Screen._compositor_refresh` (Textual 8, pinned): every refresh of
    the screen, a layout's included, ends there. The key's time ends with the first frame
    that began with its effect in place. Waiting for the effect and then asking
    `call_after_refresh` timed the frame after that one whenever the effect was drawn
    before the bench looked: a frame later, and only while something else kept drawing.
    """

    def __init__(self) -> None:
        self.effect = None
        self.drawn: asyncio.Future | None = None
        original = Screen._compositor_refresh

        def refresh(screen: Screen) -> None:
            effect, drawn = self.effect, self.drawn
            held = effect is not None and drawn is not None and not drawn.done() and effect()
            original(screen)
            if held and screen is screen.app.screen:
                drawn.set_result(time.perf_counter())

        Screen._compositor_refresh = refresh

    def watch(self, effect, drawn: asyncio.Future | None) -> None:
        self.effect, self.drawn = effect, drawn


FRAMES = Frames()


def slope(points: list[tuple[int, int]]) -> float:
    """Least-squares slope of (step, kB) points: kB per step."""
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


class Bench:
    def __init__(self, app: TrainingApp) -> None:
        self.app = app
        self.idle: list[float] = []
        self.idle_after: list[float] = []
        self.idle_between: list[float] = []
        self.streaming: list[float] = []
        self.approve: list[float] = []
        self.memory: list[tuple[int, int]] = []  # (step, kB): the app and its trainer's process together
        self.engine: list[tuple[int, int]] = []  # (step, kB): the trainer's process alone
        self.buffered: list[tuple[int, int]] = []  # (step, kB of text the output buffers hold)
        self.blocks: list[tuple[int, int]] = []
        self.lost = 0

    async def press(self, key: str, effect, screen, *, leaves: bool = False) -> float | None:
        """Milliseconds from the key reaching the app to the end of the first frame drawn with `effect()` holding.

        None when the screen changed under the key, which is no measure of the app's speed:
        a review popped up as it was pressed (so the key went to the review), or before its
        effect was drawn (so what the frame drew was the review, not the key's effect).
        `leaves`: the key's effect is to close `screen` (approve on the review screen).
        """
        app = self.app
        drawn = asyncio.get_running_loop().create_future()
        started = time.perf_counter()
        FRAMES.watch(effect, drawn)
        try:
            app._driver.send_message(events.Key(key, key if len(key) == 1 else None))  # a real terminal's path
            while not drawn.done():
                if (app.screen is not screen and not leaves) or time.perf_counter() - started > 10:
                    self.lost += 1
                    return None
                await asyncio.sleep(0.002)  # the frame's end is stamped as it is drawn, not here
            took = (drawn.result() - started) * 1000
        finally:
            FRAMES.watch(None, None)
        if app.screen is not screen and not leaves:
            self.lost += 1
            return None
        return took

    async def navigate(self, into: list[float]) -> None:
        if not self.app.is_running:
            # A stop signal closes the app as q then y does; each key would wait out its 10 s.
            raise SystemExit("bench_tui.py: the app closed under the bench (a stop signal?); no figures")
        live = self.app.query_one(LiveOutput)
        key = "down" if self.app.selected_work == min(self.app.view.works) else "up"
        before = live.work
        took = await self.press(key, lambda: live.work != before, self.app.default_screen)
        if took is not None:
            into.append(took)

    async def idle_window(self, presses: int, interval: float) -> None:
        """Hold the run before its next stage, let what is in flight end, and time `presses` keys."""
        app = self.app
        app.driver.pause()
        try:
            # What was in flight ends; a backward pass that ends opens its review, approved
            # untimed (with the run held, nothing starts after it).
            deadline = time.monotonic() + 15
            while app.view.in_flight or app.main.queue or app.screen is not app.default_screen:
                if time.monotonic() > deadline:
                    return
                if isinstance(app.screen, ReviewScreen) and app.screen.is_mounted:
                    await asyncio.sleep(0.3)
                    app._driver.send_message(events.Key("a", "a"))
                    await wait(lambda: not isinstance(app.screen, ReviewScreen), timeout=10)
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.3)  # the last events drawn
            for _ in range(presses):
                if app.screen is not app.default_screen:
                    return  # a review opened: it is answered in the loop
                await self.navigate(self.idle_between)
                await asyncio.sleep(interval)
        finally:
            app.driver.resume()

    async def run(self, idle_presses: int, interval: float, idle_every: float = 6.0) -> None:
        app = self.app
        await wait(lambda: app.selected_work is not None and app.driver is not None)
        app.driver.pause()  # the idle baseline: nothing streams, nothing trains
        for _ in range(idle_presses):
            await self.navigate(self.idle)
            await asyncio.sleep(interval)
        app.driver.resume()
        steps_seen = 0
        window_at = time.monotonic()
        while app.training:
            if idle_every and time.monotonic() - window_at > idle_every and app.screen is app.default_screen:
                await self.idle_window(WINDOW_PRESSES, interval)
                window_at = time.monotonic()
                continue
            if isinstance(app.screen, ReviewScreen):
                screen, request = app.screen, app.screen.request
                await asyncio.sleep(0.3)  # nobody answers a review faster than they can see it

                # The app keeps one review screen, so the effect is "not this request on screen".
                def answered(screen=screen, request=request) -> bool:
                    return app.screen is not screen or screen.request is not request

                took = await self.press("a", answered, screen, leaves=True)
                if took is not None:
                    self.approve.append(took)
            elif app.screen is app.default_screen:
                await self.navigate(self.streaming)
            done = sum(1 for step in app.view.steps.values() if step.finished)
            if done > steps_seen:
                steps_seen = done
                gc.collect()
                pid = getattr(app.driver, "pid", None)  # None: trains in this process, or has ended
                engine = rss_kb(pid) if pid else 0
                # Once the trainer's process has ended, the sum would drop by all of it.
                if engine or not hasattr(app.driver, "pid"):
                    self.memory.append((done, rss_kb() + engine))
                    self.engine.append((done, engine))
                text = sum(len(buffer.text()) for buffer in app.main.feed.buffers.values())
                self.buffered.append((done, text // 1024))
                self.blocks.append((done, sys.getallocatedblocks()))
            await asyncio.sleep(interval)
        # The same key with the engine done: warm caches and full buffers, nothing streaming.
        for _ in range(idle_presses):
            await self.navigate(self.idle_after)
            await asyncio.sleep(interval)


async def wait(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.01)


def summary(name: str, values: list[float]) -> str:
    if not values:
        return f"{name:<28} no samples"
    return (
        f"{name:<28} n={len(values):<5} p50 {percentile(values, 0.5):6.1f} ms   "
        f"p95 {percentile(values, 0.95):6.1f} ms   max {max(values):6.1f} ms"
    )


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as tmp:
        root = Path(tmp)
        os.environ["XDG_CONFIG_HOME"] = str(root / "config")
        episodes = args.steps * args.episodes_per_step
        works = [write_work(root / "works", f"work-{n:02d}", episodes, seed=n) for n in range(args.works)]
        settings = Settings(
            works=works,
            steps=args.steps,
            episodes_per_step=args.episodes_per_step,
            workers=args.works,
            group_size=4,
            runs_dir=root / "runs",
            run_id="bench",
            offline_latency=args.latency,
        )
        opened = open_run(settings)
        app = TrainingApp(opened, OfflineBackend(latency=args.latency), secrets=[], hint=False)
        settle_heap()  # as run_app does before it starts the app
        bench = Bench(app)
        started = time.perf_counter()
        try:
            async with app.run_test(size=(120, 36)):
                await bench.run(args.idle_presses, args.interval, args.idle_every)
        finally:
            opened.lock.release()
        seconds = time.perf_counter() - started

    if args.samples:  # every key's time, for `bench_tui_runs.py` to pool over runs
        keys = {"idle": bench.idle, "after": bench.idle_after, "between": bench.idle_between}
        keys |= {"streaming": bench.streaming, "approve": bench.approve}
        Path(args.samples).write_text(json.dumps(keys))
    print(f"skilltui TUI benchmark: {args.works} works, {args.steps} steps, offline latency {args.latency} s per call")
    print(f"run took {seconds:.1f} s; outcome {app.outcome.status if app.outcome else 'none'}")
    print(summary("key, idle before training", bench.idle))
    print(summary("key, idle after (baseline)", bench.idle_after))
    print(summary("key, idle between (paused)", bench.idle_between))
    print(summary(f"key, {args.works} works streaming", bench.streaming))
    print(summary("approve on the review screen", bench.approve))
    print(f"keys not measured (the screen changed under them): {bench.lost}")
    if bench.idle_after and bench.streaming:
        ratio50 = percentile(bench.streaming, 0.5) / percentile(bench.idle_after, 0.5)
        ratio95 = percentile(bench.streaming, 0.95) / percentile(bench.idle_after, 0.95)
        print(f"ratio streaming / idle        p50 {ratio50:.2f}x   p95 {ratio95:.2f}x")
    if bench.idle_between and bench.streaming:
        between50 = percentile(bench.streaming, 0.5) / percentile(bench.idle_between, 0.5)
        between95 = percentile(bench.streaming, 0.95) / percentile(bench.idle_between, 0.95)
        print(f"ratio streaming / idle between p50 {between50:.2f}x   p95 {between95:.2f}x (same minutes' load)")
    if bench.idle_after and bench.streaming:
        every = bench.streaming + bench.approve
        verdict = "meets" if percentile(every, 0.95) <= TARGET_MS else "misses"
        p95 = percentile(every, 0.95)
        print(f"target p95 <= {TARGET_MS:.0f} ms: {verdict} ({p95:.1f} ms over every key in the run)")
    if bench.memory:
        half = bench.memory[len(bench.memory) // 2 :]
        first, last = bench.memory[0], bench.memory[-1]
        print(
            f"memory (PSS, the app and its trainer's process) after step {first[0]}: {first[1] / 1024:.1f} MB; "
            f"after step {last[0]}: {last[1] / 1024:.1f} MB; growth over the second half {slope(half):+.0f} kB/step"
        )
        if args.steps < 30:
            print(f"  ({args.steps} steps: mostly caches and buffers filling; --steps 30 shows what a long run keeps)")
        engine = bench.engine[len(bench.engine) // 2 :]
        print(f"  of which the trainer's process: {bench.engine[-1][1] / 1024:.1f} MB, {slope(engine):+.0f} kB/step")
        # The output buffers fill up to their bound (OUTPUT_LIMIT characters per work) over the
        # first steps: growth that stops. What is left once it is taken out is what a long run keeps.
        filled = slope(bench.buffered[len(bench.buffered) // 2 :])
        print(
            f"  of which the output buffers filling to their bound: {filled:+.0f} kB/step "
            f"(they hold {bench.buffered[-1][1]} kB); the rest {slope(half) - filled:+.0f} kB/step"
        )
        blocks = bench.blocks[len(bench.blocks) // 2 :]
        print(
            f"live Python objects (allocated blocks) after step {bench.blocks[0][0]}: {bench.blocks[0][1]:,}; "
            f"after step {bench.blocks[-1][0]}: {bench.blocks[-1][1]:,}; second half {slope(blocks):+,.0f} blocks/step"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--works", type=int, default=16)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--episodes-per-step", type=int, default=1)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per offline call (default 0.3)")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between key presses")
    # Enough idle keys that the baseline's p95 is not one or two slow presses.
    parser.add_argument("--idle-presses", type=int, default=150)
    parser.add_argument(
        "--idle-every", type=float, default=6.0, help="seconds between paused windows of idle keys (0: none)"
    )
    parser.add_argument("--samples", metavar="PATH", help="also write every key's milliseconds to PATH (JSON)")
    asyncio.run(main(parser.parse_args()))
