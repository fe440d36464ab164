"""The live app trains in a process of its own: whichever side dies, the run's record says how it ended.

These drive the real app (headless) and the real child process, and check `events.jsonl`,
the only record there is: one `run_finished` for the session, with the status and reason a
person would need, and no trainer process left behind.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from skilltui.drivers.engine_process import ProcessDriver
from skilltui.drivers.trainer_child import LOG_NAME, TRAINER_NICENESS
from tests.support.recorded import recorded
from tests.support.tui import SIZE, make_app, wait_for, wait_for_review

pytestmark = [
    pytest.mark.skipif(os.name != "posix", reason="the trainer runs in the app's loop off POSIX"),
    pytest.mark.usefixtures("process_driver"),
    pytest.mark.subprocess,
]


def finishes(opened) -> list[dict]:
    return [e for e in recorded(opened.run.events_path) if e["kind"] == "run_finished"]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
async def test_the_app_trains_in_another_process_and_draws_what_it_sends(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.driver, ProcessDriver)
        await wait_for_review(pilot, app)
        pid = app.driver.pid
        assert pid is not None and pid != os.getpid()
        # Background work: it yields a shared core to the app's frames.
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, mine + TRAINER_NICENESS) > mine or mine == 19
        # Its wakeups wait for the scheduler's tick rather than preempt a frame (Linux).
        if hasattr(os, "SCHED_BATCH"):
            assert os.sched_getscheduler(pid) == os.SCHED_BATCH
        # A process group of its own (the terminal's Ctrl-C is the app's), in the app's session:
        # under Linux's autogroup, niceness ranks the two within the one scheduling group.
        assert os.getpgid(pid) == pid != os.getpgid(0)
        assert os.getsid(pid) == os.getsid(0)
        # What the child recorded is what the app folded: the same losses for the same works.
        losses = {e["work"]: e["loss"] for e in recorded(opened.run.events_path) if e["kind"] == "loss"}
        assert losses and app.view.steps[(0, 0)].losses == losses
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    assert app.outcome.status == "finished"
    assert [f["status"] for f in finishes(opened)] == ["finished"]
    assert gone(pid)


async def test_a_killed_trainer_is_recorded_as_failed_and_named(open_training):
    opened = open_training()
    app = make_app(opened, latency=0.3)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.driver.pid is not None and app.view.works["alpha"].stage == "forward")
        pid = app.driver.pid
        os.kill(pid, signal.SIGKILL)
        await wait_for(pilot, lambda: not app.training)
        await wait_for(pilot, lambda: "failed" in app.query_one("#header").render().plain)
    [finished] = finishes(opened)
    assert finished["status"] == "failed"
    assert "killed by signal 9" in finished["reason"] and str(opened.run.root / LOG_NAME) in finished["reason"]
    assert (opened.run.root / LOG_NAME).exists()  # the file the reason names is there to read
    assert app.outcome.status == "failed"
    assert app.exit_code == 1


async def test_quitting_stops_the_trainer_which_records_the_stop_and_exits(open_training):
    opened = open_training()
    app = make_app(opened, latency=0.3)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.driver.pid is not None and app.view.works["alpha"].stage == "forward")
        pid = app.driver.pid
        await pilot.press("q")
        await pilot.press("y")
    [finished] = finishes(opened)
    assert finished["status"] == "stopped" and finished["reason"].startswith("quit from the app")
    assert gone(pid)
    assert not (opened.run.root / LOG_NAME).exists()  # the child printed nothing: no empty log is left
    # The same command resumes: the run is not locked by a trainer left behind.
    from skilltui.store.run_folder import is_locked

    opened.lock.release()
    assert not is_locked(opened.run.root)


async def test_a_trainer_whose_app_went_away_stops_and_says_so(open_training):
    opened = open_training()
    app = make_app(opened, latency=0.3)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.driver.pid is not None and app.view.works["alpha"].stage == "forward")
        pid = app.driver.pid
        # What the kernel does to the commands pipe when the app is killed outright.
        os.close(app.driver._commands)
        app.driver._commands = None
        await wait_for(pilot, lambda: not app.training)
    [finished] = finishes(opened)
    assert finished["status"] == "stopped" and "the app went away" in finished["reason"]
    assert gone(pid)


async def test_streamed_text_goes_joined_and_nothing_overtakes_it():
    from skilltui.drivers.wire import EventWire
    from skilltui.model import events as ev
    from skilltui.model.parse import parse_event

    read, write = os.pipe()
    wire = EventWire(write)
    wire.event(ev.Delta(role="forward", text="INT. ", work="alpha"))
    wire.event(ev.Delta(role="forward", text="KITCHEN", work="alpha"))
    wire.event(ev.Delta(role="forward", text="EXT. ", work="beta"))
    wire.event(ev.ToolUsed(role="forward", tool="create", path="ep1.fountain", work="alpha"))
    wire.event(ev.Delta(role="forward", text=" - NIGHT", work="alpha"))
    wire.flush()
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        sent = [parse_event(json.loads(line)["event"]) for line in pipe]
    assert [(e.kind, getattr(e, "text", None), e.work) for e in sent] == [
        ("delta", "INT. KITCHEN", "alpha"),
        ("delta", "EXT. ", "beta"),
        ("tool", None, "alpha"),
        ("delta", " - NIGHT", "alpha"),
    ]


@pytest.mark.slow
async def test_the_trainer_keeps_no_copy_of_the_apps_pipes(open_training):
    import select

    opened = open_training()
    app = make_app(opened, latency=0.3)
    # A pipe the app holds when the trainer starts: the output pipe of a git its pane reader
    # has just started, say. The child's copy of the write end would keep that read from
    # ever ending (the Pool pane stopped updating under load).
    read, write = os.pipe()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: app.driver.pid is not None)
            os.close(write)
            readable, _, _ = select.select([read], [], [], 10)
            assert readable and os.read(read, 1) == b""  # the end of the output: nobody else writes
            app.stop_training("test over")
    finally:
        os.close(read)


def test_the_run_and_the_app_closing_can_wait_for_the_child_at_once(open_training):
    """The run's thread reaps the child as its pipe closes while the app's close() waits too: both get its code."""
    import subprocess
    import sys
    import threading

    driver = ProcessDriver(open_training(), backend=None, reviewer=None, secrets=[])
    driver._child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.2); raise SystemExit(3)"])
    pid = driver.pid
    codes: list[int | None] = []
    waiter = threading.Thread(target=lambda: codes.append(driver._reap(None)))
    waiter.start()
    codes.append(driver._reap(5.0))
    waiter.join(5)
    assert codes == [3, 3]
    assert driver.pid is None and gone(pid)


async def test_the_trainer_holds_the_run_lock_with_the_app(open_training):
    opened = open_training()
    app = make_app(opened, latency=0.3)
    lock_file = (opened.run.root / "lock").resolve()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.driver.pid is not None and app.view.works["alpha"].stage == "forward")
        pid = app.driver.pid
        held = {os.path.realpath(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        assert str(lock_file) in held, held
        await pilot.press("q")
        await pilot.press("y")
    assert gone(pid)


def test_a_run_stays_locked_while_the_trainer_outlives_a_killed_app(tmp_path):
    import subprocess
    import sys
    import time

    from skilltui.store.run_folder import is_locked

    # The app: takes the lock, starts a trainer that inherits it the way engine_process does,
    # then dies without releasing anything (as a SIGKILL would).
    app = f"""
import os, subprocess, sys
from pathlib import Path
from skilltui.store.run_folder import RunLock
lock = RunLock(Path({str(tmp_path)!r})); lock.acquire()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                         pass_fds=(lock.held_fd(),), process_group=0,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(child.pid, flush=True)
os._exit(0)
"""
    done = subprocess.run([sys.executable, "-c", app], capture_output=True, text=True, timeout=60, check=True)
    trainer = int(done.stdout.split()[0])
    try:
        assert is_locked(tmp_path)  # the app is gone; the trainer it started still holds the run
    finally:
        os.kill(trainer, signal.SIGKILL)
    # The kernel drops the lock once the trainer's descriptors close: wait for that, bounded.
    deadline = time.monotonic() + 30
    while is_locked(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not is_locked(tmp_path)
