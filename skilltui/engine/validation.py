"""Validation: the pool measured on held-out works that training never sees.

`--val-work DIR` names a held-out work. After every step the writer runs forward on it
with the pool as the step left it, and the loss stage scores what it wrote, exactly as
for a training work. Nothing else happens to it: no reduce, no backward, so a falling
validation curve means the notes got better at the craft, not at these works.

- **Fixed episodes.** Every validation point runs episodes 1..`--episodes-per-step` of
  every validation work, so values compare across steps and epochs.
- **Out of reach.** Everything lives under `<run>/val/`, outside the `epoch*/` folders
  whose reports and traces the backward and reduce agents may read:

  ```
  val/stories/<work>.md                 the story each validation work is written from
  val/pool-<tree>/works/<work>/         the writer's scripts and transcript for those notes
  val/pool-<tree>/loss/<work>.md|.json  the judge's report and the engine's scores
  val/points/<point>.json               one validation point done (written last)
  ```
- **Keyed by the notes.** A measurement belongs to the pool's git *tree* (its notes'
  content), so the same notes are never paid for twice: the gate's "before" is the
  measurement the previous micro-step already made, a `--no-backward` control validates
  once and its curve stays exactly level, and a resumed run skips what is done.
- **The gate** (`--gate`): after a micro-step passes its checks, validation runs on the new
  notes; when the mean validation loss rose by more than `--gate-tolerance`, the automatic
  reviewer rolls the micro-step back. A person reviewing sees the same numbers and decides.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..model import events as ev
from ..model.review import GateVerdict
from .context import Context
from .gather import all_or_none
from .run import read_json, write_json
from .stages import Place, forward, loss
from .works import Work

Wait = Callable[[], Awaitable[None]]
EPSILON = 1e-9  # losses are rounded to 4 places; a rise equal to the tolerance is kept


@dataclass(frozen=True)
class Point:
    """Why validation ran: after a step, after a gated micro-step attempt, or before one."""

    kind: str  # step, micro, before
    epoch: int
    step: int
    group: int | None = None
    attempt: int | None = None

    @property
    def id(self) -> str:
        name = f"e{self.epoch}-s{self.step}"
        if self.group is not None:
            name += f"-g{self.group}"
        if self.attempt is not None:
            name += f"-a{self.attempt}"
        return name if self.kind == "step" else f"{name}-{self.kind}"


@dataclass
class Measurement:
    """The validation loss of every validation work for one state of the pool."""

    commit: str
    tree: str
    losses: dict[str, float] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    cost_usd: float = 0.0

    @property
    def mean(self) -> float | None:
        return round(sum(self.losses.values()) / len(self.losses), 4) if self.losses else None


def compare(before: Measurement, after: Measurement, tolerance: float, total: int) -> GateVerdict:
    """The gate's verdict: mean validation loss over the works measured on both sides."""
    common = sorted(set(before.losses) & set(after.losses))
    if not common:
        return GateVerdict(None, None, 0, tolerance, "none", "gate: validation failed; no verdict")
    mean_before = sum(before.losses[w] for w in common) / len(common)
    mean_after = sum(after.losses[w] for w in common) / len(common)
    advice = "rollback" if mean_after - mean_before > tolerance + EPSILON else "keep"
    reason = f"gate: val {mean_before:.3f} -> {mean_after:.3f}"
    if len(common) < total:
        reason += f" (over {len(common)} of {total} validation works)"
    return GateVerdict(round(mean_before, 4), round(mean_after, 4), len(common), tolerance, advice, reason)


class Validator:
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
        self.works = sorted(works, key=lambda w: w.name)
        self.names = {w.name for w in self.works}
        self.first, self.last = 1, ctx.settings.episodes_per_step
        self.wait = wait
        self.limit = limit
        self.fatal = fatal
        self.tolerance = ctx.settings.gate_tolerance
        self._unpaid = 0.0  # what a gate's "before" measurement cost, added to its verdict

    # -- where things are ----------------------------------------------------------------

    @property
    def root(self) -> Path:
        return self.ctx.run.val_dir

    def place(self, tree: str, work: str) -> Place:
        base = self.root / f"pool-{tree[:16]}"
        return Place(base / "works" / work, self.ctx.run.val_story_path(work), base / "loss", validation=True)

    def _pool_state(self) -> tuple[str, str]:
        pool = self.ctx.run.pool
        return pool.head(), pool.git("rev-parse", "HEAD^{tree}")

    def recorded(self, commit: str) -> Measurement:
        """What validation already knows about the pool at `commit` (blocking: one git call)."""
        tree = self.ctx.run.pool.git("rev-parse", f"{commit}^{{tree}}")
        found = Measurement(commit, tree)
        for work in self.works:
            scores = self.place(tree, work.name).loss_dir / f"{work.name}.json"
            if scores.exists():
                found.losses[work.name] = float(read_json(scores)["loss"])
            else:
                found.failed.append(work.name)
        return found

    # -- measuring -----------------------------------------------------------------------

    async def measure(self, point: Point) -> Measurement:
        """Validate the pool as it stands now. A point already done is read back, not rerun."""
        commit, tree = await asyncio.to_thread(self._pool_state)
        marker = self.root / "points" / f"{point.id}.json"
        if marker.exists():
            saved = read_json(marker)
            # A step's point says what the notes as that step left them scored; a resume comes
            # back to it after later steps moved the pool, and must not re-measure the step with
            # their notes. A gate's points (before, micro) are about the pool as it is now.
            if saved.get("tree") == tree or point.kind == "step":
                for work in self.works:
                    self._stage("skipped", point, work.name)
                kept = str(saved.get("commit") or commit), str(saved.get("tree") or tree)
                return Measurement(*kept, dict(saved["losses"]), [], float(saved.get("cost_usd") or 0.0))
        costs: list[float] = []

        def count(event: ev.Event) -> None:
            # Only validation calls: their work names are held out, never a training work's.
            if isinstance(event, ev.Call) and event.work in self.names and event.cost_usd is not None:
                costs.append(event.cost_usd)

        unsubscribe = self.ctx.bus.subscribe(count)
        try:
            results = await all_or_none([self._one(point, commit, tree, w) for w in self.works])
        finally:
            unsubscribe()
        found = Measurement(commit, tree, cost_usd=round(sum(costs), 6))
        for work, value in zip(self.works, results, strict=True):
            if value is None:
                found.failed.append(work.name)
            else:
                found.losses[work.name] = value
        if not found.failed:
            write_json(
                marker,
                {
                    "point": point.kind,
                    "epoch": point.epoch,
                    "step": point.step,
                    "group": point.group,
                    "attempt": point.attempt,
                    "commit": commit,
                    "tree": tree,
                    "losses": found.losses,
                    "cost_usd": found.cost_usd,
                },
            )
        return found

    async def _one(self, point: Point, commit: str, tree: str, work: Work) -> float | None:
        """One validation work at one point; a failure costs this work this point, nothing more."""
        place = self.place(tree, work.name)
        scores_path = place.loss_dir / f"{work.name}.json"
        reused = scores_path.exists() and (place.loss_dir / f"{work.name}.md").exists()
        async with self.limit:
            started = time.monotonic()
            try:
                if not reused:
                    await self.wait()
                    self._stage("started", point, work.name)
                    await forward(self.ctx, work, point.epoch, point.step, self.first, self.last, place)
                    await self.wait()
                    sample, _ = await loss(self.ctx, work, point.epoch, point.step, self.first, self.last, place)
                    report = sample.report
                else:
                    report = place.loss_dir / f"{work.name}.md"
            except self.fatal:
                raise
            except Exception as exc:  # noqa: BLE001 - a misbehaving agent or file costs this point only
                self._stage("failed", point, work.name, started, f"{type(exc).__name__}: {exc}")
                return None
        scores = read_json(scores_path)
        self._stage("skipped" if reused else "finished", point, work.name, None if reused else started)
        self.ctx.bus.emit(
            ev.ValLoss(
                epoch=point.epoch,
                step=point.step,
                work=work.name,
                loss=scores["loss"],
                scores=scores["scores"],
                point=point.kind,
                group=point.group,
                attempt=point.attempt,
                commit=commit,
                report=str(report),
                reused=reused,
            )
        )
        return float(scores["loss"])

    def _stage(
        self, status: str, point: Point, work: str, started: float | None = None, error: str | None = None
    ) -> None:
        self.ctx.stage(
            "validate",
            status,
            point.epoch,
            point.step,
            work=work,
            group=point.group,
            attempt=point.attempt,
            started=started,
            error=error,
        )

    # -- the gate ------------------------------------------------------------------------

    async def baseline(self, before: str, epoch: int, step: int, group: int) -> None:
        """Make sure the notes a micro-step starts from are validated (the pool must be at `before`)."""
        known = await asyncio.to_thread(self.recorded, before)
        if not known.failed:
            return
        head, _ = await asyncio.to_thread(self._pool_state)
        if head != before:
            return  # a resumed review: the pool already holds the attempt; judge uses what is known
        measured = await self.measure(Point("before", epoch, step, group))
        self._unpaid += measured.cost_usd

    async def judge(self, before: str, epoch: int, step: int, group: int, attempt: int) -> GateVerdict:
        """Validate the micro-step's notes (the pool holds them now) against the notes before it."""
        after = await self.measure(Point("micro", epoch, step, group, attempt))
        known = await asyncio.to_thread(self.recorded, before)
        verdict = compare(known, after, self.tolerance, len(self.works))
        cost = round(after.cost_usd + self._unpaid, 6)
        self._unpaid = 0.0
        verdict = replace(verdict, cost_usd=cost)
        at = {"epoch": epoch, "step": step, "group": group, "attempt": attempt}
        # The event is the verdict, located: the same fields under the same names.
        self.ctx.bus.emit(ev.GateChecked(**at, **asdict(verdict)))
        return verdict
