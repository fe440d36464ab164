"""The gate's sequential loop over a validator's measurements: looks, fresh passes, the notice.

`Validator` (validator.py) measures trees; this part of it asks `gate.judge` after each
pass a side and decides what to measure next, so that a verdict's error rate is the one
`--gate-confidence` states however many passes it took (gate.py says how). It also keeps
the run's history of pass-to-pass spreads the rule borrows, and says once, after the first
verdicts, when the validation set is too small to see the effects the updates have.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ...model import events as ev
from ...model.at import At
from ...model.review import GateVerdict
from ...store import val_store
from .gate import Rule, judge, plan
from .stats import Spread, across_works, detectable, spreads_of

if TYPE_CHECKING:
    from ..data.works import Work
    from ..stages.context import Context
    from .validator import Measurement


class Gating:
    """The gate's half of `Validator`: it reads the measurements `Validator.ensure` makes."""

    if TYPE_CHECKING:  # what it reads of the Validator it is part of (validator.py)
        ctx: Context
        works: list[Work]
        repeats: int
        max_repeats: int
        confidence: float
        margin: float
        deterministic: bool
        _unpaid: float
        _spreads: dict[str, tuple[int, dict[str, Spread]]]
        _seen: list[float]
        _told: bool

        @property
        def root(self) -> Path: ...

        def recorded(self, commit: str, tree: str | None = None) -> Measurement: ...

        async def ensure(
            self, kind: str, at: At, commit: str, passes: int, *, always_report: bool = False
        ) -> Measurement: ...

    def history(self, exclude: set[str]) -> dict[str, Spread]:
        """Per validation work, the writer's pass-to-pass spread on every other tree measured twice or more (blocking).

        Per work, not pooled: a noisier work keeps its own spread instead of borrowing a calmer one's.
        A kept tree's set-aside passes count here no more than in its mean: they were chosen for
        agreeing on a low loss, so their spread is too small.
        """
        total: dict[str, Spread] = {}
        names = [w.name for w in self.works]
        for tree in val_store.trees(self.root):
            if any(t.startswith(tree) for t in exclude):
                continue
            have = self._spreads.get(tree)
            count = sum(val_store.passes(self.root, tree, name) for name in names)
            # A tree's passes only grow: re-read when they did (`record_kept` drops a tree it sets passes aside of).
            if have is None or have[0] != count:
                have = self._spreads[tree] = (count, spreads_of(self.recorded("", tree).clusters))
            for work, spread in have[1].items():
                total[work] = total.get(work, Spread()) + spread
        return total

    def rule(self, no_worse: bool = False, family: int = 1) -> Rule:
        looks = 1 if self.deterministic else self.max_repeats - self.repeats + 1
        margin = self.margin if no_worse else None
        return Rule(self.confidence, looks, max(family, 1), margin, self.deterministic)

    async def verdict(
        self, parent: str, candidate: str, at: At, no_worse: bool = False, family: int = 1
    ) -> GateVerdict:
        """The gate's verdict on `candidate` against `parent` (two commits of the pool), sequential.

        Both sides get `--val-repeats` passes; when neither they nor the run's history measure
        a spread, the parent gets one more first; while the interval straddles its bound, one
        more pass each, up to `--gate-max-repeats`, each look at the level `Rule` sets. Samples
        either side already has are used, not paid again. `cost_usd` is what this call measured
        (each tree's calls are told apart by their transcripts' folder, so verdicts on several
        candidates may run at once). `family`: the candidates of the round, tested together.
        It emits no `gate` event: `judge` does.
        """
        rule = self.rule(no_worse, family)
        passes, cost = self.repeats, 0.0
        parent_passes = passes  # may run one ahead: see below
        while True:
            after = await self.ensure("micro", at, candidate, passes)
            before = await self.ensure("before", at, parent, max(passes, parent_passes))
            cost += after.cost_usd + before.cost_usd
            history = await asyncio.to_thread(self.history, {after.tree, before.tree})
            left = passes < self.max_repeats and not self.deterministic
            missing = sorted(set(after.failed) | set(before.failed))
            found = judge(before.clusters, after.clusters, rule, passes_left=left, history=history, missing=missing)
            following = plan(found, passes, parent_passes, self.max_repeats if left else passes)
            if following is None:
                return replace(found.verdict, cost_usd=round(cost, 6))
            passes, parent_passes = following

    async def fresh(self, parent: str, candidate: str, at: At, kept: GateVerdict) -> GateVerdict:
        """The kept candidate's delta measured again on a new pass each side, which did not choose it.

        With several candidates the lowest delta wins, so the figure that chose it is biased
        low (the winner's curse); the verdict keeps its advice and records this figure instead.
        """
        if self.deterministic:
            return kept  # no luck, no curse: a new pass would write the same scripts
        ran = []
        for commit, kind in ((candidate, "micro"), (parent, "before")):
            have = await asyncio.to_thread(self.recorded, commit)
            k = 1 + min((sum(1 for name, _ in have.clusters if name == w.name) for w in self.works), default=0)
            found = await self.ensure(kind, at, commit, k)
            ran.append((found, k))
        (after, ka), (before, kb) = ran
        history = await asyncio.to_thread(self.history, {after.tree, before.tree})
        new_after = {c: v for c, v in after.clusters.items() if c[1] == ka}
        new_before = {c: v for c, v in before.clusters.items() if c[1] == kb}
        missing = sorted(set(after.failed) | set(before.failed))
        again = judge(new_before, new_after, self.rule(), passes_left=False, history=history, missing=missing)
        cost = round(kept.cost_usd + after.cost_usd + before.cost_usd, 6)
        p = again.paired
        if p is None or missing:
            return replace(kept, cost_usd=cost, reason=f"{kept.reason}; no fresh pass to record its delta on")
        low, high = (None, None) if p.low is None else (round(p.low, 4), round(p.high or 0.0, 4))
        reason = f"{kept.reason}; recorded from a fresh pass each, which did not choose it: {p.text}"
        delta, level = round(p.delta, 4), p.confidence  # the fresh figure at its own level
        return replace(kept, cost_usd=cost, reason=reason, delta=delta, low=low, high=high, level=level)

    async def judge(self, before: str, at: At, *, no_worse: bool = False, family: int = 1) -> GateVerdict:
        """Validate micro-step attempt `at`'s notes (the pool holds them now) against the notes before it.

        `no_worse`: a consolidation, kept when it is shown within `--consolidate-margin`
        (`gate.judge`); `family`: the round's candidates."""
        head = await asyncio.to_thread(self.ctx.run.pool.head)
        verdict = await self.verdict(before, head, at, no_worse, family)
        verdict = replace(verdict, cost_usd=round(verdict.cost_usd + self._unpaid, 6))
        self._unpaid = 0.0
        await self._notice(verdict)
        # The event is the verdict, located: the same fields under the same names.
        self.ctx.bus.emit(ev.GateChecked(**at.micro.fields(), **asdict(verdict)))
        return verdict

    async def _notice(self, verdict: GateVerdict) -> None:
        """After the first verdicts, say once when the validation set is too small to see the effects updates have."""
        if verdict.delta is not None:
            self._seen.append(abs(verdict.delta))
        if self._told or len(self._seen) < 2 or self.deterministic:
            return
        self._told = True
        spread = across_works(await asyncio.to_thread(self.history, set()))  # each work's own, as the gate's
        if spread is None:
            return
        rule = self.rule()
        smallest = detectable(spread[0], len(self.works), self.max_repeats, rule.nominal, spread[1])
        if smallest > max(self._seen):
            seen = ", ".join(f"{d:.3f}" for d in self._seen)
            self.ctx.bus.emit(
                ev.Warning_(
                    message=f"validation cannot decide these updates: at {self.max_repeats} passes a side it detects "
                    f"a change of {smallest:.3f} (80% power), the updates so far moved it by {seen}; "
                    "add validation episodes (--val-episodes) or works (--val-work), or allow more passes"
                )
            )
