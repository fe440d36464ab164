"""Benchmark: what the gate keeps, against known truths, today's rule beside the new one.

A scripted backward agent (tests/scripted_backward.py `KnownMoves`, on the held-out work of
tests/known_truths.py) makes helpful, harmful and neutral updates; the offline writer garbles
a share of its paragraphs (`--offline-noise`), so the same notes score differently from pass
to pass, as with a real model. The truth of each update is its validation delta measured
with no noise (the same writer, the same notes, the same episodes, noise 0). For each noise
level the bench trains the same script twice, in the same run of the bench:

- **old**, the baseline: today's rule, reimplemented here as a reviewer: one pass per tree,
  the parent's sample cached and reused, roll back when the mean rose by more than 0.005;
- **new**: `--gate` as shipped: paired deltas, a 90% interval, more passes while it straddles
  zero (up to `--gate-max-repeats 3`), keep only when its upper end is below zero.

It prints, per rule and noise: helpful kept %, harmful kept %, neutral kept %, and validation
passes per micro-step (every pass over the validation set, either side, divided by the
micro-steps). The issue's must-hold, at noise 0.15: >= 80% helpful, 0% harmful, <= 20%
neutral, <= 3 passes per micro-step.

    python bench/bench_gate.py [--micro-steps 3] [--seeds 12] [--val-episodes 12]

Each rule and noise level trains `--seeds` short runs of `--micro-steps` from the same start
pool (36 micro-steps by default), so a helpful update is on offer again in every run.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from conftest import write_work  # noqa: E402
from known_truths import MENU, START, held_out  # noqa: E402
from scripted import seed_pool  # noqa: E402
from scripted_backward import KnownMoves  # noqa: E402

from skilltui.agents.offline import MAX_READS, TOPIC_WORDS, moves_taught, write_episode  # noqa: E402
from skilltui.core.formats import story_episodes  # noqa: E402
from skilltui.engine import val_store  # noqa: E402
from skilltui.engine.data.works import load_work  # noqa: E402
from skilltui.engine.loop import Trainer  # noqa: E402
from skilltui.engine.loss.scores import score_step  # noqa: E402
from skilltui.engine.session import Settings, open_run  # noqa: E402
from skilltui.engine.update.review import AutoReviewer  # noqa: E402
from skilltui.model import events as ev  # noqa: E402
from skilltui.model.bus import EventBus, JsonlSink  # noqa: E402
from skilltui.model.parse import read_run  # noqa: E402
from skilltui.model.review import Decision, ReviewRequest  # noqa: E402
from skilltui.store.pool import Pool  # noqa: E402

NOISES = (0.0, 0.1, 0.15, 0.2)


OLD_TOLERANCE = 0.005
TIE = 1e-6  # a true delta this small is no effect at all (losses are kept to 4 places)


class OldRule:
    """Today's rule: roll back when the mean validation loss rose by more than 0.005, else keep."""

    async def review(self, request: ReviewRequest) -> Decision:
        g = request.gate
        if g is not None and g.before is not None and g.after is not None and g.after - g.before > OLD_TOLERANCE + 1e-9:
            return Decision("rollback", "auto", reason=f"old rule: {g.before:.3f} -> {g.after:.3f}")
        return Decision("approve", "auto", reason="old rule: kept")


@dataclass
class Tally:
    kept: dict[str, int] = field(default_factory=lambda: {"helpful": 0, "harmful": 0, "neutral": 0})
    seen: dict[str, int] = field(default_factory=lambda: {"helpful": 0, "harmful": 0, "neutral": 0})
    passes: int = 0
    micro_steps: int = 0
    seconds: float = 0.0

    def pct(self, kind: str) -> str:
        seen = self.seen[kind]
        return f"{100 * self.kept[kind] / seen:5.1f}% of {seen:2d}" if seen else "   -      "

    def per_step(self) -> float:
        return self.passes / self.micro_steps if self.micro_steps else 0.0


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


async def one_run(base: Path, rule: str, noise: float, seed: int, args: argparse.Namespace) -> Tally:
    works = base / "works"
    train = works / "train" if (works / "train").exists() else write_work(works, "train", 2, seed=seed)
    val = works / "held" if (works / "held").exists() else held_out(works, args.val_episodes, seed)
    donor = base / "donor" if (base / "donor").exists() else seed_pool(base / "donor", *START)
    run_id = f"{rule}-{noise}-{seed}"
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
        offline_noise=noise,
        gate_max_repeats=1 if rule == "old" else args.max_repeats,
        # Each run is one update per epoch; an epoch's consolidation would be a fourth decision
        # whose truth is not on the menu (it merges, it does not teach): the bench measures updates.
        consolidate=False,
    )
    opened = open_run(settings)
    bus = EventBus()
    bus.subscribe(JsonlSink(opened.run.events_path))
    backend = KnownMoves(seed, noise=noise, menu=MENU)
    reviewer = OldRule() if rule == "old" else AutoReviewer()
    started = time.perf_counter()
    try:
        await Trainer(opened, backend, reviewer, bus).train()
    finally:
        opened.lock.release()
    tally = Tally(seconds=time.perf_counter() - started)
    truth = Truth(val, args.val_episodes, base / f"truth-{run_id}")
    for e in read_run(opened.run.events_path).events:
        if isinstance(e, ev.DecisionMade):
            delta = truth.loss(opened.run.memory, e.after) - truth.loss(opened.run.memory, e.before)
            kind = "helpful" if delta < -TIE else "harmful" if delta > TIE else "neutral"
            tally.seen[kind] += 1
            tally.kept[kind] += e.decision == "approve"
            tally.micro_steps += 1
        elif isinstance(e, ev.Call) and e.role == "forward" and e.work == "held":
            tally.passes += 1
    return tally


def merge(tallies: list[Tally]) -> Tally:
    out = Tally()
    for t in tallies:
        for kind in out.kept:
            out.kept[kind] += t.kept[kind]
            out.seen[kind] += t.seen[kind]
        out.passes += t.passes
        out.micro_steps += t.micro_steps
        out.seconds += t.seconds
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--micro-steps", type=int, default=3, help="micro-steps per run (default 3)")
    parser.add_argument(
        "--seeds", type=int, default=12, help="runs per rule and noise, each its own script (default 12)"
    )
    parser.add_argument("--val-episodes", type=int, default=12, help="validation episodes per pass (default 12)")
    parser.add_argument("--max-repeats", type=int, default=3, help="the new gate's --gate-max-repeats")
    parser.add_argument("--noise", type=float, action="append", help="noise levels (default 0 0.1 0.15 0.2)")
    args = parser.parse_args()
    noises = tuple(args.noise) if args.noise else NOISES
    print(
        f"{args.seeds} run(s) x {args.micro_steps} micro-steps per rule and noise; validation on "
        f"{args.val_episodes} episodes of one held-out work; new gate: 90% interval, up to {args.max_repeats} passes"
    )
    print(
        f"{'noise':>5} {'rule':>4} | {'helpful kept':>14} | {'harmful kept':>14} | {'neutral kept':>14} | passes/step"
    )
    results: dict[tuple[float, str], Tally] = {}
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        for noise in noises:
            for rule in ("old", "new"):
                runs = [await one_run(Path(tmp) / f"s{seed}", rule, noise, seed, args) for seed in range(args.seeds)]
                t = results[(noise, rule)] = merge(runs)
                print(
                    f"{noise:5.2f} {rule:>4} | {t.pct('helpful'):>14} | {t.pct('harmful'):>14} | "
                    f"{t.pct('neutral'):>14} | {t.per_step():5.2f}  ({t.seconds:.0f} s)",
                    flush=True,
                )
    if (0.15, "new") in results:
        t = results[(0.15, "new")]

        def share(kind: str) -> float:
            return t.kept[kind] / t.seen[kind] if t.seen[kind] else 0.0

        checks = [
            ("helpful kept >= 80%", share("helpful") >= 0.8),
            ("harmful kept == 0%", t.kept["harmful"] == 0),
            ("neutral kept <= 20%", share("neutral") <= 0.2),
            ("passes per micro-step <= 3", t.per_step() <= 3.0),
        ]
        print(
            "must-hold at noise 0.15 (new rule): "
            + "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in checks)
        )


if __name__ == "__main__":
    asyncio.run(main())
