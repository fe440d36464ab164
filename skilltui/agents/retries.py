"""The retry policy every HTTP backend shares: which failures are worth another attempt, how long to wait.

A training call is retried inside the backend (the `anthropic` and `openai` backends alike)
so that a transient failure (a 429, an overloaded server, a 5xx, a dropped connection, a
stream cut off mid-answer) costs a wait, not the work. Each backend's SDK has its own
retries switched off so the policy is written once, here: capped exponential backoff with
jitter, a server's `retry-after` honoured, at most `max_retries` more attempts and at most
`max_retry_wait` seconds lost to failures in one request: the waits, and the failed
attempts that brought nothing back (a gateway that answers 500 after minutes, a server that
never answers), so a server that keeps failing ends the call in minutes, not at the role's
timeout. Giving up says what happened and what to do, in one line. What an error *means*
(fatal, worth a retry, the wait it asks for) is each backend's own classification; what to
do about it is `RetryPolicy.pause`.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from dataclasses import dataclass
from typing import Any

from ..core.words import counted
from .anthropic_call import Call
from .base import Request

# Statuses worth another attempt: rate limits, timeouts, conflicts, overload and server errors.
RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504, 529}
# A retry-after longer than this is not waited out inside one call.
MAX_RETRY_AFTER = 600.0
# What a call that gave up on a server says to do, after what happened.
GIVE_UP_HINT = "the server keeps failing: check it, then run the same command again to resume"


@dataclass
class Failure:
    """What a failed request means: worth another attempt or not, what to say, how long to wait."""

    retryable: bool
    message: str
    wait: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """How long to keep trying one request: at most `max_retries` more attempts, waiting about
    `min(backoff_cap, backoff_base * 2**n)` before attempt n (with jitter, so concurrent works do
    not retry in lockstep), and never more than `max_retry_wait` seconds of waits in all."""

    max_retries: int = 6
    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    max_retry_wait: float = 300.0

    def backoff(self, attempt: int) -> float:
        ceiling = min(self.backoff_cap, self.backoff_base * (2**attempt))
        return ceiling * (0.5 + random.random() / 2)

    async def pause(
        self, failure: Failure, attempt: int, waited: float, call: Call, request: Request, *, streamed: bool
    ) -> float:
        """Wait before attempt `attempt + 1`, or raise the call's error when retrying cannot help.

        `waited` is the time this request has lost to failures so far, the failed attempt that
        just ended included when it brought nothing back (the backend measures that). Returns
        the new total, this wait included. The error is raised `from None`: its message says
        everything, and a chained SDK error could carry the key.
        """
        if not failure.retryable:
            raise call.fail(failure.message, fatal=False) from None
        if attempt >= self.max_retries:
            raise call.fail(
                f"{failure.message}; gave up after {counted(attempt + 1, 'attempt')}: {GIVE_UP_HINT}"
            ) from None
        wait = failure.wait if failure.wait is not None else self.backoff(attempt)
        if waited + wait > self.max_retry_wait:
            # Retries are capped in time too: a long retry-after, a storm or failures that take
            # minutes each are not waited out inside one call; the work fails (only it), and the
            # next step or a resume tries again.
            raise call.fail(
                f"{failure.message}; gave up after {counted(attempt + 1, 'attempt')} rather than wait "
                f"{waited + wait:.0f}s in all (the limit is {self.max_retry_wait:.0f}s): {GIVE_UP_HINT}"
            ) from None
        call.record(
            {
                "event": "retry",
                "turn": call.turns + 1,
                "attempt": attempt + 1,
                "error": failure.message,
                "wait_seconds": round(wait, 3),
            }
        )
        if streamed:
            request.on_delta(f"\n[{failure.message}; retrying]\n")
        await asyncio.sleep(wait)
        return waited + wait


def retry_after(response: Any) -> float | None:
    """The server's requested wait in seconds (retry-after-ms, retry-after seconds or date), capped."""
    if response is None:
        return None
    headers = response.headers
    wait: float | None = None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            wait = float(ms) / 1000
        except ValueError:
            wait = None
    if wait is None and (value := headers.get("retry-after")) is not None:
        try:
            wait = float(value)
        except ValueError:
            parsed = email.utils.parsedate_to_datetime(value) if value else None
            if parsed is not None:
                wait = parsed.timestamp() - time.time()
    if wait is None or wait < 0:
        return None
    return min(wait, MAX_RETRY_AFTER)
