"""The books of every agent call: whom to call, what it costs, where its transcript goes.

A stage (engine/stages/passes.py, engine/update/backward_attempt.py, engine/validation/validator.py)
decides what to ask; `Calls.call` makes the backend call and keeps the books the same way for all
of them: the transcript is saved whether the call worked or not (secrets redacted), the usage and
cost become a `Call` event and count towards `--max-cost`, and a backend that overruns its own
timeout is cut off. It is its own object, the only mutable one a stage is handed, so that this
bookkeeping is written once and the spend has one owner.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...agents.base import Backend, BackendError, CallResult, Request
from ...agents.redact import redact
from ...agents.routing import backend_name
from ...agents.tools import Sandbox
from ...model import events as ev
from ...model.at import At
from ...model.bus import EventBus
from ...store.run_folder import write_atomic
from ..prompts import Prompts
from ..settings import Settings


@dataclass
class Calls:
    """Whom to call and the books of every call: the backend, the spend, the step's batches."""

    backend: Backend
    settings: Settings
    prompts: Prompts
    bus: EventBus
    secrets: list[str] = field(default_factory=list)
    spent: float = 0.0
    # How long the last step took, so a re-read one step later is cached for 5 minutes or
    # for an hour (cache_policy); None before the first step has finished.
    last_step_seconds: float | None = None
    # --batch: the step's StepBatch per role ("loss", "reduce"); their text calls wait for it.
    batches: dict[str, Any] = field(default_factory=dict)

    def reread_ttl(self) -> str:
        """The cache life for text the next step re-reads: 1 hour unless steps are known to be quick.

        Before any step was timed, a run a person reviews is assumed slow and an --auto run quick.
        """
        if self.last_step_seconds is None:
            return "5m" if self.settings.auto else "1h"
        return "5m" if self.last_step_seconds < 240 else "1h"

    def call_event(self, role: str, result: CallResult, seconds: float, transcript: Path, at: At) -> None:
        if result.cost_usd is not None:
            self.spent += result.cost_usd
        self.bus.emit(
            ev.Call(
                role=role,
                backend=backend_name(self.backend, role),
                model=result.model or self.settings.model_for(role),
                **result.spent(),
                seconds=round(seconds, 3),
                transcript=str(transcript),
                turns=result.turns,
                **at.fields(),
            )
        )

    def save_transcript(
        self, path: Path, request: Request, result: CallResult | None, error: str | None = None
    ) -> None:
        """Every call's prompt and transcript, kept with secrets redacted, whether it worked or not."""
        record = {
            "role": request.role,
            "model": (result.model if result else None) or request.model,
            "system": request.system,
            "lead": request.lead,
            "prefix": request.prefix,
            "prompt": request.prompt,
            "transcript": result.transcript if result else [],
            "text": result.text if result else None,
            "usage": vars(result.usage) if result else None,
            "cost_usd": result.cost_usd if result else None,
            "error": error,
        }
        write_atomic(path, json.dumps(redact(record, secrets=self.secrets), indent=1, ensure_ascii=False, default=str))

    async def call(self, request: Request, transcript: Path, at: At, sandbox: Sandbox | None = None) -> CallResult:
        """One backend call for place `at` with its transcript saved and its usage emitted, success or failure."""
        started = time.monotonic()
        # The backend enforces request.timeout itself and reports what the call cost; this
        # outer bound, a little longer, only catches a backend that fails to.
        bound = request.timeout + 30
        batch = self.batches.get(request.role) if sandbox is None else None
        try:
            if batch is not None:  # no outer bound: a batch may take hours, and polls on its own
                result = await batch.text(at.work or f"g{at.group}", request)
            elif sandbox is None:
                result = await asyncio.wait_for(self.backend.text(request), bound)
            else:
                result = await asyncio.wait_for(self.backend.agent(request, sandbox), bound)
        except TimeoutError:
            error = f"{request.role} call took longer than {request.timeout:.0f} s"
            await asyncio.to_thread(self.save_transcript, transcript, request, None, error)
            raise BackendError(error) from None
        except Exception as exc:
            partial = getattr(exc, "partial", None)
            await asyncio.to_thread(self.save_transcript, transcript, request, partial, f"{type(exc).__name__}: {exc}")
            if isinstance(partial, CallResult):
                self.call_event(request.role, partial, time.monotonic() - started, transcript, at)
            raise
        # Off the loop: each record is synced to disk, and sixteen works end their calls together.
        await asyncio.to_thread(self.save_transcript, transcript, request, result)
        self.call_event(request.role, result, time.monotonic() - started, transcript, at)
        return result

    def request(self, role: str, prompt: str, context: dict[str, Any], at: At, prefix: str = "") -> Request:
        """The request of a `role` call for place `at`: its streamed text and tool uses are events about it."""
        where = at.where()  # an agent's events name the work or the group and attempt, not the step

        def on_delta(text: str) -> None:
            self.bus.emit(ev.Delta(role=role, text=text, **where))

        def on_tool(tool: str, path: str, error: str | None) -> None:
            self.bus.emit(ev.ToolUsed(role=role, tool=tool, path=path, error=error, **where))

        return Request(
            role=role,
            prompt=prompt,
            system=self.prompts.render("system", role=role),
            prefix=prefix,
            model=self.settings.model_for(role),
            context=context,
            on_delta=on_delta,
            on_tool=on_tool,
            timeout=self.settings.timeout_for(role),
        )
