"""The wire between the app and its trainer process, and the one owner of a review on each side.

A line either side cannot read must stop the session on record, saying what was wrong,
rather than be guessed at (a guessed answer could approve what nobody approved). An answer
names the micro-step it is about, so one about any other attempt decides nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skilltui.agents.offline import OfflineBackend
from skilltui.apps.train.app import TrainingApp
from skilltui.apps.train.screens.rerun_note import RerunNoteScreen
from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.drivers import messages, wire
from skilltui.drivers.driver import Driver, RunDriver
from skilltui.drivers.messages import Answer, ReviewAsked, WireError, parse_for_app, parse_for_trainer
from skilltui.engine.update.review import AutoReviewer
from skilltui.model import events as ev
from skilltui.model.at import At
from skilltui.model.parse import read_run
from skilltui.model.review import Decision, GateVerdict, ReviewRequest
from tests.support.tui import SIZE, make_app, wait_for, wait_for_review

forks = pytest.mark.skipif(os.name != "posix", reason="the trainer runs in the app's loop off POSIX")


def request(attempt: int = 1) -> ReviewRequest:
    return ReviewRequest(
        run_dir=Path("/runs/t"), epoch=0, step=2, group=1, attempt=attempt, label="e0 s2 g1", works=["alpha"],
        before="abc", after="def", subject="Add a note", patch="--- a\n+++ b\n", evidence="why",
        reports={"alpha": "report\nline"}, lint_ok=False, lint_problems=["notes/x.md: too long"],
        added=["notes/x.md"], gate=GateVerdict(0.5, 0.4, 2, "keep", "better"),
    )  # fmt: skip


def finished(opened) -> list[ev.RunFinished]:
    return [e for e in read_run(opened.run.events_path).events if isinstance(e, ev.RunFinished)]


def decided(opened) -> list[tuple[str, int]]:
    return [(e.decision, e.attempt) for e in read_run(opened.run.events_path).events if isinstance(e, ev.DecisionMade)]


def test_every_message_reads_back_as_it_was_sent():
    for message in (
        messages.Pause(),
        messages.Resume(),
        messages.Stop("quit from the app", "failed"),
        Answer(At(0, 2, 1, 1), Decision("rerun", "human", "shorter")),
        Answer(At(0, 2, 1, 1), error="ValueError: no"),
    ):
        assert parse_for_trainer(messages.line_of(message)) == message
    for message in (ReviewAsked(request(), "2026-01-01T00:00:00Z"), messages.Held(3), ev.Paused(paused=True)):
        assert parse_for_app(messages.line_of(message)) == message
    # The event the app folds for a review is the one the child recorded, time and all.
    asked = ReviewAsked(request(2), "2026-01-01T00:00:00Z")
    assert asked.event == ev.ReviewRequested(
        time="2026-01-01T00:00:00Z", epoch=0, step=2, group=1, attempt=2, label="e0 s2 g1", before="abc", after="def"
    )


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b"{not json\n", "not JSON"),
        # Too deep for the decoder, or not UTF-8: still a refused line, never a crash of the reader.
        (b"[" * 100_000 + b"\n", "not JSON"),
        (b'{"t": "\xff"}\n', "not JSON"),
        (b"[1, 2]\n", "a message is a JSON object, not list"),
        (b'{"t": "aprove"}\n', "unknown message 'aprove'"),
        (b'{"t": "stop"}\n', "a 'stop' message needs 'reason'"),
        (b'{"t": "stop", "reason": "x", "status": "gone"}\n', "a 'stop' message's 'status' cannot be 'gone'"),
        (b'{"t": "pause", "now": true}\n', "a 'pause' message has no field 'now'"),
        (b'{"t": "decision", "key": [0, 2, 1], "decision": null, "error": "x"}\n', "'key' cannot be [0, 2, 1]"),
        (b'{"t": "decision", "key": [0, 2, 1, 1], "error": ""}\n', "a decision or an error"),
        (
            b'{"t": "decision", "key": [0, 2, 1, 1], "decision": {"action": "keep", "by": "human"}}\n',
            "a 'decision' message's 'decision.action' cannot be 'keep'",
        ),
        (
            b'{"t": "decision", "key": [0, 2, 1, 1], "decision": {"action": "approve", "by": "cat"}}\n',
            "'decision.by' cannot be 'cat'",
        ),
    ],
)
def test_the_trainer_refuses_a_malformed_message_naming_what_is_wrong(line: bytes, says: str):
    with pytest.raises(WireError) as refused:
        parse_for_trainer(line)
    assert says in str(refused.value)


def test_the_app_refuses_a_malformed_message_naming_what_is_wrong():
    good = messages.line_of(ReviewAsked(request(), "2026-01-01T00:00:00Z")).decode()
    with pytest.raises(WireError, match="a 'review' message's 'request.lint_ok' cannot be 'no'"):
        parse_for_app(good.replace('"lint_ok": false', '"lint_ok": "no"'))
    with pytest.raises(WireError, match="a 'review' message needs 'request.epoch'"):
        parse_for_app(good.replace('"epoch": 0, ', ""))
    with pytest.raises(WireError, match="a 'held' message's 'n' cannot be '2'"):
        parse_for_app('{"t": "held", "n": "2"}')
    with pytest.raises(WireError, match="unknown event kind 'los'"):
        parse_for_app('{"t": "event", "event": {"kind": "los"}}')
    with pytest.raises(WireError, match="unknown message 'pause'"):  # a command, going the wrong way
        parse_for_app(messages.line_of(messages.Pause()))


@pytest.mark.usefixtures("process_driver")
async def test_both_drivers_have_what_the_app_holds(open_training):
    opened = open_training()
    local = RunDriver(opened, OfflineBackend(), AutoReviewer(), secrets=[])
    local.close()
    assert isinstance(local, Driver)
    assert isinstance(make_app(opened).driver, Driver)


@pytest.mark.slow
@forks
@pytest.mark.usefixtures("process_driver")
@pytest.mark.subprocess
async def test_a_command_the_trainer_cannot_read_fails_the_session_on_record(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_review(pilot, app)
        pid = app.driver.pid
        wire.write_all(app.driver._commands, b'{"t": "decision", "key": [0, 0, 1], "decision": null}\n')
        await wait_for(pilot, lambda: not app.training)
    [end] = finished(opened)
    assert end.status == "failed"
    assert "the trainer could not read a message from the app" in end.reason and "'key'" in end.reason
    assert decided(opened) == []  # nothing was guessed at
    assert app.exit_code == 1
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped: no trainer left behind


def forgetful_line_of(message):  # a trainer that forgot when its review was recorded
    line = messages.line_of(message)
    return line.replace(b'"time": ', b'"when": ') if isinstance(message, ReviewAsked) else line


class ForgetfulTrainer(OfflineBackend):
    """The offline backend, whose trainer process writes its review messages with a field misnamed.

    It is unpickled only in the trainer's process (the app hands it over as part of the job):
    the wire is broken there, and only there.
    """

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        wire.line_of = forgetful_line_of


@forks
@pytest.mark.usefixtures("process_driver")
@pytest.mark.subprocess
async def test_a_message_the_app_cannot_read_fails_the_session_on_record(open_training):
    opened = open_training()
    app = TrainingApp(opened, ForgetfulTrainer(), secrets=[], hint=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: not app.training)
        assert not isinstance(app.screen, ReviewScreen)
    [end] = finished(opened)
    assert end.status == "failed"
    assert "the app could not read a message from the engine process" in end.reason
    assert "a 'review' message has no field 'when'" in end.reason
    assert decided(opened) == []
    assert app.view.pending_review is None


@pytest.mark.slow
@forks
@pytest.mark.usefixtures("process_driver")
@pytest.mark.subprocess
async def test_an_answer_about_an_earlier_attempt_decides_nothing(open_training):
    opened = open_training()
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        first = (await wait_for_review(pilot, app)).request
        assert app.view.pending_review is not None and app.view.pending_review.key == At(0, 0, 1, 1)
        await pilot.press("r")
        assert isinstance(app.screen, RerunNoteScreen)
        await pilot.press(*"fewer notes", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.request.attempt == 2)
        stale = At(first.epoch, first.step, first.group, first.attempt)
        # The app's coordinator: the review that waits is attempt 2's, so attempt 1's answer is refused.
        assert app.reviews.asking is not None and app.reviews.asking.key == At(0, 0, 1, 2)
        assert app.reviews.answer(stale, Decision("rollback", "human")) is False
        assert isinstance(app.screen, ReviewScreen) and app.reviews.asking is not None
        # The child's reviewer: the same stale answer over the wire, ahead of the person's.
        app.driver._send(Answer(stale, Decision("rollback", "human")))
        await pilot.press("a")
        await wait_for(pilot, lambda: not app.training)
    assert decided(opened) == [("rerun", 1), ("approve", 2)]
    assert finished(opened)[-1].status == "finished"
