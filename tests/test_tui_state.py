"""The app's state, folded from events without a screen: bounded output, replay, marks."""

from __future__ import annotations

from pathlib import Path

from skilltui.engine import events as ev
from skilltui.tui.state import Mark, OutputBuffer, RunState


def fold(state: RunState, *events: ev.Event, replay: bool = False) -> None:
    for event in events:
        state.apply(event.to_dict(), replay=replay)


def test_output_buffer_keeps_only_its_last_characters_however_much_streams():
    buffer = OutputBuffer(limit=1000)
    for n in range(10_000):
        buffer.write(f"{n:05d}|")
    assert len(buffer.text()) == 1000
    assert buffer.text().endswith("09999|")
    assert buffer.total == 60_000


def test_output_buffer_hands_a_reader_just_the_new_text_or_tells_it_to_reload():
    buffer = OutputBuffer(limit=100)
    buffer.write("hello ")
    seen = buffer.total
    buffer.write("world")
    assert buffer.since(seen) == "world"
    assert buffer.since(buffer.total) == ""
    buffer.write("x" * 500)
    assert buffer.since(seen) is None  # the reader fell behind what the buffer keeps


def test_line_starts_on_a_fresh_line_after_unfinished_agent_text():
    buffer = OutputBuffer()
    buffer.write("half a sentence")
    buffer.line("── loss ──")
    assert buffer.text() == "half a sentence\n── loss ──\n"


def test_stages_move_the_works_rows_through_a_step(tmp_path: Path):
    state = RunState("r", tmp_path, ["a", "b"])
    fold(
        state,
        ev.RunStarted(run_id="r", run_dir=str(tmp_path), works=["a", "b"], config={}, resumed=False),
        ev.StepStarted(epoch=0, step=0, first=1, last=2, works=["a"], groups=[["a"]]),
        ev.Stage(stage="forward", status="started", epoch=0, step=0, work="a"),
        ev.EpisodeWritten(epoch=0, step=0, work="a", episode=1, path="x"),
    )
    assert (state.rows["a"].stage, state.rows["a"].episodes, state.rows["a"].needed) == ("forward", 1, 2)
    assert state.rows["b"].stage == "sits out"
    fold(
        state,
        ev.Stage(stage="loss", status="finished", epoch=0, step=0, work="a"),
        ev.Loss(epoch=0, step=0, work="a", loss=0.4, scores={"scenes": 0.6}, report="r.md"),
    )
    assert (state.rows["a"].stage, state.rows["a"].loss) == ("done", 0.4)
    fold(state, ev.Stage(stage="forward", status="failed", epoch=0, step=0, work="b", error="boom"))
    assert state.rows["b"].stage == "failed"
    assert "boom" in state.notices[-1]


def test_group_output_goes_to_every_work_of_the_group(tmp_path: Path):
    state = RunState("r", tmp_path, ["a", "b", "c"])
    fold(
        state,
        ev.StepStarted(epoch=0, step=0, first=1, last=2, works=["a", "b", "c"], groups=[["a", "b"], ["c"]]),
        ev.Delta(role="backward", text="editing notes", group=1),
    )
    assert "editing notes" in state.outputs["a"].text()
    assert "editing notes" in state.outputs["b"].text()
    assert "editing notes" not in state.outputs["c"].text()


def test_tool_paths_are_shown_relative_to_the_run_and_the_pool(tmp_path: Path):
    state = RunState("r", tmp_path, ["a"])
    fold(
        state,
        ev.ToolUsed(role="forward", tool="view", path=str(tmp_path / "stories" / "a.md"), ok=True, work="a"),
        ev.ToolUsed(role="forward", tool="view", path=str(tmp_path / "memory" / "scene" / "x.md"), ok=True, work="a"),
    )
    assert "▸ view stories/a.md" in state.outputs["a"].text()
    assert "▸ view scene/x.md" in state.outputs["a"].text()
    assert str(tmp_path) not in state.outputs["a"].text()


def test_replaying_an_earlier_session_restores_the_curve_and_decisions_but_not_its_stages(tmp_path: Path):
    state = RunState("r", tmp_path, ["a"])
    fold(
        state,
        ev.RunStarted(run_id="r", run_dir=str(tmp_path), works=["a"], config={}, resumed=False),
        ev.StepStarted(epoch=0, step=0, first=1, last=2, works=["a"], groups=[["a"]]),
        ev.Stage(stage="forward", status="started", epoch=0, step=0, work="a"),
        ev.Loss(epoch=0, step=0, work="a", loss=0.5, scores={}, report="r.md"),
        ev.Call(role="forward", backend="offline", model=None, work="a", input_tokens=10, output_tokens=5),
        ev.DecisionMade(decision="approve", by="human", epoch=0, step=0, group=1, attempt=1, before="b", after="c"),
        ev.StepFinished(epoch=0, step=0, mean_loss=0.5, failed=[]),
        ev.RunFinished(status="stopped"),
        replay=True,
    )
    assert state.losses["a"] == {(0, 0): 0.5}
    assert state.means == {(0, 0): 0.5}
    assert state.marks == {"c": Mark("approve", "human")}
    assert state.tokens == 15
    assert state.rows["a"].stage == "waiting"
    assert state.status == "starting"
    assert state.outputs["a"].text() == ""


def test_a_review_request_and_its_decision_move_the_status(tmp_path: Path):
    state = RunState("r", tmp_path, ["a"])
    fold(state, ev.RunStarted(run_id="r", run_dir=str(tmp_path), works=["a"], config={}, resumed=False))
    fold(
        state,
        ev.ReviewRequested(epoch=0, step=0, group=1, attempt=1, label="e0 s0 micro 1/1", before="b", after="c"),
    )
    assert state.status == "review"
    fold(
        state,
        ev.DecisionMade(decision="rollback", by="human", epoch=0, step=0, group=1, attempt=1, before="b", after="c"),
    )
    assert state.status == "running"
    assert state.marks["c"] == Mark("rollback", "human")


def test_take_dirty_reports_each_change_once(tmp_path: Path):
    state = RunState("r", tmp_path, ["a"])
    fold(state, ev.PoolChanged(head="c", reason="commit"))
    dirty, _ = state.take_dirty()
    assert {"pool", "commits"} <= dirty
    assert state.take_dirty() == (set(), set())


def test_attribution_reaches_the_pool_pane_and_a_skipped_micro_step_is_shown(tmp_path: Path):
    state = RunState("r", tmp_path, ["a"])
    stats = {"scene/x.md": {"passes": 2, "with": 0.3, "without": 0.5, "with_n": 4, "without_n": 2}}
    fold(state, ev.Attribution(epoch=0, step=0, notes=stats), replay=True)  # a resumed run gets it back too
    assert state.attribution == stats and "pool" in state.take_dirty()[0]
    fold(
        state,
        ev.StepStarted(epoch=0, step=1, first=3, last=4, works=["a"], groups=[["a"]]),
        ev.MicroStepSkipped(epoch=0, step=1, group=1, attempts=3, before="b", reason="no commit", label="e0 s1 m1"),
    )
    assert "e0 s1 m1: skipped after 3 failed attempt(s)" in state.notices[-1]
    assert "⊘ e0 s1 m1: skipped" in state.outputs["a"].text()
