"""The gate's whole loop on the offline writer's own noise: the engine's rule, thousands of times.

The real loop (bench_gate.py's part (b)) takes seconds a decision on 2 shared cores, too slow
for the thousands of decisions an error rate needs. This drives the engine's own rule
(`gate.judge`, `gate.plan`, `gate.Rule`, and `candidates.rank`'s order) with validation
passes drawn from a *bank* of scripts the real offline writer wrote and the engine's loss
scored: per validation episode and set of craft moves, `draws` scripts written with
`--offline-noise` (`offline_noise.garble`, each with its own seed) and scored by
`score_step`, split into per-episode losses as the validator does (`episode_losses`). A
pass of a tree draws one banked script per episode; with chance `--offline-noise-call` the
whole call ignores its notes (as `ignores_notes` makes the offline writer do) and draws
from the no-moves bank. `calibrate` in bench_gate_power.py checks the bank against passes
the real loop wrote.

A simulated run follows the engine: `decisions` micro-steps in a row, K candidates each
from the same parent judged as `Validator.verdict` judges them (looks from one pass a side,
the parent one ahead while no spread is measured, the history of every other tree measured
twice or more), the kept one the best-ranked keep, with a fresh pass each side, its choosing
passes set aside and replaced as the next parent's baseline, then a consolidation judged
for non-inferiority at `margin`. Kinds follow KnownMoves: a
block of helpful, harmful and neutral in a seeded order, each adding a move the pool lacks,
dropping one it has, or changing nothing the writer uses. `shift` adds a true effect to
every call that reads the notes, for power curves in units of one pass's standard error.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from skilltui.agents.offline import write_episode
from skilltui.agents.offline_noise import garble
from skilltui.core.formats import story_episodes
from skilltui.engine.data.works import load_work
from skilltui.engine.loss.scores import score_step
from skilltui.engine.settings_fields import GATE_MAX_REPEATS
from skilltui.engine.validation.gate import Rule, Verdict, judge, plan
from skilltui.engine.validation.stats import Spread, spreads_of
from skilltui.engine.validation.validator import episode_losses

START = frozenset({"scene"})
Moves = frozenset[str]


class Bank:
    """Scripts the offline writer wrote, scored: work -> moves -> episode -> losses of `draws` seeds."""

    def __init__(self, folders: dict[str, Path], episodes: int, noise: float, draws: int, scale: dict | None = None):
        self.episodes = episodes
        self.scale = scale or {}  # work -> a factor on its losses' spread about their mean (a noisier work)
        self.losses: dict[str, dict[Moves, list[list[float]]]] = {}
        sets = [frozenset(), START]  # what a call that skims writes, and what the start pool's notes teach
        for name, folder in folders.items():
            work = load_work(folder)
            prose = story_episodes(work.story_path.read_text(encoding="utf-8"))
            human = {n: work.episode_text(n) for n in range(1, episodes + 1)}
            per: dict[Moves, list[list[float]]] = {}
            for moves in sets:
                clean = {n: write_episode(prose[n], set(moves)) for n in human}
                rows: list[list[float]] = [[] for _ in human]
                for d in range(draws if noise > 0 else 1):
                    tag = f"bank/{name}/{'+'.join(sorted(moves))}/{d}"
                    written = {n: garble(clean[n], noise, f"{tag}#{n}") for n in human}
                    losses = episode_losses(score_step(written, human))
                    for i, n in enumerate(sorted(human)):
                        rows[i].append(losses[n])
                per[moves] = rows
            self.losses[name] = per
        self.works = sorted(folders)

    def draw(self, work: str, moves: Moves, rng: random.Random) -> list[float]:
        """One pass's per-episode losses of a call that used `moves`."""
        rows = self.losses[work][moves]
        k = self.scale.get(work, 1.0)
        out = []
        for row in rows:
            x = row[rng.randrange(len(row))]
            out.append(x if k == 1.0 else sum(row) / len(row) + k * (x - sum(row) / len(row)))
        return out

    def truth(self, moves: Moves) -> float:
        """The noise-free expectation of a pass's mean over the works (weighted by episodes, equal here)."""
        means = [sum(sum(r) / len(r) for r in self.losses[w][moves]) / self.episodes for w in self.works]
        return sum(means) / len(means)


@dataclass(frozen=True)
class Loop:
    confidence: float = 0.9
    repeats: int = 1  # --val-repeats
    max_repeats: int = GATE_MAX_REPEATS  # --gate-max-repeats
    family: int = 1  # --candidates
    call: float = 0.1  # --offline-noise-call
    decisions: int = 5
    consolidate: bool = True
    margin: float = 0.01
    # Each kind's true effect, added to every call of the candidate that reads its notes.
    effects: dict[str, float] = field(default_factory=lambda: {"helpful": -0.08, "harmful": 0.08, "neutral": 0.0})
    pooled: bool = False  # borrow one spread pooled over the works (the rule before), not each work's
    # Every kept update gets a fresh pass each side (`Validator.record_kept`); False: a fresh pass
    # only when K > 1. `set_aside`: the passes that chose it count no more, and as the next parent
    # it starts on as many fresh passes as chose it and one more (`Validator.baseline`); `topup`
    # False: on its one fresh pass (the design part (5) of bench_gate_power.py compares).
    fresh: bool = True
    set_aside: bool = True
    topup: bool = True
    rule: Callable[..., Rule] | None = None  # (confidence, looks, family, margin) -> Rule; the engine's own if None
    judge: Callable[..., Verdict] | None = None  # the decision; the engine's `gate.judge` if None


class Tree:
    """A tree's passes per work, in order; the first `aside` chose it when kept and count no more."""

    def __init__(self, moves: Moves, shift: float = 0.0) -> None:
        self.moves, self.shift = moves, shift
        self.runs: dict[str, list[list[float]]] = {}
        self.aside = 0

    @property
    def clusters(self) -> dict[tuple[str, int], list[float]]:
        """What `Validator.recorded` reads: the counted passes, numbered from 1."""
        return {(w, k): x for w, runs in self.runs.items() for k, x in enumerate(runs[self.aside :], start=1)}

    def passes(self) -> int:
        return min((len(r) for r in self.runs.values()), default=0) - self.aside


@dataclass
class Count:
    seen: dict[str, int] = field(default_factory=dict)
    kept: dict[str, int] = field(default_factory=dict)
    calls: int = 0  # validation calls (one work, one pass) over every update decision, fresh passes included
    decisions: int = 0
    first: list[int] = field(default_factory=list)  # whether each run's first decision kept (0/1)

    def add(self, kind: str, kept: bool) -> None:
        self.seen[kind] = self.seen.get(kind, 0) + 1
        self.kept[kind] = self.kept.get(kind, 0) + int(kept)


class Simulator:
    def __init__(self, bank: Bank, loop: Loop, seed: int) -> None:
        self.bank, self.loop = bank, loop
        self.rng = random.Random(seed)
        self.trees: list[Tree] = []

    def rule(self, margin: float | None, family: int) -> Rule:
        looks = self.loop.max_repeats - self.loop.repeats + 1
        make = self.loop.rule or Rule
        return make(self.loop.confidence, looks, family, margin)

    def measure(self, tree: Tree, upto: int) -> int:
        ran = 0
        for _ in range(tree.passes() + 1, upto + 1):
            for w in self.bank.works:
                ran += 1
                skim = self.rng.random() < self.loop.call  # this call ignores the notes it read
                losses = self.bank.draw(w, frozenset() if skim else tree.moves, self.rng)
                tree.runs.setdefault(w, []).append([x + (0.0 if skim else tree.shift) for x in losses])
        return ran

    def history(self, skip: tuple[Tree, ...]) -> dict[str, Spread]:
        """`Gating.history`: per work, the spread of every other tree measured twice or more."""
        total: dict[str, Spread] = {}
        for t in self.trees:
            if t not in skip:
                for work, spread in spreads_of(t.clusters).items():
                    total[work] = total.get(work, Spread()) + spread
        if self.loop.pooled:  # the rule before issue 51: one spread over every work
            return sum(total.values(), Spread())  # type: ignore[return-value]
        return total

    def decide(self, parent: Tree, cand: Tree, rule: Rule):
        """`Validator.verdict`'s loop: returns the final `Verdict` and the calls it ran."""
        passes = parent_passes = self.loop.repeats
        if parent.aside and self.loop.topup:  # `Validator.baseline`: the chosen passes replaced by fresh ones
            parent_passes = max(passes, parent.aside + 1)
        ran = 0
        top = self.loop.max_repeats
        while True:
            ran += self.measure(cand, passes) + self.measure(parent, max(passes, parent_passes))
            left = passes < top
            decide = self.loop.judge or judge
            found = decide(parent.clusters, cand.clusters, rule, passes_left=left, history=self.history((parent, cand)))
            nxt = plan(found, passes, parent_passes, top if left else passes)
            if nxt is None:
                return found, ran
            passes, parent_passes = nxt

    def child(self, parent: Tree, kind: str) -> Tree:
        return Tree(parent.moves, parent.shift + self.loop.effects[kind])

    def run(self, count: Count) -> None:
        """One simulated epoch: `decisions` micro-steps, then a consolidation when one was kept."""
        parent = Tree(START)
        self.trees = [parent]
        block: list[str] = []
        kept_any = False
        for d in range(self.loop.decisions):
            cands = []
            for _ in range(self.loop.family):
                if not block:
                    block = self.rng.sample(sorted(self.loop.effects), len(self.loop.effects))
                cands.append(self.child(parent, block.pop(0)))
            rule = self.rule(None, self.loop.family)
            found = []
            for c in cands:
                self.trees.append(c)
                verdict, ran = self.decide(parent, c, rule)
                count.calls += ran
                found.append((c, verdict))
            keeps = sorted((v.verdict.delta or 0.0, i) for i, (c, v) in enumerate(found) if v.verdict.advice == "keep")
            for c, _ in found:
                count.add(self.kind(parent, c), False)
            count.decisions += 1
            if keeps:
                win = found[keeps[0][1]][0]
                count.kept[self.kind(parent, win)] += 1
                if self.loop.family > 1 or self.loop.fresh:  # `Validator.record_kept`
                    chose = win.passes()
                    count.calls += self.measure(win, win.passes() + 1) + self.measure(parent, parent.passes() + 1)
                    if self.loop.set_aside:  # the passes that chose it count no more
                        win.aside += chose
                parent, kept_any = win, True
            if d == 0:
                count.first.append(int(bool(keeps)))
        if self.loop.consolidate and kept_any:
            merged = Tree(parent.moves, parent.shift)  # a consolidation that changes nothing the writer uses
            self.trees.append(merged)
            verdict, ran = self.decide(parent, merged, self.rule(self.loop.margin, 1))
            count.calls += ran
            count.add("consolidation", verdict.verdict.advice == "keep")

    def kind(self, parent: Tree, cand: Tree) -> str:
        truth = cand.shift - parent.shift
        return "helpful" if truth < -1e-9 else "harmful" if truth > 1e-9 else "neutral"


def simulate(bank: Bank, loop: Loop, runs: int, seed: int = 0) -> Count:
    count = Count()
    sim = Simulator(bank, loop, seed)
    for _ in range(runs):
        sim.run(count)
    return count
