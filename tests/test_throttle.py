"""Rate limits: a 429 slows every call of the backend down, and the app and the console say "throttled".

Drives the real `anthropic` SDK against `tests/support/fakeapi.py`, which answers 429 with the
API's `retry-after` and `anthropic-ratelimit-*` headers.
"""

from __future__ import annotations

import asyncio
import io
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console

from skilltui.agents.anthropic_backend import AnthropicBackend
from skilltui.agents.base import Connection, Request
from skilltui.agents.throttle import DEFAULT_WAIT, wait_from_headers
from skilltui.drivers.console import ConsoleSink
from skilltui.model import events as ev
from skilltui.model.notices import notice_of
from skilltui.model.view import RunView
from tests.support.fakeapi import Error, FakeAnthropic, Recorded, Reply, text

KEY = "sk-ant-test-XXXX-throttle-0123456789"


def test_the_wait_comes_from_retry_after_or_the_exhausted_limits_reset() -> None:
    assert wait_from_headers({"retry-after": "7"}) == (7.0, "retry-after")
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
    reset = (now + timedelta(seconds=30)).isoformat().replace("+00:00", "Z")
    headers = {
        "anthropic-ratelimit-requests-remaining": "12",
        "anthropic-ratelimit-requests-reset": reset,
        "anthropic-ratelimit-input-tokens-remaining": "0",
        "anthropic-ratelimit-input-tokens-reset": reset,
    }
    assert wait_from_headers(headers, now=now.timestamp()) == (30.0, "input-tokens limit")
    assert wait_from_headers({}) == (DEFAULT_WAIT, "rate limit")


async def test_a_429_pauses_every_call_and_lowers_the_calls_in_flight() -> None:
    lock = threading.Lock()
    spans: list[tuple[float, float]] = []  # (start, end) of every answered request
    refused_at: list[float] = []

    def script(r: Recorded) -> Reply | Error:
        start = time.monotonic()
        time.sleep(0.1)
        with lock:
            if "judge 0" in r.all_text and not refused_at:
                refused_at.append(time.monotonic())
                return Error(429, retry_after=0.5, headers={"anthropic-ratelimit-requests-remaining": "0"})
        time.sleep(0.2)
        with lock:
            spans.append((start, time.monotonic()))
        return Reply([text("ok")])

    changes: list[dict] = []
    with FakeAnthropic(script) as server:
        b = AnthropicBackend("claude-sonnet-5-5", Connection(KEY, server.base_url, max_retries=3))
        b.throttle.hold = 1.5
        b.throttle.on_change = lambda **facts: changes.append({**facts, "at": time.monotonic()})

        async def later(n: int) -> str:
            await asyncio.sleep(0.2)  # a second wave arrives while the key is rate-limited
            return (await b.text(Request(role="loss", prompt=f"judge {n}"))).text

        first = [b.text(Request(role="loss", prompt=f"judge {n}")) for n in range(4)]
        results = await asyncio.gather(*first, *[later(n) for n in range(4, 8)])
        await asyncio.sleep(max(0.0, refused_at[0] + 1.6 - time.monotonic()))
        for n in (8, 9):  # past the hold, each success lets one more call in, up to the four of before
            await b.text(Request(role="loss", prompt=f"judge {n}"))
    assert [getattr(r, "text", r) for r in results] == ["ok"] * 8
    refused = refused_at[0]
    assert changes[0]["throttled"] is True and changes[0]["wait_seconds"] == pytest.approx(0.5)
    assert changes[0]["limit"] == 2  # four were in flight: half of them may fly while it holds
    after = [s for s in spans if s[0] > refused]
    # Nobody started inside the pause the API asked for, not only the refused call...
    assert min(start for start, _ in after) - refused >= 0.45
    # ...and while the lowered limit held (until the throttle said it lifted: on a loaded
    # machine no call may have started by a fixed time), no more than two flew at once.
    lifted = next(c["at"] for c in changes if c["throttled"] is False)
    held = [s for s in after if s[0] < lifted]
    assert held, "no call flew while the lowered limit held"
    assert max(sum(1 for a, b_ in held if a <= t < b_) for t, _ in held) <= 2
    assert changes[-1]["throttled"] is False and b.throttle.limit is None  # lifted


def test_console_and_app_say_throttled() -> None:
    out = io.StringIO()
    sink = ConsoleSink(Console(file=out, force_terminal=False, width=200))
    sink(ev.Throttled(throttled=True, limit=2, wait_seconds=30, reason="requests limit (429)"))
    sink(ev.Throttled(throttled=False, reason="the rate limit eased"))
    sink.close()
    printed = out.getvalue()
    assert "[throttled] requests limit (429): at most 2 calls in flight, next call in 30s" in printed
    assert "[throttle lifted]" in printed

    view = RunView.of("r", Path("runs/r"), ["a"])
    throttled = ev.Throttled(throttled=True, limit=1, wait_seconds=5, reason="rate limit (429)")
    view.apply(throttled)
    assert view.throttled and notice_of(throttled).message == "throttled: rate limit (429)"
    view.apply(ev.Throttled(throttled=False, reason="eased"))
    assert not view.throttled


def test_the_header_says_throttled_and_shows_a_pending_batch() -> None:
    from skilltui.apps.shared.widgets.run_header import HeaderFacts, RunHeader

    header = RunHeader()
    header.facts = HeaderFacts(run_id="r", status="running", throttled=True, batch="batch loss in_progress")
    line = header.render().plain
    assert "throttled" in [fact.strip() for fact in line.split("│")] and "batch loss in_progress" in line
    header.facts = HeaderFacts(run_id="r", status="running")
    assert "throttled" not in header.render().plain


async def test_at_80_columns_the_header_keeps_tokens_cost_and_run_id_once_the_eta_shows() -> None:
    from textual.app import App

    from skilltui.apps.shared.widgets.run_header import HeaderFacts, RunHeader

    class One(App):
        def compose(self):
            yield RunHeader()

    app = One()
    async with app.run_test(size=(80, 24)) as pilot:
        header = app.query_one(RunHeader)
        header.facts = HeaderFacts(
            run_id="kestrel-lantern",
            epoch=0,
            step=1,
            first=3,
            last=4,
            elapsed=83,
            tokens=9930,
            cost=1.2345,
            status="review",
            stages_total=8,
            stages_done=3,
            steps_done=1,
            steps_total=3,
            eta="ETA 1m10s · run 5m00s",
        )
        await pilot.pause()
        line = header.render().plain
    assert len(line) <= 78, line  # inside the header's padding
    assert "9.9k tok" in line and "$1.2345" in line and line.rstrip().endswith("kestrel-lantern"), line
    assert "ETA 1m10s/5m00s" in line
