"""Rate limits: on a 429, fewer calls in flight for a while, instead of every worker retrying at once.

With `--workers 8`, eight forward agents share one API key. When the API answers 429
(rate limited), retrying each of them on its own backoff keeps the key over its limit:
they all come back together and are all refused again. A `Throttle` is shared by every
call of one backend, and on a 429 it:

- reads the wait the API asks for: `retry-after` (or `retry-after-ms`), else the reset
  time of whichever `anthropic-ratelimit-*-remaining` counter is exhausted (requests,
  tokens, input or output tokens; `anthropic-ratelimit-*-reset` is an RFC 3339 time), or
  of OpenAI's `x-ratelimit-remaining-requests` / `-tokens` (its reset a duration, `6m0s`);
- holds every new request until then, not only the refused one;
- halves the number of calls allowed in flight (at least one) and keeps it lowered for
  the longer of that wait and `hold` seconds; after that, each successful request lets
  one more call in, until the level before the 429 is back and the throttle lifts.

`on_change(throttled, limit, wait_seconds, reason)` is called when the throttle engages,
tightens or lifts, so the engine can emit an event and the app and the console can say
"throttled". The clock is injectable for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import datetime
from typing import Protocol

DEFAULT_WAIT = 10.0  # when a 429 says nothing about how long to wait
MAX_WAIT = 600.0
COUNTERS = ("requests", "tokens", "input-tokens", "output-tokens")

OnChange = Callable[..., None]


class ThrottleView(Protocol):
    """What the engine sees of a backend's throttle: whom it tells when it engages or lifts
    (a `Throttle`, or a routed run's several as one)."""

    on_change: OnChange | None


def wait_from_headers(headers: Mapping[str, str], now: float | None = None) -> tuple[float, str]:
    """(seconds to wait, which limit) from a 429's headers; DEFAULT_WAIT when they say nothing."""
    lower = {k.lower(): v for k, v in headers.items()}
    if (ms := lower.get("retry-after-ms")) is not None:
        with contextlib.suppress(ValueError):
            return min(MAX_WAIT, max(0.0, float(ms) / 1000)), "retry-after"
    if (value := lower.get("retry-after")) is not None:
        with contextlib.suppress(ValueError):
            return min(MAX_WAIT, max(0.0, float(value))), "retry-after"
    now = time.time() if now is None else now
    waits: list[tuple[float, str]] = []
    for counter in COUNTERS:
        remaining = lower.get(f"anthropic-ratelimit-{counter}-remaining")
        reset = lower.get(f"anthropic-ratelimit-{counter}-reset")
        if remaining is None or reset is None:
            continue
        try:
            exhausted = int(remaining) <= 0
            at = datetime.fromisoformat(reset.replace("Z", "+00:00")).timestamp()
        except ValueError:
            continue
        if exhausted:
            waits.append((min(MAX_WAIT, max(0.0, at - now)), f"{counter} limit"))
    for counter in ("requests", "tokens"):  # OpenAI's: x-ratelimit-reset-* is a duration ("1s", "6m0s", "20ms")
        left = lower.get(f"x-ratelimit-remaining-{counter}")
        wait = _duration(lower.get(f"x-ratelimit-reset-{counter}", ""))
        if left is not None and left.strip() in ("0", "0.0") and wait is not None:
            waits.append((min(MAX_WAIT, wait), f"{counter} limit"))
    if waits:
        return max(waits)
    return DEFAULT_WAIT, "rate limit"


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(text: str) -> float | None:
    """Seconds in a duration like `6m0s` or `20ms`; None when it is not one."""
    parts = _DURATION.findall(text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        return None
    return sum(float(n) * _UNITS[u] for n, u in parts)


class Throttle:
    """How many calls of one backend may be in flight, lowered for a while after a 429."""

    def __init__(
        self, *, hold: float = 60.0, clock: Callable[[], float] = time.monotonic, on_change: OnChange | None = None
    ) -> None:
        self.hold = hold
        self.clock = clock
        self.on_change = on_change
        self.limit: int | None = None  # None: no limit beyond the engine's --workers
        self.in_flight = 0
        self.paused_until = 0.0  # no request starts before this
        self.lowered_until = 0.0  # the lowered limit holds at least until this
        self._before: int = 1  # calls in flight when the first 429 came
        self._conditions: dict[asyncio.AbstractEventLoop, asyncio.Condition] = {}

    @property
    def throttled(self) -> bool:
        return self.limit is not None

    def _condition(self) -> asyncio.Condition:
        # One per event loop: a backend may serve several loops (diffuse, then train).
        loop = asyncio.get_running_loop()
        if loop not in self._conditions:
            self._conditions = {loop: asyncio.Condition()}
        return self._conditions[loop]

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one call in flight: waits out a pause and the lowered limit first."""
        cond = self._condition()
        async with cond:
            while True:
                now = self.clock()
                if now < self.paused_until:
                    timeout = self.paused_until - now
                elif self.limit is not None and self.in_flight >= self.limit:
                    timeout = 0.5
                else:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(cond.wait(), timeout)
            self.in_flight += 1
        try:
            yield
        finally:
            async with cond:
                self.in_flight -= 1
                cond.notify_all()

    def rate_limited(self, headers: Mapping[str, str], *, in_flight: bool = False) -> float:
        """A 429 arrived: pause, lower the limit; returns the wait to use.

        `in_flight` says whether the refused call still holds its slot (an agent CLI that
        retries on its own) or has just left it (a request this process will retry).
        """
        wait, reason = wait_from_headers(headers)
        now = self.clock()
        flying = self.in_flight + (0 if in_flight else 1)
        if self.limit is None:
            self._before = flying
        self.limit = max(1, min(self.limit or flying, flying) // 2)
        self.paused_until = max(self.paused_until, now + wait)
        self.lowered_until = max(self.lowered_until, now + max(wait, self.hold))
        self._tell(True, wait, f"{reason} (429)")
        return wait

    def succeeded(self) -> None:
        """A request went through: after the hold, let one more call in, until the old level is back."""
        if self.limit is None or self.clock() < self.lowered_until:
            return
        self.limit += 1
        if self.limit >= self._before:
            self.limit = None
            self._tell(False, 0.0, "the rate limit eased")
        else:
            self._tell(True, 0.0, "easing")

    def _tell(self, throttled: bool, wait: float, reason: str) -> None:
        if self.on_change is not None:
            self.on_change(throttled=throttled, limit=self.limit, wait_seconds=round(wait, 3), reason=reason)
