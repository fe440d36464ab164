"""The app's output pane without a screen: bounded buffers, and what each event writes into them."""

from __future__ import annotations

from pathlib import Path

from skilltui.apps.train.output_feed import OutputFeed
from skilltui.apps.train.state import OutputBuffer
from skilltui.model import events as ev
from skilltui.model.view import RunView


def fed(run_dir: Path, *events: ev.Event) -> OutputFeed:
    """The output of `events`, folded into a view first as the driver does."""
    view = RunView.of("r", run_dir, ["a", "b", "c"])
    feed = OutputFeed(view)
    for event in events:
        view.apply(event)
        feed.feed(event)
    return feed


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


def test_group_output_goes_to_every_work_of_the_group(tmp_path: Path):
    feed = fed(
        tmp_path,
        ev.StepStarted(epoch=0, step=0, first=1, last=2, works=["a", "b", "c"], groups=[["a", "b"], ["c"]]),
        ev.Delta(role="backward", text="editing notes", group=1),
    )
    assert "editing notes" in feed.buffer("a").text()
    assert "editing notes" in feed.buffer("b").text()
    assert "editing notes" not in feed.buffer("c").text()
    assert feed.grown == {"a", "b"}


def test_tool_paths_are_shown_relative_to_the_run_and_the_pool(tmp_path: Path):
    feed = fed(
        tmp_path,
        ev.ToolUsed(role="forward", tool="view", path=str(tmp_path / "stories" / "a.md"), work="a"),
        ev.ToolUsed(role="forward", tool="view", path=str(tmp_path / "memory" / "scene" / "x.md"), work="a"),
    )
    assert "▸ view stories/a.md" in feed.buffer("a").text()
    assert "▸ view scene/x.md" in feed.buffer("a").text()
    assert str(tmp_path) not in feed.buffer("a").text()


def test_stage_lines_loss_and_a_skipped_micro_step_are_written_to_the_works_they_concern(tmp_path: Path):
    feed = fed(
        tmp_path,
        ev.StepStarted(epoch=0, step=1, first=3, last=4, works=["a"], groups=[["a"]]),
        ev.Stage(stage="forward", status="started", epoch=0, step=1, work="a"),
        ev.Loss(epoch=0, step=1, work="a", loss=0.4, scores={"scenes": 0.6}, report="r.md"),
        ev.Stage(stage="forward", status="failed", epoch=0, step=1, work="b", error="boom"),
        ev.MicroStepSkipped(epoch=0, step=1, group=1, attempts=3, before="b", reason="no commit", label="e0 s1 m1"),
    )
    assert "── forward · epoch 0 step 1 · episodes 3-4 ──" in feed.buffer("a").text()
    assert "◆ loss 0.400 (scenes 0.60)" in feed.buffer("a").text()
    assert "⊘ e0 s1 m1: skipped after 3 failed attempts" in feed.buffer("a").text()
    assert "✗ forward failed: boom" in feed.buffer("b").text()
