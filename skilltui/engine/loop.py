"""The training loop: epochs, steps, forward and loss per work, backward micro-steps per group.

```
for epoch:
  for step:                        # episodes first..last of every work
    for each work, concurrently:   # at most --workers at once
      forward -> loss              # a failing work costs that work this step, nothing more
    for each group, in order:
      reduce (only when >1 report) -> backward micro-step -> review
  consolidation micro-step -> review  # when the epoch kept an update (consolidation.py)
```

The works move through their stories together: step S covers the same episodes in every work,
and a work that has no episode `last` sits the step out. When no work reaches `last`, the
epoch ends and the next one starts again at step 0. Everything here is asyncio; git and
scoring run off the event loop, so the terminal app that hosts this loop never stalls. The
loop knows nothing of who watches it: it emits events and awaits a reviewer.
"""

from __future__ import annotations

import asyncio
import errno
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.base import Backend, BackendError, FatalBackendError
from ..agents.tools import ToolError
from ..core.durable import no_room
from ..model import events as ev
from ..model.at import At
from ..model.bus import EventBus
from ..model.review import Reviewer
from ..pool.damage import object_damage
from ..store.places import Sample
from .data.works import Work, covers, fewer_steps, planned_steps, untrained
from .notes.note_checks import over_budget, pool_tokens
from .opening import OpenedRun
from .stages.batching import BatchJob, StepBatch, make_groups
from .stages.calls import Calls
from .stages.context import Context, TrainingWorks
from .stages.ending import Outcome, RunFailed, RunStopped, disk_problem
from .stages.gather import all_or_none
from .stages.passes import StageError, forward, loss, reduce
from .update.attribution import run_attribution
from .update.consolidation import consolidate_epoch
from .update.micro_step import BackwardFailed, Evidence, MicroStep
from .validation.test_points import TestPoints
from .validation.validator import Validator

if TYPE_CHECKING:
    from ..agents.batches import BatchClient


class Trainer:
    """Trains one opened run. `await trainer.train()` runs it to the end, a stop or a failure."""

    def __init__(
        self,
        opened: OpenedRun,
        backend: Backend,
        reviewer: Reviewer,
        bus: EventBus,
        secrets: list[str] | None = None,
    ) -> None:
        self.opened = opened
        self.run = opened.run
        self.settings = opened.settings
        self.works = sorted(opened.works, key=lambda w: w.name)
        self.reviewer = reviewer
        self.bus = bus
        # Earlier sessions' calls are spent already, so --max-cost counts the whole run.
        self.calls = Calls(backend, self.settings, opened.prompts, bus, list(secrets or []), spent=opened.spent)
        self.ctx = Context(self.run, self.settings, opened.prompts, bus, self.calls, TrainingWorks(self.works))
        throttle = backend.throttle
        if throttle is not None:  # a backend that slows down on 429 says so through the events
            throttle.on_change = lambda **facts: bus.emit(ev.Throttled(**facts))
        self.batch_client: BatchClient | None = None
        if self.settings.batch:  # the loss judge and reduce calls go through the Message Batches API
            from ..agents.batches import BatchClient

            self.batch_client = BatchClient(backend)
        self._running = asyncio.Event()
        self._running.set()
        # How many stages wait at the pause gate right now: once every unfinished work waits
        # there, a paused run is provably still (what a watcher, or a test, can wait for).
        self.held = 0
        self.on_held: Callable[[int], None] = lambda held: None  # told at every change of `held`
        self._stop_reason: str | None = None
        # Validation and the test points share one bound (they never run at once); a stop ends either.
        limit, fatal = asyncio.Semaphore(self.settings.workers), (RunStopped, FatalBackendError)
        val, test = opened.val_works, opened.test_works
        self.validator = Validator(self.ctx, val, wait=self._gate, limit=limit, fatal=fatal) if val else None
        self.tests = TestPoints(self.ctx, test, wait=self._gate, limit=limit, fatal=fatal) if test else None

    # -- control from outside (the app, a signal) ------------------------------------------

    def pause(self) -> None:
        """Hold the loop before the next stage starts; calls already in flight finish."""
        if self._running.is_set():
            self._running.clear()
            self.bus.emit(ev.Paused(paused=True))

    def resume(self) -> None:
        if not self._running.is_set():
            self._running.set()
            self.bus.emit(ev.Paused(paused=False))

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def stop(self, reason: str) -> None:
        """Stop before the next stage starts; the run resumes with the same command."""
        self._stop_reason = reason
        self._running.set()

    async def _gate(self) -> None:
        if not self._running.is_set():
            self.held += 1
            self.on_held(self.held)
            try:
                await self._running.wait()
            finally:
                self.held -= 1
                self.on_held(self.held)
        if self._stop_reason:
            raise RunStopped(self._stop_reason)
        cap = self.settings.max_cost
        if cap is not None and self.calls.spent >= cap:
            raise RunStopped(f"spend ${self.calls.spent:.2f} reached --max-cost ${cap:.2f}")

    # -- the loop ------------------------------------------------------------------------

    async def train(self) -> Outcome:
        s = self.settings
        self.bus.emit(
            ev.RunStarted(
                run_id=self.run.id,
                run_dir=str(self.run.root),
                works=[w.name for w in self.works],
                config=self.opened.config,
                resumed=self.opened.resumed,
                val_works=sorted(w.name for w in self.opened.val_works),
                models=self.settings.models_by_role(self.calls.backend.model),
                backend=self.calls.backend.name,
                steps_per_epoch=planned_steps(self.works, s.steps, s.episodes_per_step),  # said below when fewer
                workers=s.workers,
                test_works=sorted(w.name for w in self.opened.test_works),
            )
        )
        # What reopening repaired or adopted goes on record before anything else happens.
        for notice in self.opened.notices:
            self.bus.emit(ev.Warning_(message=notice))
        if fewer := fewer_steps(self.works, s.steps, s.episodes_per_step):
            self.bus.emit(ev.Warning_(message=fewer))
        for left in untrained(self.works, s.steps, s.episodes_per_step):
            self.bus.emit(ev.Warning_(message=left))
        if over := over_budget(await asyncio.to_thread(pool_tokens, self.run.pool), s.pool_budget):
            self.bus.emit(ev.Warning_(message=over))
        if self.opened.pool_moved_to:
            self.bus.emit(ev.PoolChanged(head=self.opened.pool_moved_to, reason="moved outside training"))
        epochs_done = 0
        try:
            if self.tests is not None:  # the start pool on the test works, before any update
                await self.tests.measure(None)
            for epoch in range(s.epochs):
                for step in range(s.steps):
                    first, last = step * s.episodes_per_step + 1, (step + 1) * s.episodes_per_step
                    active = [w for w in self.works if covers(w, first, last)]
                    if not active:
                        # Out of data for this epoch: the next epoch starts over at step 0.
                        break
                    started = time.monotonic()
                    await self._step(At(epoch, step), (first, last), active)
                    self.calls.last_step_seconds = time.monotonic() - started
                await consolidate_epoch(self.ctx, self.reviewer, self.validator if s.gate else None, epoch, self._gate)
                if self.tests is not None and self.tests.due(epoch):
                    await self.tests.measure(epoch)
                epochs_done = epoch + 1
        except RunStopped as exc:
            return self._finish("stopped", str(exc), epochs_done)
        except (RunFailed, BackwardFailed, FatalBackendError) as exc:
            if no_room(exc, self.run.root):
                return self._finish("failed", disk_problem(exc, self.run.root, self.opened.resume), epochs_done)
            return self._finish("failed", str(exc), epochs_done)
        except OSError as exc:
            # The run's own folder cannot be written (a full disk, a quota, a folder made
            # read-only): nothing later could be recorded, so end here; every finished stage
            # is kept and the same command resumes once the cause is fixed.
            return self._finish("failed", disk_problem(exc, self.run.root, self.opened.resume), epochs_done)
        except Exception as exc:
            # A git command that hit a full disk fails as git does; a pool whose ref or object
            # cannot be read is damage, named with the ways to repair it (nothing is deleted);
            # anything else is a bug and goes up to the command line, which keeps its traceback.
            if no_room(exc, self.run.root):
                return self._finish("failed", disk_problem(exc, self.run.root, self.opened.resume), epochs_done)
            damage = object_damage(self.run.pool.root, exc)
            if damage is not None:
                return self._finish("failed", str(damage), epochs_done)
            raise
        return self._finish("finished", "", epochs_done)

    def _finish(self, status: str, reason: str, epochs_done: int) -> Outcome:
        spent = round(self.calls.spent, 6)
        self.bus.emit(ev.RunFinished(status=status, reason=reason, epochs_done=epochs_done, cost_usd=spent))
        return Outcome(status, reason)

    async def _step(self, at: At, episodes: tuple[int, int], active: list[Work]) -> None:
        (epoch, step), (first, last) = at.step_key, episodes
        # Groups come from the works that were scheduled, not those that succeeded, so a
        # resumed run rebuilds the same groups whatever failed the first time.
        groups = make_groups([w.name for w in active], self.settings.group_size)
        self.bus.emit(
            ev.StepStarted(
                epoch=epoch, step=step, first=first, last=last, works=[w.name for w in active], groups=groups
            )
        )
        limit = asyncio.Semaphore(self.settings.workers)

        async def one(work: Work) -> Sample | None:
            return await self._forward_and_loss(work, at.to(work=work.name), episodes, limit)

        if self.batch_client is not None:
            judged = {
                w.name
                for w in active
                if self.run.loss_report(epoch, step, w.name).exists()
                and self.run.loss_scores(epoch, step, w.name).exists()
            }
            due = {w.name for w in active} - judged
            self._batch(self.batch_client, "loss", at, self.run.loss_dir(epoch, step) / "batch.json", due)
        try:
            await self._step_body(at, active, groups, limit, one)
        finally:
            for batch in self.calls.batches.values():
                batch.cancel()
            self.calls.batches.clear()

    def _batch(self, client: BatchClient, purpose: str, at: At, record: Path, expected: set[str]) -> None:
        job = BatchJob(purpose, at, record, frozenset(expected))
        self.calls.batches[purpose] = StepBatch(client, self.calls.backend, self.bus, job)

    async def _step_body(
        self,
        at: At,
        active: list[Work],
        groups: list[list[str]],
        limit: asyncio.Semaphore,
        one: Callable[[Work], Awaitable[Sample | None]],
    ) -> None:
        epoch, step = at.step_key
        results = await all_or_none([one(w) for w in active])
        done = {s.work: s for s in results if s is not None}
        failed = [w.name for w in active if w.name not in done]
        if not done:
            raise RunFailed(f"every work failed at epoch {epoch} step {step}; see events.jsonl for each error")
        await self._attribution(epoch, step)
        if not self.settings.no_backward:
            await self._backward_all(groups, done, at, limit)
        # The mean is over the works scored this step; the event says how many, so a curve
        # never passes off a mean over fewer works as comparable to the others.
        mean = sum(s.loss for s in done.values()) / len(done)
        val_mean, val_count = None, 0
        if self.validator is not None:
            measured = await self.validator.measure(at)
            val_mean, val_count = measured.mean, len(measured.losses)
        self.bus.emit(
            ev.StepFinished(
                epoch=epoch,
                step=step,
                mean_loss=round(mean, 4),
                failed=failed,
                works_in_mean=len(done),
                val_mean_loss=val_mean,
                val_works_in_mean=val_count,
            )
        )

    async def _attribution(self, epoch: int, step: int) -> None:
        """Per-note attribution from the traces up to this step, for the panes (the prompt computes its own)."""
        pool = self.run.pool
        notes = [rel for rel, _ in await asyncio.to_thread(pool.headers)]
        stats = await asyncio.to_thread(run_attribution, self.run, notes, (epoch, step))
        self.bus.emit(ev.Attribution(epoch=epoch, step=step, notes={p: s.to_dict() for p, s in stats.items()}))

    async def _forward_and_loss(
        self, work: Work, at: At, episodes: tuple[int, int], limit: asyncio.Semaphore
    ) -> Sample | None:
        """One work's half of a step, with anything it throws contained to itself.

        It holds one of the --workers slots throughout, except while its judge call waits
        in a --batch batch: that wait must not keep other works from their forward pass.
        """
        stage = "forward"
        held = False
        try:
            await limit.acquire()
            held = True
            await self._gate()
            started = time.monotonic()
            self.ctx.stage(stage, "started", at)
            ran = await forward(self.ctx, work, at, episodes)
            self.ctx.stage(stage, "finished" if ran else "skipped", at, started=started)
            stage = "loss"
            if "loss" in self.calls.batches:
                limit.release()
                held = False
            await self._gate()
            started = time.monotonic()
            self.ctx.stage(stage, "started", at)
            sample, ran = await loss(self.ctx, work, at, episodes)
            self.ctx.stage(stage, "finished" if ran else "skipped", at, started=started)
            return sample
        except (RunStopped, FatalBackendError):
            raise
        except OSError as exc:
            if no_room(exc, self.run.root):
                raise
            self.ctx.stage(stage, "failed", at, error=f"{type(exc).__name__}: {exc}")
            return None
        except (BackendError, StageError, ToolError) as exc:
            if no_room(exc, self.run.root):
                raise OSError(errno.ENOSPC, f"no space left on the device while {stage} ran: {exc}") from exc
            self.ctx.stage(stage, "failed", at, error=str(exc))
            return None
        except Exception as exc:  # noqa: BLE001 - a misbehaving agent or file costs this work only
            if no_room(exc, self.run.root):
                raise OSError(errno.ENOSPC, f"no space left on the device while {stage} ran: {exc}") from exc
            self.ctx.stage(stage, "failed", at, error=f"{type(exc).__name__}: {exc}")
            return None
        finally:
            if held:
                limit.release()
            if "loss" in self.calls.batches:  # a work that sends no judge call must not hold the batch
                self.calls.batches["loss"].drop(work.name)

    async def _backward_all(
        self, groups: list[list[str]], done: dict[str, Sample], at: At, limit: asyncio.Semaphore
    ) -> None:
        """Every micro-step of the step, in order; the reduces run ahead of them, concurrently.

        A reduce reads only its group's loss reports, never the pool, so it need not wait
        for earlier micro-steps: group 2's summary is written while group 1 is in review.
        """
        plan = [(group, [done[n] for n in names if n in done]) for group, names in enumerate(groups, 1)]
        epoch, step = at.step_key

        async def summarise(group: int, samples: list[Sample]) -> Path | None:
            if len(samples) < 2:
                return None  # a single report has nothing to find in common with; backward reads it
            if "reduce" in self.calls.batches:  # a batched reduce waits for the others: it holds no slot
                return await self._reduce(samples, at.to(group=group))
            async with limit:
                return await self._reduce(samples, at.to(group=group))

        if self.batch_client is not None:
            due = {
                f"g{group}"
                for group, samples in plan
                if len(samples) >= 2 and not (self.run.backward_dir(epoch, step, group) / "summary.md").exists()
            }
            self._batch(self.batch_client, "reduce", at, self.run.step_dir(epoch, step) / "reduce-batch.json", due)
        summaries = {group: asyncio.ensure_future(summarise(group, samples)) for group, samples in plan if samples}
        try:
            for group, samples in plan:
                if not samples:
                    self.bus.emit(
                        ev.Warning_(
                            message=f"epoch {epoch} step {step} group {group}: every work failed; no micro-step"
                        )
                    )
                    continue
                summary = await summaries[group]
                await self._gate()
                gate = self.validator if self.settings.gate else None
                evidence = Evidence(samples, summary)
                ran = await MicroStep(self.ctx, self.reviewer, evidence, at.to(group=group), len(groups), gate).run()
                if not ran:
                    self.ctx.stage("backward", "skipped", at.to(group=group))
        finally:
            for task in summaries.values():
                task.cancel()
            await asyncio.gather(*summaries.values(), return_exceptions=True)

    async def _reduce(self, samples: list[Sample], at: At) -> Path:
        await self._gate()
        started = time.monotonic()
        self.ctx.stage("reduce", "started", at)
        try:
            summary, ran = await reduce(self.ctx, samples, at)
        except BackendError as exc:
            self.ctx.stage("reduce", "failed", at, error=str(exc))
            raise RunFailed(f"reduce failed at epoch {at.epoch} step {at.step} group {at.group}: {exc}") from exc
        self.ctx.stage("reduce", "finished" if ran else "skipped", at, started=started)
        return summary
