"""The Message Batches API for `--batch`: many text calls sent as one batch at half the price.

The loss judge and the reduce pass need no tools and nobody waits on them token by
token, so a run nobody watches can send them through the Message Batches API, which
bills every token at 50% of the standard price and does the fan-out on the API's side.
This module is the API half; `engine/stages/batching.py` decides what goes in a batch and
keeps the batch id in the run folder.

- `submit(items)` sends `{custom_id: Request}` as one batch, each request with exactly
  the parameters `AnthropicBackend.text` would send (cache marks included), and returns
  the batch id.
- `status(batch_id)` is the batch's processing status and request counts.
- `results(batch_id, items)` maps each custom id to a `CallResult` priced at the batch
  rate, or to None when that request came back errored, expired or canceled (the
  caller falls back to a normal call).

A 401/403/404 on any of these raises `FatalBackendError` like a normal call would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anthropic

from .anthropic_backend import AnthropicBackend
from .anthropic_call import Call, block_dict, text_of
from .base import Backend, BackendError, CallResult, FatalBackendError, Request

BATCH_DISCOUNT = 0.5  # the Batches API bills input, output and cache tokens at half price


@dataclass
class BatchStatus:
    state: str  # in_progress, canceling, ended
    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    expired: int = 0
    canceled: int = 0


class BatchClient:
    def __init__(self, backend: Backend) -> None:
        # With roles on several backends (agents/routing.py), the judges' one: train refuses --batch
        # unless the judges and the reducer call Anthropic (Settings.check).
        judge = backend.for_role("loss")
        if not isinstance(judge, AnthropicBackend):
            raise TypeError(f"--batch calls the Message Batches API through the anthropic backend, not {judge.name}")
        self.backend = judge

    async def submit(self, items: dict[str, Request]) -> str:
        requests = [
            {"custom_id": custom_id, "params": self.backend.text_params(request, request.model or self.backend.model)}
            for custom_id, request in items.items()
        ]
        async with self._errors("submit the batch"), self.backend._client() as client:
            # The parameters are the plain dict a streamed text call sends (text_params), not the SDK's TypedDict.
            batch = await client.messages.batches.create(requests=requests)  # type: ignore[arg-type]
        return batch.id

    async def status(self, batch_id: str) -> BatchStatus:
        async with self._errors(f"check batch {batch_id}"), self.backend._client() as client:
            batch = await client.messages.batches.retrieve(batch_id)
        c = batch.request_counts
        return BatchStatus(batch.processing_status, c.processing, c.succeeded, c.errored, c.expired, c.canceled)

    async def results(self, batch_id: str, items: dict[str, Request]) -> dict[str, CallResult | None]:
        out: dict[str, CallResult | None] = {}
        async with self._errors(f"read batch {batch_id}'s results"), self.backend._client() as client:
            async for line in await client.messages.batches.results(batch_id):
                request = items.get(line.custom_id)
                if request is None:
                    continue
                out[line.custom_id] = self._result(batch_id, line.custom_id, request, line.result)
        return out

    def _result(self, batch_id: str, custom_id: str, request: Request, result: Any) -> CallResult | None:
        if result.type != "succeeded":
            return None
        message = result.message
        call = Call(model=request.model or self.backend.model, secrets=self.backend._secrets)
        call.record({"event": "batch", "batch_id": batch_id, "custom_id": custom_id, "role": request.role})
        turn, _ = call.add_turn(message)
        if call.cost_usd is not None:
            call.cost_usd *= BATCH_DISCOUNT
        content = [block_dict(b) for b in message.content]
        call.record(
            {
                "event": "response",
                "turn": 1,
                "model": message.model,
                "stop_reason": message.stop_reason,
                "content": content,
                "usage": vars(turn),
                "cost_usd": call.cost_usd,
                "batch": True,
            }
        )
        if message.stop_reason in ("max_tokens", "refusal"):
            return None  # a normal call reports this properly
        return call.result(text_of(content))

    def _errors(self, what: str) -> _Errors:
        return _Errors(what, self.backend)


class _Errors:
    """Turn the SDK's errors into the backend's: a bad key stops the run, anything else costs the step."""

    def __init__(self, what: str, backend: AnthropicBackend) -> None:
        self.what = what
        self.backend = backend

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        if isinstance(exc, anthropic.APIStatusError):
            if exc.status_code in (401, 403):
                raise FatalBackendError(
                    f"the API rejected the key ({exc.status_code}) trying to {self.what}: check ANTHROPIC_API_KEY"
                ) from None
            raise BackendError(f"could not {self.what}: {exc.status_code} {exc.type or 'error'}") from None
        if isinstance(exc, anthropic.APIConnectionError):
            raise BackendError(f"could not {self.what}: the connection failed") from None
        return False
