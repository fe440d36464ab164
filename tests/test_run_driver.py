"""The run driver: every session ends with one run_finished on record, however it ends; --auto's console."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from skilltui.agents.offline import OfflineBackend
from skilltui.drivers.console import ConsoleSink
from skilltui.drivers.driver import RunDriver
from skilltui.drivers.headless import train_headless
from skilltui.engine.opening import open_run
from skilltui.engine.settings import Settings
from skilltui.engine.update.review import AutoReviewer
from skilltui.model.parse import read_run


@pytest.fixture
def opened(make_work, tmp_path: Path):
    works = [make_work("alpha", 4), make_work("beta", 4)]
    run = open_run(
        Settings(works=works, backend="offline", steps=2, episodes_per_step=2, runs_dir=tmp_path / "runs", run_id="d")
    )
    yield run
    run.lock.release()


def finishes(path: Path) -> list[tuple[str, str]]:
    return [(e.status, e.reason) for e in read_run(path).events if e.kind == "run_finished"]


async def test_a_cancelled_run_is_recorded_as_interrupted_once(opened):
    driver = RunDriver(opened, OfflineBackend(latency=0.3), AutoReviewer(), secrets=[])
    task = asyncio.ensure_future(driver.run())
    while not driver.view.in_flight:  # a forward call is running
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    driver.close()
    [(status, reason)] = finishes(opened.run.events_path)
    assert status == "interrupted" and "resume" in reason


async def test_a_stop_then_a_cancel_is_recorded_as_stopped_with_the_reason(opened):
    driver = RunDriver(opened, OfflineBackend(latency=0.3), AutoReviewer(), secrets=[])
    task = asyncio.ensure_future(driver.run())
    while not driver.view.in_flight:
        await asyncio.sleep(0.01)
    driver.stop("quit from the app")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    driver.close()
    assert finishes(opened.run.events_path) == [("stopped", "quit from the app")]


async def test_a_bug_in_the_trainer_fails_the_run_and_keeps_the_traceback_in_the_run_folder(opened, monkeypatch):
    driver = RunDriver(opened, OfflineBackend(), AutoReviewer(), secrets=[])

    async def broken(*args, **kwargs):
        raise KeyError("a bug")

    monkeypatch.setattr(driver.trainer, "_step", broken)
    outcome = await driver.run()
    driver.close()
    [crash] = list(opened.run.root.glob("crash-*.txt"))
    assert outcome.status == "failed" and str(crash) in outcome.reason and "KeyError" in crash.read_text()
    assert finishes(opened.run.events_path) == [("failed", outcome.reason)]


async def test_the_heartbeat_says_what_runs_while_calls_are_in_flight(opened):
    out = io.StringIO()
    driver = RunDriver(opened, OfflineBackend(latency=0.4), AutoReviewer(), secrets=[])
    sink = ConsoleSink(Console(file=out, force_terminal=False, width=300), view=driver.view, heartbeat=0.05)
    driver.subscribe(sink)
    beat = asyncio.ensure_future(sink.beat())
    task = asyncio.ensure_future(driver.run())
    while "[working] forward" not in out.getvalue():
        await asyncio.sleep(0.02)
    driver.stop("test over")
    await task
    beat.cancel()
    driver.close()
    line = next(line for line in out.getvalue().splitlines() if line.startswith("[working] forward"))
    assert "forward alpha" in line and "forward beta" in line and "tokens so far" in line and "stages 0/" in line


def test_auto_prints_a_start_line_per_stage_and_the_summary_at_the_end(opened):
    out = io.StringIO()
    code = train_headless(opened, OfflineBackend(), secrets=[], console=Console(file=out, width=300))
    printed = out.getvalue()
    assert code == 0
    for start in ("[start] forward alpha (epoch 0 step 0)", "[start] loss beta (epoch 0 step 1)", "[start] backward"):
        assert start in printed
    tail = printed.splitlines()[-6:]
    assert tail[0] == "run d finished" and tail[1].startswith("train loss ")
    assert tail[3].startswith("pool size ") and tail[3].endswith(" tokens")
    assert tail[-1].startswith("next: skilltui review ") and "--to DIR" in tail[-1]
