"""One chat-completions request, streamed, and what its failures mean, for the `openai` backend.

The SDK's own retries are off (`max_retries=0`): the shared policy (`retries.py`) decides,
as it does for the `anthropic` backend. Here is only what is particular to the
OpenAI-compatible protocol:

- Streaming: `stream_options.include_usage` makes the server send the request's usage in
  a last chunk without choices; text deltas go to `request.on_delta` as they arrive, and
  tool calls are put together from their pieces by `index` (id and name come first, the
  JSON arguments in fragments).
- A stream that ends without a `finish_reason` was cut off (the connection dropped, a
  proxy timed out): it is retried like a dropped connection. Its usage was never reported,
  so it is recorded as unknown in the transcript rather than guessed.
- Usage: `prompt_tokens` includes the cached part, which providers that cache report as
  `prompt_tokens_details.cached_tokens`; it is counted as cache reads (billed at the
  cached rate), the rest as input. A cost the provider reports itself (OpenRouter's
  `usage.cost`) is taken as is. A server that reports no usage at all leaves the call
  without a price (its tokens are not known), never at $0.
- Failures: 401/403 (the key), 402 (credit), 404 (the model), a 429 saying the quota is
  used up, and a 400 saying the model cannot use tools are fatal (no other work could
  succeed); 408/409/429/5xx, errors inside a stream, a chunk that is not JSON (a garbled
  stream) and dropped connections are retried;
  any other 400 costs only that work.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai

from .anthropic_call import Call, usage_dict
from .base import Request, Usage
from .redact import redact
from .retries import RETRY_STATUSES, Failure, RetryPolicy, retry_after
from .throttle import Throttle

# How servers say a model cannot call tools: Ollama ("does not support tools"), vLLM
# (auto tool choice needs --enable-auto-tool-choice and a --tool-call-parser), OpenRouter
# ("No endpoints found that support tool use"), LM Studio and others ("tools are not supported").
NO_TOOLS = re.compile(
    r"does not support (tools|tool|function)|(tools?|tool use|tool calls?|tool calling|function calling|tool_choice)"
    r" (is|are) not supported|not support(ed)? (tools|tool use|tool calls|function calling)|support tool use"
    r"|enable-auto-tool-choice|tool-call-parser",
    re.IGNORECASE,
)


GARBLED = "the server sent a garbled stream"


class _Misshapen(Exception):
    """A streamed chunk that parsed as JSON but is not a chat-completions chunk (a garbled stream too)."""


@dataclass
class Answer:
    """One streamed answer, put together: its text, its tool calls, why it stopped, its usage."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    model: str | None = None
    usage: Any = None

    def message(self) -> dict[str, Any]:
        """The assistant turn as it is sent back in the next request."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


def turn_usage(usage: Any) -> tuple[Usage, float | None]:
    """The request's usage as the books count it, and the cost the provider reported (or None)."""
    if usage is None:
        return Usage(), None
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    cost = getattr(usage, "cost", None)
    if cost is None and isinstance(getattr(usage, "model_extra", None), dict):
        cost = usage.model_extra.get("cost")
    reported = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    turn = Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cache_read_tokens=min(cached, prompt),
    )
    return turn, reported


class ChatRequests:
    """The request half of `OpenAIBackend`: stream one request, retry it while that can help."""

    throttle: Throttle
    retry: RetryPolicy
    key_env: str

    async def _turn(
        self,
        client: openai.AsyncOpenAI,
        params: dict[str, Any],
        call: Call,
        request: Request,
        retry: RetryPolicy | None = None,
    ) -> Answer:
        """One streamed request, retried on transient failures; the whole answer once it is complete."""
        retry = retry or self.retry
        attempt = 0
        waited = 0.0
        while True:
            answer = Answer()
            started = time.monotonic()
            try:
                async with self.throttle.slot():
                    stream = await client.chat.completions.create(**params)
                    async with stream:
                        async for chunk in stream:
                            try:
                                _fold(answer, chunk, request)
                            except (AttributeError, TypeError):  # JSON, but not shaped as a chunk
                                raise _Misshapen from None
            except openai.APIStatusError as exc:
                failure = self._classify(exc, call)
                if exc.status_code == 429:
                    # Every call of this backend slows down, not only this one (throttle.py).
                    failure.wait = self.throttle.rate_limited(exc.response.headers)
            except openai.APIConnectionError as exc:
                failure = Failure(True, f"the connection failed ({_reason(exc)})")
            except openai.APIError as exc:  # an error event inside a 200 stream
                failure = Failure(True, f"the stream broke off: {redact(exc.message, call.secrets)}")
            except httpx2.TransportError as exc:
                failure = Failure(True, f"the connection failed ({type(exc).__name__}: {exc})")
            except json.JSONDecodeError:
                # A chunk the SDK cannot parse (a proxy that mangles streams, a broken server):
                # transient like a cut stream, and said plainly, not as the parser's traceback words.
                failure = Failure(True, f"{GARBLED} (a chunk that is not JSON)")
            except _Misshapen:
                failure = Failure(True, f"{GARBLED} (a chunk that is not shaped as a chat-completions chunk)")
            else:
                if answer.finish_reason is not None:
                    self.throttle.succeeded()
                    self._book(answer, call, attempt, started)
                    return answer
                failure = Failure(True, "the stream ended before the answer was complete")
            got = bool(answer.text or answer.tool_calls)
            if got:
                # Billed, most likely, but no usage was reported for it: kept as unknown, not guessed.
                call.record({"event": "partial_usage", "turn": call.turns + 1, "usage": None, "cost_usd": None})
            # An attempt that brought nothing back counts its time against the retry budget.
            lost = 0.0 if got else time.monotonic() - started
            waited = await retry.pause(failure, attempt, waited + lost, call, request, streamed=bool(answer.text))
            attempt += 1

    def _book(self, answer: Answer, call: Call, attempt: int, started: float) -> None:
        for n, tool_call in enumerate(answer.tool_calls):  # some local servers send calls without ids
            tool_call["id"] = tool_call["id"] or f"call_{call.turns + 1}_{n}"
        usage, reported = turn_usage(answer.usage)
        if answer.usage is None:  # a server that ignores stream_options: tokens unknown, so no price
            call.add_unreported()
            cost = None
        else:
            cost = call.add_usage(usage, reported)
        call.record(
            {
                "event": "response",
                "turn": call.turns,
                "attempts": attempt + 1,
                "model": answer.model or call.model,
                "stop_reason": answer.finish_reason,
                "content": answer.text,
                "tool_calls": answer.tool_calls,
                "usage": usage_dict(usage),
                "usage_reported": answer.usage is not None,
                "cost_usd": cost,
                "seconds": round(time.monotonic() - started, 3),
            }
        )

    def _classify(self, exc: openai.APIStatusError, call: Call) -> Failure:
        """Decide what an error status means. Fatal ones raise here; the rest say whether to retry."""
        status = exc.status_code
        detail = redact(_detail(exc), call.secrets)
        code = (exc.code or "").lower()
        if NO_TOOLS.search(detail):
            error = call.fail(f"model {call.model!r} cannot call tools ({status}: {detail})", fatal=True)
            error.no_tools = True  # type: ignore[attr-defined]  # the probe says so in its own words
            raise error from None
        if status == 401:
            raise call.fail(f"the server rejected the key (401): check {self.key_env}", fatal=True) from None
        if status == 403:
            raise call.fail(f"the server refused this key (403: {detail}): check its permissions", fatal=True) from None
        if status == 402 or code == "insufficient_quota":
            raise call.fail(
                f"the server refused for billing reasons ({status}: {detail}): check the account's credit", fatal=True
            ) from None
        if status == 404:
            raise call.fail(
                f"the server does not know model {call.model!r} (404: {detail}): check --model and --role-model",
                fatal=True,
            ) from None
        should = exc.response.headers.get("x-should-retry")
        retryable = status in RETRY_STATUSES or status >= 500
        if should in ("true", "false"):
            retryable = should == "true"
        return Failure(retryable, f"the server answered {status}: {detail}", retry_after(exc.response))


def _fold(answer: Answer, chunk: Any, request: Request) -> None:
    """Add one streamed chunk to the answer."""
    answer.model = answer.model or getattr(chunk, "model", None)
    if getattr(chunk, "usage", None) is not None:
        answer.usage = chunk.usage
    for choice in chunk.choices or []:
        delta = choice.delta
        if delta is not None and delta.content:
            answer.text += delta.content
            request.on_delta(delta.content)
        for piece in (delta.tool_calls if delta is not None else None) or []:
            index = piece.index if piece.index is not None else len(answer.tool_calls)
            while len(answer.tool_calls) <= index:
                answer.tool_calls.append({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
            slot = answer.tool_calls[index]
            if piece.id:
                slot["id"] = piece.id
            if piece.function is not None:
                slot["function"]["name"] += piece.function.name or ""
                slot["function"]["arguments"] += piece.function.arguments or ""
        if choice.finish_reason:
            answer.finish_reason = choice.finish_reason


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return exc.message or str(exc)


def _reason(exc: BaseException) -> str:
    """The root cause of a connection failure ("Connection refused"), not the SDK's "Connection error."."""
    cause: BaseException = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    text = str(cause) or type(cause).__name__
    return f"{type(cause).__name__}: {text}" if cause is not exc else text
