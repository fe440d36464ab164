"""Validation: the pool measured on held-out works that training never sees.

`--val-work DIR` names a held-out work. After every step the writer runs forward on it
with the pool as the step left it, and the loss stage scores what it wrote, exactly as
for a training work. Nothing else happens to it: no reduce, no backward, so a falling
validation curve means the notes got better at the craft, not at these works.

- **Fixed episodes.** Every validation point runs episodes 1..`--val-episodes` (default
  `--episodes-per-step`) of every validation work, so values compare across steps and epochs.
- **Out of reach.** Everything lives under `<run>/val/` (layout: `val_store.py`), outside the
  `epoch*/` folders whose reports and traces the backward and reduce agents may read;
  `val/points/<point>.json` records one validation point done (written last).
- **Samples, keyed by the notes.** A measurement belongs to the pool's git *tree*. Each pass
  over the validation set adds a sample beside the earlier ones, and a tree that already has
  the passes asked for is read back, never paid for twice: a `--no-backward` control
  validates once and its curve stays level with a deterministic writer. `--val-repeats R`
  sets the passes a measurement wants; a tree's figure is the mean of its samples.
- **A recorded point keeps its value.** A resumed run measures only the points it has not
  recorded, each on the notes that point belongs to (the tree its step ended on), whatever
  the live pool holds by then.
- **The gate** (`--gate`, rule in `gate.py`, arithmetic in `stats.py`): after a micro-step
  passes its checks the candidate notes and their parent are compared call by call; while
  the interval on the mean delta straddles zero, both sides get another pass, up to
  `--gate-max-repeats`, each look at the level that keeps the whole decision at
  `--gate-confidence`. A validation pass that fails is retried once; a work still missing
  makes the verdict "unmeasured". The automatic reviewer follows the advice; a person
  reviewing sees the figures and decides.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...model import events as ev
from ...model.at import At
from ...model.review import GateVerdict
from ...store import val_store
from ...store.micro_steps import step_end
from ...store.places import Place
from ...store.run_folder import read_json, write_json
from ..data.works import Work
from ..loss.scores import combine
from ..stages.context import Context
from ..stages.gather import all_or_none
from ..stages.passes import forward, loss
from .gate_loop import Gating
from .stats import Cluster, Spread

Wait = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Point:
    """What one measurement is for: why (`kind`: step, micro, before), where in the run, on which commit and tree."""

    kind: str
    at: At
    commit: str
    tree: str


@dataclass
class Measurement:
    """The validation samples of every validation work for one tree of the pool.

    `losses` is each work's figure (the mean of its passes); `clusters` every (work, pass)'s
    per-episode losses, what the gate compares.
    """

    commit: str
    tree: str
    losses: dict[str, float] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    cost_usd: float = 0.0
    clusters: dict[Cluster, list[float]] = field(default_factory=dict)

    @property
    def mean(self) -> float | None:
        return round(sum(self.losses.values()) / len(self.losses), 4) if self.losses else None


class Validator(Gating):
    """Runs validation points for one run; `fatal` exceptions (a stop, a refused key) propagate."""

    def __init__(
        self,
        ctx: Context,
        works: list[Work],
        *,
        wait: Wait,
        limit: asyncio.Semaphore,
        fatal: tuple[type[BaseException], ...],
    ) -> None:
        self.ctx = ctx
        s = ctx.settings
        self.works = sorted(works, key=lambda w: w.name)
        self.names = {w.name for w in self.works}
        self.first, self.last = 1, s.val_episodes or s.episodes_per_step
        self.wait = wait
        self.limit = limit
        self.fatal = fatal
        self.repeats = s.val_repeats
        self.max_repeats = max(s.max_repeats, s.val_repeats)
        self.confidence = s.gate_confidence
        # A writer that says it never varies (the offline one without noise) makes one pass exact.
        self.deterministic = ctx.calls.backend.deterministic
        self._unpaid = 0.0  # what a gate's "before" measurement cost, added to its verdict
        self._locks: dict[str, asyncio.Lock] = {}
        self._trees: dict[str, str] = {}  # commit -> its tree (`tree_of`)
        self._spreads: dict[str, tuple[int, dict[str, Spread]]] = {}  # tree -> (passes read, each work's spread)
        self.margin = s.consolidate_margin
        self._seen: list[float] = []  # the deltas verdicts measured, for the detectability notice
        self._told = False

    # -- where things are ----------------------------------------------------------------

    @property
    def root(self) -> Path:
        return self.ctx.run.val_dir

    def place(self, tree: str, work: str, k: int = 1) -> Place:
        return val_store.place(self.root, tree, work, self.ctx.run.val_story_path(work), k)

    def tree_of(self, commit: str) -> str:
        """The tree of `commit`, asked of git once per hash: a commit's tree never changes, and
        every measurement, baseline and kept update asks for it again (a ref is asked each time)."""
        tree = self._trees.get(commit)
        if tree is None:
            tree = self.ctx.run.pool.git("rev-parse", f"{commit}^{{tree}}")
            if len(commit) >= 40 and all(c in "0123456789abcdef" for c in commit):
                self._trees[commit] = tree
        return tree

    def recorded(self, commit: str, tree: str | None = None) -> Measurement:
        """What validation already knows about the pool at `commit`: every pass of every work (blocking)."""
        tree = tree or self.tree_of(commit)
        found = Measurement(commit, tree)
        for work in self.works:
            passes = val_store.counted(self.root, tree, work.name)
            if not passes:
                found.failed.append(work.name)
                continue
            found.losses[work.name] = round(statistics.fmean(float(p["loss"]) for p in passes), 4)
            for k, scores in enumerate(passes, start=1):
                losses = episode_losses(scores)
                found.clusters[(work.name, k)] = [losses[n] for n in sorted(losses)]
        return found

    # -- measuring -----------------------------------------------------------------------

    async def measure(self, at: At) -> Measurement:
        """A step's validation point: recorded once, on the tree its step ended on, then read back.

        A point already recorded keeps its value whatever the pool holds now, so a resumed run
        never re-measures the past; one not recorded yet is measured on its own tree.
        """
        marker = self.root / "points" / f"{at.point_id()}.json"
        if marker.exists():
            saved = read_json(marker)
            for work in self.works:
                self._stage("skipped", at, work.name)
            return Measurement(
                saved.get("commit", ""),
                saved.get("tree", ""),
                dict(saved["losses"]),
                [],
                float(saved.get("cost_usd") or 0.0),
            )
        commit = await asyncio.to_thread(self._step_commit, at)
        found = await self.ensure("step", at, commit, self.repeats, always_report=True)
        if not found.failed:
            write_json(
                marker,
                {
                    "point": "step",
                    "epoch": at.epoch,
                    "step": at.step,
                    "group": at.group,
                    "attempt": at.attempt,
                    "commit": commit,
                    "tree": found.tree,
                    "losses": found.losses,
                    "samples": {w: sum(1 for name, _ in found.clusters if name == w) for w in found.losses},
                    "cost_usd": found.cost_usd,
                },
            )
        return found

    def _step_commit(self, at: At) -> str:
        """The commit a step ended on: its last micro-step's outcome, or the pool's HEAD when it made none."""
        end = step_end(self.ctx.run, (at.epoch, at.step))
        return self.ctx.run.pool.head() if end is None else end

    async def ensure(self, kind: str, at: At, commit: str, passes: int, *, always_report: bool = False) -> Measurement:
        """Make sure the tree of `commit` has `passes` samples of every work: run only the missing passes.

        `kind` is why it is measured there (step, micro, before: its `val_loss` events' `point`).
        Every new pass adds a sample; none replaces one. Each work's `val_loss` event gives its
        mean over the passes so far; a work none of whose passes ran now is reported only
        when `always_report` (a step's point), as reused.
        """
        tree = await asyncio.to_thread(self.tree_of, commit)
        # Two verdicts sharing a parent must not both write its next pass: one tree, one measurer.
        async with self._locks.setdefault(tree, asyncio.Lock()):
            return await self._ensure(Point(kind, at, commit, tree), passes, always_report)

    async def _ensure(self, point: Point, passes: int, always_report: bool) -> Measurement:
        at, commit, tree = point.at, point.commit, point.tree
        # The writer reads this tree's own copy of the notes (the places point at it), not the live pool.
        await asyncio.to_thread(val_store.write_tree, self.ctx.run.pool.root, self.root, tree)
        have = {w.name: await asyncio.to_thread(val_store.passes, self.root, tree, w.name) for w in self.works}
        aside = await asyncio.to_thread(val_store.set_aside, self.root, tree)  # passes that chose it count not
        jobs = [(w, k) for w in self.works for k in range(have[w.name] + 1, aside + passes + 1)]
        costs: list[float] = []

        mine = str(val_store.pass_dir(self.root, tree, 1)) + "/"

        def count(event: ev.Event) -> None:
            # Only this tree's validation calls (their transcripts are under its folder), so
            # measurements of other trees running at the same time are not counted here.
            if isinstance(event, ev.Call) and event.work in self.names and event.cost_usd is not None:
                if (event.transcript or "").startswith(mine):
                    costs.append(event.cost_usd)

        unsubscribe = self.ctx.bus.subscribe(count)
        try:
            results = await all_or_none([self._one(at, tree, w, k) for w, k in jobs])
            # A failed pass is retried once, in pass order: a later pass is read only after an earlier one.
            again = [(i, job) for i, (job, ok) in enumerate(zip(jobs, results, strict=True)) if not ok]
            for i, (w, k) in again:
                results[i] = await self._one(at, tree, w, k)
        finally:
            unsubscribe()
        ran = {w.name for (w, _), ok in zip(jobs, results, strict=True) if ok}
        found = await asyncio.to_thread(self.recorded, commit, tree)
        found.cost_usd = round(sum(costs), 6)
        for work in self.works:
            count_now = sum(1 for name, _ in found.clusters if name == work.name)
            if work.name in found.losses and count_now < passes:
                found.failed.append(work.name)
            if work.name in found.losses and (work.name in ran or always_report):
                self._report(point, work.name, reused=work.name not in ran)
        return found

    async def _one(self, at: At, tree: str, work: Work, k: int) -> bool:
        """One pass of one validation work on one tree; a failure costs this sample only."""
        place = self.place(tree, work.name, k)
        async with self.limit:
            started = time.monotonic()
            try:
                await self.wait()
                self._stage("started", at, work.name)
                await forward(self.ctx, work, at.to(work=work.name), (self.first, self.last), place)
                await self.wait()
                await loss(self.ctx, work, at.to(work=work.name), (self.first, self.last), place)
            except self.fatal:
                raise
            except Exception as exc:  # noqa: BLE001 - a misbehaving agent or file costs this pass only
                self._stage("failed", at, work.name, started, f"{type(exc).__name__}: {exc}")
                return False
        self._stage("finished", at, work.name, started)
        return True

    def _report(self, point: Point, work: str, *, reused: bool) -> None:
        kind, at, commit, tree = point.kind, point.at, point.commit, point.tree
        passes = val_store.samples(self.root, tree, work)
        values = [float(p["loss"]) for p in passes[val_store.set_aside(self.root, tree) :]]
        last = passes[-1]
        self.ctx.bus.emit(
            ev.ValLoss(
                epoch=at.epoch,
                step=at.step,
                work=work,
                loss=round(statistics.fmean(values), 4),
                scores=last["scores"],
                point=kind,
                group=at.group,
                attempt=at.attempt,
                commit=commit,
                report=str(self.place(tree, work, len(passes)).loss_dir / f"{work}.md"),
                reused=reused,
                samples=len(values),
                spread=round(statistics.stdev(values), 4) if len(values) > 1 else None,
            )
        )
        if reused:
            self._stage("skipped", at, work)

    def _stage(self, status: str, at: At, work: str, started: float | None = None, error: str | None = None) -> None:
        self.ctx.stage("validate", status, at.to(work=work), started=started, error=error)

    # -- the gate ------------------------------------------------------------------------

    async def record_kept(self, parent: str, candidate: str, at: At, kept: GateVerdict) -> GateVerdict:
        """A kept update's figure from a fresh pass each side (`fresh`), and the passes that chose it set aside.

        The gate stops at the first look that clears its bound, and with several candidates the
        lowest delta wins, so the passes that kept an update are its lucky ones: their figure
        overstates the gain, and as the next parent's baseline they make that parent look
        better than it is. So they are left out of the tree's counted samples from now on, and
        `baseline` replaces them with as many passes that did not choose it.
        """
        if self.deterministic:
            return kept  # no luck, no curse: a new pass would write the same scripts
        tree = await asyncio.to_thread(self.tree_of, candidate)
        chose = await asyncio.to_thread(lambda: min(val_store.passes(self.root, tree, w.name) for w in self.works))
        # Set aside first: a run killed before its fresh pass resumes with them already out of the count.
        await asyncio.to_thread(val_store.set_aside_passes, self.root, tree, chose)
        self._spreads.pop(tree[:16], None)  # its spread in the history counted them
        return await self.fresh(parent, candidate, at, kept)

    async def baseline(self, before: str, at: At) -> None:
        """Make sure the notes micro-step `at` starts from have their passes (in their own copy of the notes).

        A kept tree whose choosing passes were set aside is measured afresh as often as they were,
        beside its fresh pass: its baseline then rests on as many passes as theirs did, none of
        which chose it. On the fresh pass alone, one skimmed call would make every candidate look
        better (docs/gate-statistics.md, part 5).
        """
        tree = await asyncio.to_thread(self.tree_of, before)
        aside = await asyncio.to_thread(val_store.set_aside, self.root, tree)
        passes = max(self.repeats, aside + 1) if aside and not self.deterministic else self.repeats
        measured = await self.ensure("before", at, before, passes)
        self._unpaid += measured.cost_usd


def episode_losses(scores: dict) -> dict[int, float]:
    """One loss per episode whose mean is the work's loss (the judge's blend, if any, spread evenly)."""
    episodes = {int(n): combine(parts) for n, parts in (scores.get("episodes") or {}).items()}
    if not episodes:
        return {}
    shift = float(scores["loss"]) - sum(episodes.values()) / len(episodes)
    return {n: value + shift for n, value in episodes.items()}
