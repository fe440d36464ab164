"""The offline backend's agent roles work in a thread: its tool reports reach the run in order,
and none arrives after the call was cancelled (a stopped run records nothing after its end)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from skilltui.agents.base import Request
from skilltui.agents.offline import OfflineBackend
from skilltui.agents.tools import Sandbox


class HeldSandbox(Sandbox):
    """A sandbox whose tools wait until the test lets them go, and say when one is waiting."""

    def __init__(self, root: Path) -> None:
        super().__init__(read_roots=[root])
        self.entered = threading.Event()
        self.release = threading.Event()

    def run(self, command: str, args: dict) -> str:
        self.entered.set()
        self.release.wait(10)
        return super().run(command, args)


async def test_a_tool_report_that_comes_after_the_call_was_cancelled_is_dropped(tmp_path: Path) -> None:
    story = tmp_path / "story.md"
    story.write_text("## Episode 1\n\nA harbour at night.\n", encoding="utf-8")
    sandbox = HeldSandbox(tmp_path)
    reports: list[tuple[str, str, str | None]] = []
    request = Request(
        role="forward",
        prompt="write",
        context={
            "story": str(story),
            "pool": str(tmp_path),
            "out_dir": str(tmp_path),
            "first": 1,
            "last": 1,
            "headers": [],
        },
        on_tool=lambda tool, path, error: reports.append((tool, path, error)),
    )
    call = asyncio.create_task(OfflineBackend().agent(request, sandbox))
    assert await asyncio.to_thread(sandbox.entered.wait, 10)  # the role is in its first tool, in the thread
    call.cancel()
    sandbox.release.set()
    await asyncio.gather(call, return_exceptions=True)
    for _ in range(20):  # let any report the thread hands over reach the loop
        await asyncio.sleep(0.01)
    assert reports == []


async def test_tool_reports_reach_the_caller_in_order_before_the_call_returns(tmp_path: Path) -> None:
    story = tmp_path / "story.md"
    story.write_text("## Episode 1\n\nA harbour at night.\n", encoding="utf-8")
    out = tmp_path / "scripts"
    out.mkdir()
    sandbox = Sandbox(read_roots=[tmp_path], write_roots=[out])
    reports: list[tuple[str, str, str | None]] = []
    request = Request(
        role="forward",
        prompt="write",
        context={"story": str(story), "pool": str(tmp_path), "out_dir": str(out), "first": 1, "last": 1, "headers": []},
        on_tool=lambda tool, path, error: reports.append((tool, path, error)),
    )
    await OfflineBackend().agent(request, sandbox)
    assert [(tool, error) for tool, _, error in reports] == [("view", None), ("create", None)]
    assert reports[1][1].endswith("01.fountain") and (out / "01.fountain").is_file()
