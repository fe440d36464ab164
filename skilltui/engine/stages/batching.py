"""`--batch`: a step's loss-judge calls (and its reduce calls) sent as one Message Batch.

The stages do not change: `loss` and `reduce` call `ctx.calls.call` as always. With `--batch`
the step gives the context a `StepBatch` per role, which holds each call until every
call of the step it expects has arrived (a work whose forward failed is dropped from
what it expects), sends them as one batch, polls it, and answers each call with its
result. A result that came back errored, expired or canceled falls back to a normal
call, so a bad batch costs time, never a work.

Resume without paying twice: the batch's record (`<step>/loss/batch.json`, or
`<step>/backward/reduce-batch.json`) is written before the batch is submitted, with
the custom ids it will carry, and again with the batch id as soon as the API returns
it, before any polling. A resumed run that finds the id polls that batch instead of
submitting another; one that finds a record without an id (killed during the submit
itself) does not submit again either and makes normal calls. So a step's batch is
submitted at most once, whatever happens.

The app and the console learn the batch's state from `BatchState` events.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...agents.base import Backend, BackendError, CallResult, FatalBackendError, Request
from ...model import events as ev
from ...model.at import At
from ...model.bus import EventBus
from ...store.run_folder import read_json, write_json

if TYPE_CHECKING:
    from ...agents.batches import BatchClient, BatchStatus

FIRST_POLL = 0.5  # seconds; doubles up to MAX_POLL
MAX_POLL = 60.0


@dataclass(frozen=True)
class BatchJob:
    """What one step's batch is for: its role's calls in step `at`, the keys it waits for, its record."""

    purpose: str  # the role: loss, reduce
    at: At
    record: Path
    expected: frozenset[str]


class StepBatch:
    """Collects one role's text calls of one step and answers them from one Message Batch."""

    def __init__(self, client: BatchClient, backend: Backend, bus: EventBus, job: BatchJob) -> None:
        self.client = client
        self.backend = backend
        self.bus = bus
        self.record = job.record
        self.purpose = job.purpose
        self.epoch, self.step = job.at.step_key
        self.expected = set(job.expected)
        self.pending: dict[str, tuple[Request, asyncio.Future[CallResult]]] = {}
        self._task: asyncio.Task | None = None

    # -- what the stages see ---------------------------------------------------------------

    async def text(self, key: str, request: Request) -> CallResult:
        if self._task is not None:  # the batch already left: a late call goes on its own
            return await self.backend.text(request)
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self.pending[key] = (request, future)
        self.expected.add(key)
        self._maybe_start()
        return await future

    def drop(self, key: str) -> None:
        """This key will send no call this step (its work failed or stopped before the judge)."""
        if key not in self.pending:
            self.expected.discard(key)
            self._maybe_start()

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    # -- the batch -------------------------------------------------------------------------

    def _maybe_start(self) -> None:
        if self._task is None and self.pending and self.expected <= set(self.pending):
            self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            answers = await self._batch()
        except asyncio.CancelledError:
            for _, future in self.pending.values():
                future.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - every waiting call raises it (a bad key stops the run)
            for _, future in self.pending.values():
                if not future.done():
                    future.set_exception(exc)
            return
        await asyncio.gather(*(self._settle(key, answers.get(key)) for key in self.pending))

    async def _settle(self, key: str, answer: CallResult | None) -> None:
        request, future = self.pending[key]
        if future.done():
            return
        try:
            # Errored, expired, canceled or not in the batch: a normal call instead.
            result = answer if answer is not None else await self.backend.text(request)
        except Exception as exc:  # noqa: BLE001 - the waiting stage raises it
            future.set_exception(exc)
            return
        future.set_result(result)

    async def _batch(self) -> dict[str, CallResult | None]:
        saved = read_json(self.record) if self.record.exists() else None
        if saved and saved.get("id"):
            batch_id, ids = saved["id"], dict(saved["ids"])
            self._emit(batch_id, "resumed")
        elif saved:
            self.bus.emit(
                ev.Warning_(
                    message=(
                        f"epoch {self.epoch} step {self.step}: a {self.purpose} batch was being submitted when the run "
                        "stopped and its id was never saved; normal calls instead of a second batch"
                    )
                )
            )
            return {}
        else:
            ids = {f"{self.purpose}-{i}": key for i, key in enumerate(sorted(self.pending))}
            # Written before the submit, so a run killed during it never submits a second batch.
            write_json(self.record, {"id": None, "ids": ids, "purpose": self.purpose})
            try:
                batch_id = await self.client.submit({cid: self.pending[key][0] for cid, key in ids.items()})
            except FatalBackendError:
                raise
            except BackendError as exc:
                # Whether the API created the batch is unknown, so it is not sent again: normal calls.
                self.bus.emit(
                    ev.Warning_(
                        message=f"epoch {self.epoch} step {self.step}: the {self.purpose} "
                        f"batch could not be submitted ({exc}); normal calls instead"
                    )
                )
                return {}
            write_json(self.record, {"id": batch_id, "ids": ids, "purpose": self.purpose})
            self._emit(batch_id, "submitted", processing=len(ids))
        delay, last = FIRST_POLL, None
        while True:
            status = await self.client.status(batch_id)
            if status.state != "ended" and (status.state, status.processing) != last:
                last = (status.state, status.processing)
                self._emit(batch_id, status.state, status)
            if status.state == "ended":
                break
            await asyncio.sleep(delay)
            delay = min(MAX_POLL, delay * 2)
        self._emit(batch_id, "ended", status)
        items = {cid: self.pending[key][0] for cid, key in ids.items() if key in self.pending}
        results = await self.client.results(batch_id, items)
        return {ids[cid]: result for cid, result in results.items()}

    def _emit(self, batch_id: str, state: str, status: BatchStatus | None = None, processing: int = 0) -> None:
        """Where the batch stands; without a status only what is known (the requests sent, if any)."""
        counts = (processing, 0, 0, 0, 0)
        if status is not None:
            counts = (status.processing, status.succeeded, status.errored, status.expired, status.canceled)
        self.bus.emit(
            ev.BatchState(
                epoch=self.epoch,
                step=self.step,
                purpose=self.purpose,
                batch_id=batch_id,
                state=state,
                processing=counts[0],
                succeeded=counts[1],
                errored=counts[2],
                expired=counts[3],
                canceled=counts[4],
            )
        )


def make_groups(names: list[str], size: int) -> list[list[str]]:
    """Consecutive groups of `size`; zero puts every work in one group."""
    if size <= 0:
        return [list(names)] if names else []
    return [names[i : i + size] for i in range(0, len(names), size)]
