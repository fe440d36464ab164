"""Benchmark: the gate's power as a user meets it, beside its error rates, each rate with a 95% interval.

The whole loop (looks, K candidates, the fresh pass, consolidation, call shocks) is the
engine's own rule run on the offline writer's own noise (bench/gate_power_sim.py: a bank of
scripts the offline writer wrote and the engine scored), because the real loop takes
seconds a decision here. Part (0) checks the bank against passes the real loop wrote.

(0) calibration: real offline-loop runs (bench_gate.py's, null updates) against the bank.
(1) power: the smallest true improvement kept 50% and 80% of the time, validation calls
    per decision, and the kept rate of helpful (-0.08), neutral and harmful (+0.08)
    updates, at 2 (the default, --episodes-per-step), 3 and 5 validation episodes; the rule
    before issues 49 and 51 (bench/gate_variants.py `before`: one spread pooled over works, no
    futility stop, --gate-max-repeats 3) beside today's (a spread per work, the futility stop,
    --gate-max-repeats 5).
(2) the null keep rate over 20,000 decisions with call shocks, K = 3 and consolidation.
(3) the first decision's null keep rate with three validation works, one 3x noisier.
(4) other rules on the same draws: no futility stop, more passes, two passes to start,
    MIN_DF 2, MIN_PARENT 1, no fresh pass, a sign-flip randomization test.
(5) harmful and neutral keeps under call shocks: what a kept tree's baseline rests on.

    python bench/bench_gate_power.py [--decisions 20000] [--curve 1500] [--draws 300] [--real-runs 6]

Must hold (issue 49): noise 0.15 and three validation episodes: helpful kept >= 60%; with
call shocks harmful kept 0 and neutral <= 10%; null keep <= 6% (upper 95% bound) with call
shocks, K = 3 and consolidation. Issue 51: the null rate with one work 3x noisier <= 5%.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from gate_power_sim import START, Bank, Loop, simulate
from gate_variants import before, signflip
from scipy import stats as sps

from skilltui.engine.settings_fields import LEGACY_GATE_MAX_REPEATS
from skilltui.engine.validation.gate import Rule
from skilltui.engine.validation.stats import binomial_interval
from tests.support.known_truths import held_out

NOISE = 0.15
CALL = 0.1
GRID = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0)  # true improvements, in standard errors of one pass
NEW = Loop()  # the shipped defaults: --gate-max-repeats 5, --val-repeats 1, --gate-confidence 0.9


def _no_futility(confidence: float, looks: int, family: int, margin: float | None) -> Rule:
    return Rule(confidence, looks, family, margin, futility=None)


def _before(confidence: float, looks: int, family: int, margin: float | None) -> Rule:
    return Rule(confidence, looks, family, margin, futility=None, min_parent=1)


def _one_parent_pass(confidence: float, looks: int, family: int, margin: float | None) -> Rule:
    return Rule(confidence, looks, family, margin, min_parent=1)


def _thin(confidence: float, looks: int, family: int, margin: float | None) -> Rule:
    return Rule(confidence, looks, family, margin, min_df=2)


THIN = Loop(rule=_thin)  # today's rule deciding on a spread of 2 df before the last look (not kept)
# The rule and default before: one pooled spread, no futility stop, a keep on one parent pass,
# --gate-max-repeats 3, no fresh pass at K = 1 nor set-aside.
OLD = Loop(max_repeats=LEGACY_GATE_MAX_REPEATS, pooled=True, rule=_before, set_aside=False, fresh=False)


def rate(kept: int, n: int) -> str:
    if not n:
        return "-"
    low, high = binomial_interval(kept, n)
    return f"{100 * kept / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def pass_se(bank: Bank, call: float, rng: random.Random, n: int = 4000) -> float:
    """The sd of one pass's candidate-minus-parent mean under a null update: the unit of effects."""

    def one() -> float:
        skim = rng.random() < call
        values = [x for w in bank.works for x in bank.draw(w, frozenset() if skim else START, rng)]
        return statistics.fmean(values)

    return statistics.stdev([one() - one() for _ in range(n)])


def run(bank: Bank, loop: Loop, decisions: int, seed: int, old: bool = False):
    runs = max(1, decisions // loop.decisions)
    if old:
        with before():
            return simulate(bank, loop, runs, seed)
    return simulate(bank, loop, runs, seed)


def crossing(xs: tuple[float, ...], ys: list[float], level: float) -> str:
    """The smallest x at which the kept rate reaches `level`, by linear interpolation on the grid."""
    for (x0, y0), (x1, y1) in zip(zip(xs, ys, strict=True), zip(xs[1:], ys[1:], strict=False), strict=False):
        if y0 < level <= y1:
            return f"{x0 + (level - y0) / (y1 - y0) * (x1 - x0):.2f}"
    return f"<{xs[0]}" if ys and ys[0] >= level else f">{xs[-1]}"


def power(bank: Bank, call: float, curve: int, mixed: int, seed: int) -> None:
    se = pass_se(bank, call, random.Random(seed))
    for name, loop, old in (("before", OLD, True), ("today", NEW, False)):
        loop = replace(loop, call=call)
        kept = []
        calls_2se = 0.0
        for x in GRID:
            shift = -x * se / (1 - call)  # a call that skims the notes loses the effect too
            c = run(bank, replace(loop, effects={"helpful": shift}, consolidate=False), curve, seed, old)
            kept.append(c.kept["helpful"] / c.seen["helpful"])
            calls_2se = c.calls / c.decisions if x == 2.0 else calls_2se
        m = run(bank, loop, mixed, seed + 1, old)
        print(
            f"| {bank.episodes} | {call:g} | {name} | {se:.3f} | {crossing(GRID, kept, 0.5)} | "
            f"{crossing(GRID, kept, 0.8)} | {100 * kept[GRID.index(2.0)]:.1f}% | {calls_2se:.2f} | "
            f"{m.calls / m.decisions:.2f} | {rate(m.kept['helpful'], m.seen['helpful'])} | "
            f"{rate(m.kept['neutral'], m.seen['neutral'])} | {rate(m.kept['harmful'], m.seen['harmful'])} |",
            flush=True,
        )


def null_rows(bank: Bank, decisions: int, seed: int) -> None:
    print("\n(2) null updates, call shocks 0.1, K = 3, consolidation; kept = any candidate kept")
    print("| rule | decisions | null kept [95%] | calls per decision | neutral consolidation kept |")
    print("|---|---|---|---|---|")
    for name, loop, old in (("before", OLD, True), ("today", NEW, False), ("MIN_DF 2 (not kept)", THIN, False)):
        loop = replace(loop, family=3, effects={"neutral": 0.0})
        started = time.perf_counter()
        c = run(bank, loop, decisions, seed, old)
        kept = c.kept["neutral"]  # a decision is K candidates; it keeps at most one
        print(
            f"| {name} | {c.decisions:,} | {rate(kept, c.decisions)} | {c.calls / c.decisions:.2f} | "
            f"{rate(c.kept.get('consolidation', 0), merged := c.seen.get('consolidation', 0))} of {merged} "
            f"({time.perf_counter() - started:.0f} s) |",
            flush=True,
        )


def noisier(folders: dict[str, Path], decisions: int, draws: int, seed: int) -> None:
    print("\n(3) first decision's null keep rate, three validation works of 3 episodes, one 3x noisier")
    print("| call shocks | rule | first decisions | null kept [95%] |")
    print("|---|---|---|---|")
    bank = Bank(folders, 3, NOISE, draws, scale={sorted(folders)[0]: 3.0})
    for call in (0.0, CALL):
        rules = (("before (pooled)", OLD, True), ("today (per work)", NEW, False), ("MIN_DF 2 (not kept)", THIN, False))
        for name, loop, old in rules:
            loop = replace(loop, call=call, decisions=1, consolidate=False, effects={"neutral": 0.0})
            c = run(bank, loop, decisions, seed, old)
            print(f"| {call:g} | {name} | {len(c.first):,} | {rate(sum(c.first), len(c.first))} |", flush=True)


def variants(bank: Bank, decisions: int, seed: int) -> None:
    print("\n(4) other rules, 3 validation episodes, K = 1, runs of 5 decisions: kept at 2 SE, null kept, calls")
    print("| call shocks | rule | kept at 2 SE [95%] | calls | null kept [95%] | calls |")
    print("|---|---|---|---|---|---|")
    rows = [
        ("today: max 5, futility stop", NEW),
        ("max 5, no futility stop", replace(NEW, rule=_no_futility)),
        ("max 3 (the default before)", replace(NEW, max_repeats=3)),
        ("max 3, no futility stop", replace(NEW, max_repeats=3, rule=_no_futility)),
        ("max 4", replace(NEW, max_repeats=4)),
        ("two passes to start", replace(NEW, repeats=2)),
        ("MIN_DF 2", THIN),
        ("MIN_PARENT 1", replace(NEW, rule=_one_parent_pass)),
        ("no fresh pass", replace(NEW, fresh=False)),
        ("sign-flip test, max 5", replace(NEW, judge=signflip)),
        ("sign-flip test, max 8", replace(NEW, judge=signflip, max_repeats=8)),
    ]
    for call in (0.0, CALL):
        se = pass_se(bank, call, random.Random(seed))
        for name, loop in rows:
            loop = replace(loop, call=call, consolidate=False)
            h = run(bank, replace(loop, effects={"helpful": -2 * se / (1 - call)}), decisions, seed)
            n = run(bank, replace(loop, effects={"neutral": 0.0}), decisions, seed + 1)
            print(
                f"| {call:g} | {name} | {rate(h.kept['helpful'], h.seen['helpful'])} | {h.calls / h.decisions:.2f} | "
                f"{rate(n.kept['neutral'], n.seen['neutral'])} | {n.calls / n.decisions:.2f} |",
                flush=True,
            )


def shocked_mix(bank: Bank, decisions: int, seed: int) -> None:
    print("\n(5) the mix of (1) under call shocks 0.1, 3 validation episodes: what a kept tree's baseline rests on")
    print("| rule | helpful kept [95%] | neutral kept [95%] | harmful kept [95%] | calls |")
    print("|---|---|---|---|---|")
    rows = (
        ("today (choosing passes set aside, replaced by as many fresh ones and one more)", NEW),
        (
            "choosing passes kept in the baseline beside the fresh one (the design before)",
            replace(NEW, set_aside=False),
        ),
        ("choosing passes set aside, the fresh one alone, a keep waiting for a second", replace(NEW, topup=False)),
        (
            "choosing passes set aside, the fresh one alone, MIN_PARENT 1",
            replace(NEW, rule=_one_parent_pass, topup=False),
        ),
        ("no fresh pass", replace(NEW, fresh=False)),
    )
    for name, loop in rows:
        m = run(bank, replace(loop, call=CALL), decisions, seed)
        print(
            f"| {name} | {rate(m.kept['helpful'], m.seen['helpful'])} | {rate(m.kept['neutral'], m.seen['neutral'])} "
            f"| {rate(m.kept['harmful'], m.seen['harmful'])} | {m.calls / m.decisions:.2f} |",
            flush=True,
        )


async def calibrate(runs: int, draws: int, seed: int) -> None:
    """Pass means the real loop wrote (bench_gate.py's engine runs, null updates) against the bank's, work by work."""
    import bench_gate

    from skilltui.model import events as ev
    from skilltui.model.parse import read_run
    from skilltui.pool.notes import Pool
    from skilltui.store import val_store

    args = argparse.Namespace(val_episodes=3, micro_steps=3, noise=NOISE, call_noise=CALL)
    real: list[float] = []
    banked: list[float] = []
    pairs: list[tuple[float, float]] = []  # parent and child pass 1 of one decision, less their expectation
    rng = random.Random(seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-power-") as tmp:
        for s in range(runs):
            base = Path(tmp) / f"s{s}"
            kinds = ("helpful", "harmful", "neutral")
            tally = bench_gate.Engine(dict.fromkeys(kinds, 0), dict.fromkeys(kinds, 0))
            await bench_gate.one_run(base, "neutral", 1000 + s, args, tally)
            run_dir = base / "runs" / f"neutral-{1000 + s}"
            val = run_dir / "val"
            bank = Bank({"held": base / "works" / "held"}, 3, NOISE, draws)  # the very work the run validated on
            expected = (1 - CALL) * bank.truth(START) + CALL * bank.truth(frozenset())
            means = {}
            for tree in val_store.trees(val):
                means[tree[:16]] = [float(p["loss"]) for p in val_store.samples(val, tree, "held")]
                real += means[tree[:16]]
            for _ in range(200):
                skim = rng.random() < CALL
                banked.append(statistics.fmean(bank.draw("held", frozenset() if skim else START, rng)))
            pool = Pool(run_dir / "memory")
            for e in read_run(run_dir / "events.jsonl").events:
                if isinstance(e, ev.DecisionMade):
                    a, b = (pool.git("rev-parse", f"{c}^{{tree}}")[:16] for c in (e.before, e.after))
                    if means.get(a) and means.get(b):
                        pairs.append((means[a][0] - expected, means[b][0] - expected))
    ks = sps.ks_2samp(real, banked)
    r = sps.pearsonr([a for a, _ in pairs], [b for _, b in pairs]) if len(pairs) > 2 else None
    print(
        f"(0) calibration, {runs} real offline-loop runs of 3 null micro-steps, 3 validation episodes, "
        f"--offline-noise {NOISE} --offline-noise-call {CALL}: the real loop's {len(real)} pass means: mean "
        f"{statistics.fmean(real):.4f}, sd {statistics.stdev(real):.4f}; the bank's {len(banked):,} on the same "
        f"works: mean {statistics.fmean(banked):.4f}, sd {statistics.stdev(banked):.4f}; two-sample KS p = "
        f"{ks.pvalue:.2f}; parent and child pass 1 of one decision (less their expectation), r = "
        + (
            f"{r.statistic:+.2f} [{r.confidence_interval().low:+.2f}, {r.confidence_interval().high:+.2f}] "
            f"over {len(pairs)} decisions"
            if r
            else "-"
        )
        + f" [{time.perf_counter() - started:.0f} s]",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=20000, help="decisions for the null rates of (2) and (3)")
    parser.add_argument("--curve", type=int, default=1500, help="decisions per point of the power curves")
    parser.add_argument("--mixed", type=int, default=3000, help="decisions of the helpful/neutral/harmful mix")
    parser.add_argument("--draws", type=int, default=300, help="scripts banked per episode and set of moves")
    parser.add_argument("--real-runs", type=int, default=6, help="real offline-loop runs for (0); 0 skips it")
    parser.add_argument("--seed", type=int, default=49)
    parser.add_argument("--calibrate-only", action="store_true", help="only part (0)")
    args = parser.parse_args()
    if args.real_runs:
        asyncio.run(calibrate(args.real_runs, args.draws, args.seed))
    if args.calibrate_only:
        return
    with tempfile.TemporaryDirectory(prefix="bench-power-") as tmp:
        works = {f"held{i}": held_out(Path(tmp) / f"w{i}", 12, i) for i in range(3)}
        # held_out names its folder "held": each work under its own root
        banks = {e: Bank({"held": works["held0"]}, e, NOISE, args.draws) for e in (2, 3, 5)}
        print(
            "\n(1) power, K = 1, runs of 5 decisions, consolidation; effects in SE of one pass (the sd of one "
            "pass's delta under a null update); helpful/neutral/harmful: true deltas -0.08 / 0 / +0.08 in a "
            "seeded order"
        )
        print(
            "| episodes | call shocks | rule | 1 SE | kept 50% at (SE) | kept 80% at (SE) | kept at 2 SE | "
            "calls at 2 SE | calls (mix) | helpful kept [95%] | neutral kept [95%] | harmful kept [95%] |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for call in (0.0, CALL):
            for e in (2, 3, 5):
                power(banks[e], call, args.curve, args.mixed, args.seed)
        null_rows(banks[3], args.decisions, args.seed)
        noisier({f"w{i}": works[f"held{i}"] for i in range(3)}, args.decisions, args.draws, args.seed)
        variants(banks[3], args.curve * 2, args.seed)
        shocked_mix(banks[3], args.decisions // 2, args.seed)


if __name__ == "__main__":
    main()
