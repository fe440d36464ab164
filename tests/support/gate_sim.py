"""The whole gate, simulated in arithmetic: the real rule (`gate.judge`, `gate.plan`) on drawn losses.

A validation work has `episodes` episodes, each with its own difficulty; a tree of notes
has a true mean loss, and one writing call (a pass of a work) adds a shock shared by every
episode it wrote (sd `shock`) and a per-episode draw (sd `sd`). A simulated run makes
`decisions` updates in a row, each with true effect `effect` on its parent, through the
same loop `Validator.verdict` runs: passes a side from 1 up to `max_passes`, the parent one
ahead when no spread is measured, history borrowed from every other tree the run measured
twice or more, a kept candidate becoming the next parent with its passes. With `family`
K > 1 each decision is K candidates of the same effect, and a keep is any of them kept.

Used by tests/test_gate_noise.py (a few thousand decisions) and bench/bench_gate.py.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from skilltui.engine.settings_fields import GATE_MAX_REPEATS
from skilltui.engine.validation.gate import Rule, Verdict, judge, plan
from skilltui.engine.validation.stats import Clusters, Spread, binomial_interval, spread_of


@dataclass(frozen=True)
class World:
    sd: float = 0.05  # per-episode draw
    shock: float = 0.025  # shared by every episode of one call
    episodes: int = 12
    works: int = 1
    confidence: float = 0.9
    max_passes: int = GATE_MAX_REPEATS  # the shipped --gate-max-repeats
    decisions: int = 5  # per simulated run: later ones borrow the earlier trees' spread
    family: int = 1
    margin: float | None = None  # a consolidation

    @property
    def pass_se(self) -> float:
        """The standard error of the mean delta with one pass a side: the unit effects are given in."""
        var = self.sd**2 / self.episodes + self.shock**2
        return (2 * var / self.works) ** 0.5


@dataclass
class Tally:
    decisions: int = 0
    kept: int = 0
    passes: int = 0  # passes run on either side, over every decision
    episodes: int = 0  # episodes written by those passes
    recorded: list[float] = field(default_factory=list)

    def rate(self) -> tuple[float, float, float]:
        low, high = binomial_interval(self.kept, self.decisions)
        return self.kept / max(self.decisions, 1), low, high

    def per_side(self) -> float:
        return self.passes / max(self.decisions, 1) / 2


class Tree:
    def __init__(self, mean: float) -> None:
        self.mean = mean
        self.clusters: dict[tuple[str, int], list[float]] = {}

    def passes(self) -> int:
        return max((k for _, k in self.clusters), default=0)


def _measure(tree: Tree, upto: int, world: World, base: list[list[float]], rng: random.Random) -> int:
    ran = 0
    for k in range(tree.passes() + 1, upto + 1):
        ran += 1
        for w in range(world.works):
            shock = rng.gauss(0.0, world.shock)
            tree.clusters[(f"w{w}", k)] = [
                tree.mean + b + shock + rng.gauss(0.0, world.sd) for b in base[w][: world.episodes]
            ]
    return ran


def _history(trees: list[Tree], skip: tuple[Tree, ...]) -> Spread:
    total = Spread()
    for t in trees:
        if t not in skip:
            total += spread_of(t.clusters)
    return total


Judge = Callable[..., Verdict]  # gate.judge's signature: (parent, candidate, rule, *, passes_left, history)


def _decide(parent: Tree, cand: Tree, trees: list[Tree], world: World, rule: Rule, rng, base, rule_of: Judge):
    passes = parent_passes = 1
    ran = 0
    while True:
        ran += _measure(cand, passes, world, base, rng) + _measure(parent, max(passes, parent_passes), world, base, rng)
        history = _history(trees, (parent, cand))
        p: Clusters = parent.clusters
        found = rule_of(p, cand.clusters, rule, passes_left=passes < world.max_passes, history=history)
        nxt = plan(found, passes, parent_passes, world.max_passes)
        if nxt is None:
            return found.verdict.advice == "keep", ran
        passes, parent_passes = nxt


def simulate(world: World, effect: float, runs: int, seed: int = 0, rule_of: Judge = judge) -> Tally:
    """`runs` simulated runs of `world.decisions` decisions each, every update of true effect `effect`.

    `rule_of` is the rule decided by: the gate's own unless a bench compares another."""
    rng = random.Random(seed)
    rule = Rule(world.confidence, world.max_passes, world.family, world.margin)
    tally = Tally()
    for _ in range(runs):
        base = [[rng.uniform(0.1, 0.6) for _ in range(world.episodes)] for _ in range(world.works)]
        parent = Tree(0.4)
        trees = [parent]
        for _ in range(world.decisions):
            kept_any = None
            for _ in range(world.family):
                cand = Tree(parent.mean + effect)
                trees.append(cand)
                keep, ran = _decide(parent, cand, trees, world, rule, rng, base, rule_of)
                tally.passes += ran
                tally.episodes += ran * world.episodes
                if keep and kept_any is None:
                    kept_any = cand
            tally.decisions += 1
            if kept_any is not None:
                tally.kept += 1
                parent = kept_any
    return tally
