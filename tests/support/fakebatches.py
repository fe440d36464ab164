"""The Message Batches endpoints of the fake API, so `--batch` runs through the real SDK in tests.

- `POST /v1/messages/batches` takes `{"requests": [{"custom_id", "params"}]}`; every
  request is answered at once by the server's script, as if it were a `/v1/messages`
  call (it is recorded in `FakeAnthropic.requests` with its `custom_id`), unless
  `outcome(custom_id, recorded)` says "errored", "expired" or "canceled".
- `GET /v1/messages/batches/{id}` reports `in_progress` for the first `polls_to_end - 1`
  retrievals, then `ended` with a `results_url`.
- `GET /v1/messages/batches/{id}/results` streams one JSON line per request.

`created` lists every batch submitted, so a test can prove a resumed run never
submitted twice.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.fakeapi import FakeAnthropic

_ids = itertools.count(1)


@dataclass
class FakeBatch:
    id: str
    requests: list[dict[str, Any]]
    results: list[dict[str, Any]] = field(default_factory=list)
    polls: int = 0


class FakeBatches:
    def __init__(self, fake: FakeAnthropic) -> None:
        self.fake = fake
        self.created: list[FakeBatch] = []
        self.polls_to_end = 1
        self.create_status: int | None = None  # answer the create call with this error status
        self.outcome: Callable[[str, Any], str] = lambda custom_id, recorded: "succeeded"

    def find(self, batch_id: str) -> FakeBatch | None:
        return next((b for b in self.created if b.id == batch_id), None)

    def create(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        from tests.support.fakeapi import Error, Recorded, Reply

        batch = FakeBatch(f"msgbatch_fake{next(_ids):04d}", list(body.get("requests", [])))
        for item in batch.requests:
            custom_id, params = item["custom_id"], item["params"]
            recorded = Recorded("POST", "/v1/messages", headers, params, answer="batch")
            with self.fake._lock:
                self.fake.requests.append(recorded)
            kind = self.outcome(custom_id, recorded)
            if kind != "succeeded":
                recorded.answer = f"batch {kind}"
                error = {"type": "error", "error": {"type": "api_error", "message": "fake batch error"}}
                batch.results.append(
                    {
                        "custom_id": custom_id,
                        "result": {"type": kind, **({"error": error} if kind == "errored" else {})},
                    }
                )
                continue
            answer = self.fake._next_answer(recorded)
            if not isinstance(answer, Reply):
                status = answer.status if isinstance(answer, Error) else 500
                batch.results.append(
                    {
                        "custom_id": custom_id,
                        "result": {
                            "type": "errored",
                            "error": {
                                "type": "error",
                                "error": {"type": "api_error", "message": f"fake status {status}"},
                            },
                        },
                    }
                )
                continue
            content = [dict(b) for b in answer.content]
            usage = self.fake._usage_for(params, content)
            message = {
                "id": f"msg_fakebatch{next(_ids):04d}",
                "type": "message",
                "role": "assistant",
                "model": params.get("model") or self.fake.model,
                "content": content,
                "stop_reason": answer.stop_reason or "end_turn",
                "stop_sequence": None,
                "usage": usage,
            }
            batch.results.append({"custom_id": custom_id, "result": {"type": "succeeded", "message": message}})
        self.created.append(batch)
        return self.view(batch, ended=False)

    def view(self, batch: FakeBatch, *, ended: bool) -> dict[str, Any]:
        now = datetime.now(UTC)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if ended:
            for r in batch.results:
                counts[r["result"]["type"]] += 1
        else:
            counts["processing"] = len(batch.requests)
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": now.isoformat(),
            "expires_at": (now + timedelta(hours=24)).isoformat(),
            "ended_at": now.isoformat() if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.fake.base_url}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def retrieve(self, batch_id: str) -> dict[str, Any] | None:
        batch = self.find(batch_id)
        if batch is None:
            return None
        batch.polls += 1
        return self.view(batch, ended=batch.polls >= self.polls_to_end)

    def results(self, batch_id: str) -> bytes | None:
        batch = self.find(batch_id)
        if batch is None:
            return None
        return "".join(json.dumps(r) + "\n" for r in batch.results).encode()
