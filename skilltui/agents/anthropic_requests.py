"""One Messages API request, streamed, and the retry policy around it, for the `anthropic` backend.

The SDK's own retries are off (`max_retries=0`) so the policy is in one place: 429, 529,
5xx, overloaded or api errors inside a stream and dropped connections are retried with
capped exponential backoff that honours `retry-after`; 401/403 (the key), 402 (billing)
and 404 (the model) raise `FatalBackendError` at once, because no other work could
succeed either; anything else raises `BackendError`, which costs only that work. Retries
stop after `max_retries`, or when the time lost to failures (the waits, and the failed
attempts that brought nothing back) would pass `max_retry_wait` seconds.

`StreamedRequests` is a mixin of `AnthropicBackend` (anthropic_backend.py), which owns the
settings it reads; it lives apart because the failure policy changes for other reasons
than the tool loop does, and each is easier to read alone.
"""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx2

from .anthropic_call import Call, block_dict, usage_dict
from .base import Request
from .redact import redact
from .retries import RETRY_STATUSES, Failure, RetryPolicy, retry_after
from .throttle import Throttle

__all__ = ["Failure", "RetryPolicy", "StreamedRequests", "retry_after"]

# Error types that arrive inside a 200 stream and are transient.
RETRY_TYPES = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}


class StreamedRequests:
    """The request half of `AnthropicBackend`: stream one request, retry it while that can help."""

    throttle: Throttle
    retry: RetryPolicy

    async def _turn(
        self, client: anthropic.AsyncAnthropic, params: dict[str, Any], call: Call, request: Request
    ) -> Any:
        """One streamed Messages request, retried on transient failures. Returns the final Message."""
        attempt = 0
        waited = 0.0
        while True:
            streamed = False
            started = time.monotonic()
            # The usage a stream reported before it broke off: the request was billed for it.
            reported: Any = None
            reported_output: int | None = None
            try:
                async with self.throttle.slot(), client.messages.stream(**params) as stream:
                    async for event in stream:
                        if event.type == "message_start":
                            reported = event.message.usage
                        elif event.type == "message_delta" and getattr(event, "usage", None) is not None:
                            reported_output = event.usage.output_tokens
                        elif event.type == "text" and event.text:
                            streamed = True
                            request.on_delta(event.text)
                    message = await stream.get_final_message()
            except anthropic.APIStatusError as exc:
                if reported is not None:
                    call.add_partial(reported, reported_output)
                failure = self._classify(exc, call)
                if exc.status_code == 429 and exc.response is not None:
                    # Every call of this backend slows down, not only this one (throttle.py).
                    failure.wait = self.throttle.rate_limited(exc.response.headers)
            except (anthropic.APIConnectionError, httpx2.TransportError) as exc:
                if reported is not None:
                    call.add_partial(reported, reported_output)
                failure = Failure(True, f"the connection failed ({type(exc).__name__}: {exc})")
            else:
                self.throttle.succeeded()
                turn_usage, cost = call.add_turn(message)
                call.record(
                    {
                        "event": "response",
                        "turn": call.turns,
                        "attempts": attempt + 1,
                        "model": getattr(message, "model", call.model),
                        "stop_reason": message.stop_reason,
                        "content": [block_dict(b) for b in message.content],
                        "usage": usage_dict(turn_usage),
                        "cost_usd": cost,
                        "seconds": round(time.monotonic() - started, 3),
                    }
                )
                return message
            # An attempt that brought nothing back counts its time against the retry budget.
            lost = 0.0 if streamed or reported is not None else time.monotonic() - started
            waited = await self.retry.pause(failure, attempt, waited + lost, call, request, streamed=streamed)
            attempt += 1

    def _classify(self, exc: anthropic.APIStatusError, call: Call) -> Failure:
        """Decide what an error status means. Fatal ones raise here; the rest say whether to retry."""
        status = exc.status_code
        kind = exc.type or ""
        detail = redact(exc.api_message or str(exc), call.secrets)
        if status == 401:
            raise call.fail("the API rejected the key (401): check ANTHROPIC_API_KEY", fatal=True) from None
        if status == 403:
            raise call.fail(
                f"the API refused this key (403 {kind}: {detail}): check the key's workspace and permissions",
                fatal=True,
            ) from None
        if status == 402 or kind == "billing_error":
            raise call.fail(
                f"the API refused for billing reasons ({status}: {detail}): check the account's credit", fatal=True
            ) from None
        if status == 404:
            raise call.fail(
                f"the API does not know model {call.model!r} (404: {detail}): check --model and the per-role models",
                fatal=True,
            ) from None
        should = exc.response.headers.get("x-should-retry") if exc.response is not None else None
        retryable = status in RETRY_STATUSES or status >= 500 or kind in RETRY_TYPES
        if should in ("true", "false"):
            retryable = should == "true"
        label = kind or "error"
        message = (
            f"the API answered {status} {label}: {detail}"
            if status != 200
            else f"the API stream broke off with {label}: {detail}"
        )
        return Failure(retryable, message, retry_after(exc.response))
