"""Benchmark: is a kept update's recorded delta the truth, or the luck that chose it (issue 51, item 3)?

With one candidate (`--candidates 1`) the gate stops at the first look whose interval clears
zero, so a kept update's passes are the lucky ones: the figure that chose it overstates its
gain, its interval misses the truth more often than its level says, and the same passes,
as the next parent's baseline, make that parent look better than it is. The fix records a
kept delta from a fresh pass each side, which did not choose it (what `--candidates K > 1`
already did), and sets the passes that chose it aside: as the next parent it rests on the
fresh pass and as many fresh ones again as chose it (the choosing passes kept beside the
fresh one, the design before, are printed for comparison).

This drives the gate's real rule (`gate.judge`, `gate.plan`, `gate.Rule`) in arithmetic, as
tests/support/gate_sim.py does: 12 episodes of sd 0.05, a shock shared by each writing
call of sd 0.025, runs of 5 decisions in a row (later ones borrow the earlier trees'
spread), 1 to `--max-passes` passes a side (default the shipped `--gate-max-repeats`) at
`--gate-confidence 0.9`; effects in standard errors of one pass. For each effect it
prints, over the kept updates, the recorded delta's mean as a multiple of the truth (95% t
interval), how often the kept interval holds the truth (95% exact binomial), and the next
parent's baseline bias in units of one pass's SE, for the selecting figure (before) and the
fresh one (after), on the same draws.

    python bench/bench_kept_delta.py [--runs 4000] [--seed 0] [--max-passes 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
from dataclasses import dataclass, field

from scipy import stats

from skilltui.engine.settings_fields import GATE_MAX_REPEATS
from skilltui.engine.validation.gate import Rule, judge, plan
from skilltui.model.review import GateVerdict
from tests.support.gate_sim import Tree, World, _history, _measure


@dataclass
class Kept:
    """What the kept updates recorded: delta / truth, whether the interval held the truth, the baseline's bias."""

    ratio: list[float] = field(default_factory=list)
    held: int = 0
    bias: list[float] = field(default_factory=list)
    level: list[float] = field(default_factory=list)


def decide(parent: Tree, cand: Tree, trees: list[Tree], world: World, rule: Rule, rng, base) -> GateVerdict:
    """`Validator.verdict`'s loop on drawn passes: looks until `gate.plan` says it is decided."""
    passes = parent_passes = 1
    while True:
        _measure(cand, passes, world, base, rng)
        _measure(parent, max(passes, parent_passes), world, base, rng)
        history = _history(trees, (parent, cand))
        found = judge(parent.clusters, cand.clusters, rule, passes_left=passes < world.max_passes, history=history)
        following = plan(found, passes, parent_passes, world.max_passes)
        if following is None:
            return found.verdict
        passes, parent_passes = following


def fresh(parent: Tree, cand: Tree, trees: list[Tree], world: World, rng, base) -> GateVerdict:
    """`Gating.fresh` on drawn passes: one new pass each side, judged alone at the gate's one-candidate rule."""
    k_cand, k_parent = cand.passes() + 1, parent.passes() + 1
    _measure(cand, k_cand, world, base, rng)
    _measure(parent, k_parent, world, base, rng)
    new_cand = {c: v for c, v in cand.clusters.items() if c[1] == k_cand}
    new_parent = {c: v for c, v in parent.clusters.items() if c[1] == k_parent}
    rule = Rule(world.confidence, world.max_passes)
    return judge(new_parent, new_cand, rule, passes_left=False, history=_history(trees, (parent, cand))).verdict


def baseline_bias(tree: Tree, base: list[list[float]], world: World) -> float:
    """How far the tree's passes, as a parent's baseline, sit from its true mean loss, in one pass's SE."""
    errors = [
        statistics.fmean(v) - tree.mean - statistics.fmean(base[int(w[1:])][: world.episodes])
        for (w, _), v in tree.clusters.items()
    ]
    return statistics.fmean(errors) / world.pass_se


def simulate(effect: float, runs: int, seed: int, world: World) -> tuple[Kept, Kept, list[float], int]:
    """The same draws recorded both ways: (before, after, the bias of a baseline that kept the choosing
    passes beside the fresh one, decisions)."""
    rng = random.Random(seed)
    rule = Rule(world.confidence, world.max_passes)
    truth = effect * world.pass_se
    before, after, decisions = Kept(), Kept(), 0
    beside: list[float] = []
    for _ in range(runs):
        base = [[rng.uniform(0.1, 0.6) for _ in range(world.episodes)] for _ in range(world.works)]
        parent = Tree(0.4)
        trees = [parent]
        for _ in range(world.decisions):
            cand = Tree(parent.mean + truth)
            trees.append(cand)
            chose = decide(parent, cand, trees, world, rule, rng, base)
            decisions += 1
            if chose.advice != "keep":
                continue
            selecting = Tree(cand.mean)
            selecting.clusters = dict(cand.clusters)  # the passes that chose it: today's next baseline
            again = fresh(parent, cand, trees, world, rng, base)
            for kept, v, tree in ((before, chose, selecting), (after, again, None)):
                if v.delta is None or v.low is None or v.high is None:
                    continue
                kept.ratio.append(v.delta / truth if truth else v.delta / world.pass_se)
                kept.held += v.low <= truth <= v.high
                kept.level.append(v.level or 0.0)
                if tree is not None:
                    kept.bias.append(baseline_bias(tree, base, world))
            # `beside`: the choosing passes kept in the baseline beside the fresh one (the design before)
            beside.append(baseline_bias(cand, base, world))
            # after, as the engine does: the choosing passes set aside, the fresh one renumbered first,
            # and as many fresh ones again as chose it (`Validator.baseline`)
            k = cand.passes()
            cand.clusters = {(w, 1): v for (w, j), v in cand.clusters.items() if j == k}
            _measure(cand, k, world, base, rng)
            after.bias.append(baseline_bias(cand, base, world))
            parent = cand
    return before, after, beside, decisions


def mean_ci(values: list[float]) -> str:
    if len(values) < 2:
        return "n/a"
    m = statistics.fmean(values)
    half = stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / len(values) ** 0.5
    return f"{m:+.2f} [{m - half:+.2f}, {m + half:+.2f}]"


def held(kept: Kept) -> str:
    n = len(kept.ratio)
    ci = stats.binomtest(kept.held, n).proportion_ci(0.95, method="exact")
    return f"{kept.held / n:.1%} [{ci.low:.1%}, {ci.high:.1%}] at {statistics.fmean(kept.level):.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-passes", type=int, default=GATE_MAX_REPEATS)
    args = parser.parse_args()
    world = World(max_passes=args.max_passes)
    print(
        f"K=1, {args.runs} runs of {world.decisions} decisions each, up to {world.max_passes} passes a side; "
        "95% intervals on every figure"
    )
    for effect in (-1.0, -2.0, -3.0):
        before, after, beside, decisions = simulate(effect, args.runs, args.seed, world)
        print(f"effect {effect:+.0f} SE: kept {len(before.ratio)} of {decisions} decisions")
        for name, kept in (("before (the figure that chose it)", before), ("after (a fresh pass each side)", after)):
            print(
                f"  {name:<34} delta/truth {mean_ci(kept.ratio)}   interval held the truth {held(kept)}   "
                f"next baseline bias {mean_ci(kept.bias)} SE"
            )
        print(f"  {'(choosing passes beside the fresh one)':<34} next baseline bias {mean_ci(beside)} SE")


if __name__ == "__main__":
    main()
