"""Benchmark: the gate's error rates, each with a 95% binomial interval, beside the rule before issue 32.

(a) **Arithmetic** (no engine): the whole decision loop (`gate.judge` and `gate.plan`, in
tests/support/gate_sim.py) on drawn losses: 12 episodes of sd 0.05, a shock shared by each writing
call of sd 0.025 (half the per-episode sd) unless said, runs of 5 decisions in a row (later
ones borrow the earlier trees' spread), 1 to `--gate-max-repeats` (5) passes a side,
`--gate-confidence 0.9`.
Effects are in standard errors of one pass (the sd of the mean delta with one pass a side).
The baseline is the rule before (bench/gate_old.py: episodes counted as independent, every
look and candidate at the full level, a consolidation kept unless shown worse), run on the
same draws; `ratio` is old / new.

(b) **Engine**: `--gate` as shipped, trained with the offline writer (`--offline-noise`
for paragraphs, `--offline-noise-call` for whole calls that ignore the notes) and a scripted
backward agent (tests/support/scripted_backward.py `KnownMoves`) whose updates' truths are known:
each decision is classed by its noise-free validation delta (the same writer, no noise).

    python bench/bench_gate.py [--runs 400] [--engine-runs 20] [--micro-steps 3] [--skip-engine]

Must hold (issue 32): null false-keep with call shocks: upper bound <= 6%; power >= 80% at
3 SE and >= 50% at 2 SE with <= 3 passes a side; K=3 family-wise upper bound <= 6%;
consolidation with harm +0.02 kept <= 10%; the engine's null rate agrees within its interval.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from gate_old import old_judge

from skilltui.agents.offline import MAX_READS, TOPIC_WORDS, moves_taught, write_episode
from skilltui.core.formats import story_episodes
from skilltui.engine.data.works import load_work
from skilltui.engine.loop import Trainer
from skilltui.engine.loss.scores import score_step
from skilltui.engine.opening import open_run
from skilltui.engine.settings import Settings
from skilltui.engine.update.review import AutoReviewer
from skilltui.engine.validation.stats import binomial_interval
from skilltui.model import events as ev
from skilltui.model.bus import EventBus, JsonlSink
from skilltui.model.parse import read_run
from skilltui.pool.notes import Pool
from skilltui.store import val_store
from tests.support.gate_sim import Tally, World, simulate
from tests.support.known_truths import MENU, START, held_out
from tests.support.scripted import seed_pool
from tests.support.scripted_backward import KnownMoves
from tests.support.works import write_work

TIE = 1e-6  # a true delta this small is no effect at all (losses are kept to 4 places)
SHOCKED = World()
PLAIN = World(shock=0.0)


def rate(kept: int, n: int) -> str:
    low, high = binomial_interval(kept, n)
    return f"{100 * kept / n:5.1f}% [{100 * low:4.1f}, {100 * high:4.1f}]" if n else "   -"


def arithmetic(runs: int) -> dict[str, Tally]:
    se = SHOCKED.pass_se
    rows: list[tuple[str, World, float]] = [
        ("null, per-episode noise only", PLAIN, 0.0),
        ("null, call shock sd 0.025", SHOCKED, 0.0),
        *[(f"power at {k:g} SE ({k * se:.3f})", SHOCKED, -k * se) for k in (0.5, 1, 2, 3)],
        ("K=3 null candidates (family-wise)", World(family=3), 0.0),
        ("consolidation, harm +0.01", World(margin=0.01), 0.01),
        ("consolidation, harm +0.02", World(margin=0.01), 0.02),
        ("consolidation, harm 0 (neutral)", World(margin=0.01), 0.0),
    ]
    print(f"(a) arithmetic: {runs} runs x {SHOCKED.decisions} decisions per row; one pass's SE {se:.4f}")
    head = f"{'case':<36} | {'new: kept [95%]':>21} | {'old: kept [95%]':>21} | ratio | passes/side | episodes/dec"
    print(head + "\n" + "-" * len(head))
    found: dict[str, Tally] = {}
    for i, (name, world, effect) in enumerate(rows):
        started = time.perf_counter()
        new = simulate(world, effect, runs, seed=100 + i)
        old = simulate(world, effect, runs, seed=100 + i, rule_of=old_judge)
        found[name] = new
        ratio = f"{old.kept / new.kept:5.2f}" if new.kept else "    -"
        print(
            f"{name:<36} | {rate(new.kept, new.decisions):>21} | {rate(old.kept, old.decisions):>21} | {ratio} | "
            f"{new.per_side():5.2f} ({old.per_side():4.2f}) | {new.episodes / new.decisions:6.1f}"
            f"   [{new.decisions} decisions, {time.perf_counter() - started:.0f} s]",
            flush=True,
        )
    return found


@dataclass
class Engine:
    kept: dict[str, int]
    seen: dict[str, int]
    passes: int = 0
    tokens: int = 0
    decisions: int = 0


class Truth:
    """The noise-free validation loss of a commit's notes: the offline writer's own reading, without noise."""

    def __init__(self, val: Path, last: int, scratch: Path) -> None:
        self.work = load_work(val)
        self.episodes = story_episodes(self.work.story_path.read_text(encoding="utf-8"))
        self.human = {n: self.work.episode_text(n) for n in range(1, last + 1)}
        self.scratch = scratch
        self.cache: dict[str, float] = {}

    def loss(self, pool_root: Path, commit: str) -> float:
        tree = Pool(pool_root).git("rev-parse", f"{commit}^{{tree}}")
        if tree not in self.cache:
            notes = val_store.write_tree(pool_root, self.scratch, tree)
            pool = Pool(notes)
            moves: set[str] = set()
            read = 0
            for rel, description in pool.headers():  # the same choice of notes as the writer's
                if read >= MAX_READS or not any(word in description.lower() for word in TOPIC_WORDS):
                    continue
                read += 1
                moves |= moves_taught((notes / rel).read_text(encoding="utf-8"))
            written = {n: write_episode(self.episodes[n], moves) for n in self.human}
            self.cache[tree] = float(score_step(written, self.human)["loss"])
        return self.cache[tree]


async def one_run(base: Path, only: str | None, seed: int, args: argparse.Namespace, tally: Engine) -> None:
    works = base / "works"
    train = works / "train" if (works / "train").exists() else write_work(works, "train", 2, seed=seed)
    val = works / "held" if (works / "held").exists() else held_out(works, args.val_episodes, seed)
    donor = base / "donor" if (base / "donor").exists() else seed_pool(base / "donor", *START)
    run_id = f"{only or 'mixed'}-{seed}"
    settings = Settings(
        works=[train],
        val_works=[val],
        init_pool=donor,
        steps=1,
        episodes_per_step=2,
        epochs=args.micro_steps,
        gate=True,
        auto=True,
        runs_dir=base / "runs",
        run_id=run_id,
        val_episodes=args.val_episodes,
        offline_noise=args.noise,
        offline_noise_call=args.call_noise,
        consolidate=False,  # the bench measures updates, whose truths are on the menu
    )
    opened = open_run(settings)
    bus = EventBus()
    bus.subscribe(JsonlSink(opened.run.events_path))
    backend = KnownMoves(seed, noise=args.noise, call_noise=args.call_noise, menu=MENU, only=only)
    try:
        await Trainer(opened, backend, AutoReviewer(), bus).train()
    finally:
        opened.lock.release()
    truth = Truth(val, args.val_episodes, base / f"truth-{run_id}")
    for e in read_run(opened.run.events_path).events:
        if isinstance(e, ev.DecisionMade):
            delta = truth.loss(opened.run.memory, e.after) - truth.loss(opened.run.memory, e.before)
            kind = "helpful" if delta < -TIE else "harmful" if delta > TIE else "neutral"
            tally.seen[kind] += 1
            tally.kept[kind] += e.decision == "approve"
            tally.decisions += 1
        elif isinstance(e, ev.Call) and e.work == "held":
            tally.passes += e.role == "forward"
            tally.tokens += e.input_tokens + e.output_tokens


async def engine(args: argparse.Namespace) -> None:
    print(
        f"\n(b) engine: {args.engine_runs} runs x {args.micro_steps} micro-steps per case, offline writer with "
        f"--offline-noise {args.noise} --offline-noise-call {args.call_noise}, {args.val_episodes} validation episodes"
    )
    for only in ("neutral", None):
        tally = Engine(
            dict.fromkeys(("helpful", "harmful", "neutral"), 0), dict.fromkeys(("helpful", "harmful", "neutral"), 0)
        )
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
            for seed in range(args.engine_runs):
                await one_run(Path(tmp) / f"s{seed}", only, seed, args, tally)
        parts = "; ".join(f"{k} kept {rate(tally.kept[k], tally.seen[k])} of {tally.seen[k]}" for k in tally.seen)
        print(
            f"{'null updates' if only else 'mixed updates'}: {parts}; {tally.passes / 2 / max(tally.decisions, 1):.2f} "
            f"passes a side and {tally.tokens / max(tally.decisions, 1):,.0f} validation tokens per decision "
            f"[{tally.decisions} decisions, {time.perf_counter() - started:.0f} s]",
            flush=True,
        )


def verdicts(found: dict[str, Tally]) -> None:
    def high(name: str) -> float:
        return found[name].rate()[2]

    def point(name: str) -> float:
        return found[name].rate()[0]

    def power(size: int) -> str:
        return next(k for k in found if k.startswith(f"power at {size} SE"))

    checks = [
        ("null false-keep with call shocks, upper bound <= 6%", high("null, call shock sd 0.025") <= 0.06),
        ("power >= 80% at 3 SE", point(power(3)) >= 0.8),
        ("power >= 50% at 2 SE", point(power(2)) >= 0.5),
        ("<= 3 passes a side on average", all(t.per_side() <= 3 for k, t in found.items() if k.startswith("power"))),
        ("K=3 family-wise upper bound <= 6%", high("K=3 null candidates (family-wise)") <= 0.06),
        ("consolidation +0.02 kept <= 10%", high("consolidation, harm +0.02") <= 0.10),
    ]
    print("must-hold (a): " + "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in checks))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400, help="simulated runs per row of (a), 5 decisions each")
    parser.add_argument("--engine-runs", type=int, default=20, help="engine runs per case of (b)")
    parser.add_argument("--micro-steps", type=int, default=3, help="micro-steps per engine run (default 3)")
    parser.add_argument("--val-episodes", type=int, default=12, help="validation episodes per pass (default 12)")
    parser.add_argument("--noise", type=float, default=0.1, help="--offline-noise of the engine runs")
    parser.add_argument("--call-noise", type=float, default=0.1, help="--offline-noise-call of the engine runs")
    parser.add_argument("--skip-engine", action="store_true", help="only the arithmetic part (a)")
    args = parser.parse_args()
    found = arithmetic(args.runs)
    verdicts(found)
    if not args.skip_engine:
        await engine(args)


if __name__ == "__main__":
    asyncio.run(main())
