"""The run model on a run whose right answers are known: means with their counts, progress, ETA, summary, parse."""

from __future__ import annotations

import datetime as dt
import gc
import io
import json
import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from skilltui.drivers.console import ConsoleSink, heartbeat_line
from skilltui.model import events as ev
from skilltui.model.figures import change, eta, run_progress, step_mean, step_means, step_progress, typical
from skilltui.model.parse import EventShapeError, parse_event, read_run
from skilltui.model.summary import kept_updates, summarise
from skilltui.model.view import Mark, RunView

T0 = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


def at(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def stage(name: str, status: str, t: float, *, work=None, group=None, seconds=None, step=0, error=None) -> ev.Stage:
    return ev.Stage(
        stage=name, status=status, epoch=0, step=step, work=work, group=group, seconds=seconds, error=error, time=at(t)
    )


def first_step() -> list[ev.Event]:
    """Step 0 of a three-work run (2 steps planned, 2 workers): a and b score, c's forward fails."""
    return [
        ev.RunStarted(
            run_id="r",
            run_dir="/runs/r",
            works=["a", "b", "c"],
            config={"epochs": 1},
            resumed=False,
            steps_per_epoch=2,
            workers=2,
            time=at(0),
        ),
        ev.StepStarted(epoch=0, step=0, first=1, last=2, works=["a", "b", "c"], groups=[["a", "b"], ["c"]], time=at(0)),
        stage("forward", "started", 0, work="a"),
        stage("forward", "started", 0, work="b"),
        stage("forward", "started", 0, work="c"),
        stage("forward", "failed", 3, work="c", error="the writer wrote nothing"),
        stage("forward", "finished", 10, work="a", seconds=10),
        stage("forward", "finished", 10, work="b", seconds=10),
        stage("loss", "started", 10, work="a"),
        stage("loss", "started", 10, work="b"),
        stage("loss", "finished", 12, work="a", seconds=2),
        ev.Loss(epoch=0, step=0, work="a", loss=0.6, scores={}, report="a0.md", time=at(12)),
    ]


def view_of(events: list[ev.Event]) -> RunView:
    return RunView.of("r", Path("/runs/r"), ["a", "b", "c"]).fold(events)


def test_the_current_steps_mean_covers_the_works_scored_so_far_and_says_so():
    view = view_of(first_step())
    mean = step_mean(view.steps[(0, 0)])
    assert (mean.value, mean.works, mean.scheduled) == (0.6, 1, 3)
    assert mean.text() == "0.600 (1 of 3 works)"
    view.apply(stage("loss", "finished", 12, work="b", seconds=2))
    view.apply(ev.Loss(epoch=0, step=0, work="b", loss=0.4, scores={}, report="b0.md", time=at(12)))
    assert step_means(view)[(0, 0)].text() == "0.500 (2 of 3 works)"
    assert view.works["c"].stage == "failed" and view.works["a"].stage == "done"


def test_progress_counts_the_stages_of_the_step_and_the_steps_of_the_run():
    view = view_of(first_step())
    # 3 works x (forward, loss) + reduce and backward of group 1 (two works) + backward of group 2.
    # Done: a's two, b's forward, and c's two (a failed forward leaves c nothing to run).
    assert step_progress(view) == (5, 9)
    assert run_progress(view) == (0, 2)


def test_the_eta_waits_for_evidence_then_sums_what_is_left_from_this_runs_durations():
    events = first_step() + [
        stage("loss", "finished", 12, work="b", seconds=2),
        ev.Loss(epoch=0, step=0, work="b", loss=0.4, scores={}, report="b0.md", time=at(12)),
        stage("reduce", "started", 12, group=1),
    ]
    view = view_of(events)
    assert eta(view, T0 + dt.timedelta(seconds=13)).step is None  # no reduce or backward measured yet
    view.fold(
        [
            stage("reduce", "finished", 16, group=1, seconds=4),
            stage("backward", "started", 16, group=1),
            stage("backward", "finished", 22, group=1, seconds=6),
            first_commit(at(22)),
            ev.ReviewRequested(epoch=0, step=0, group=1, attempt=1, label="m1", before="b0", after="c1", time=at(22)),
        ]
    )
    assert view.status == "review" and view.pending_review is not None
    view.apply(
        ev.DecisionMade(
            decision="approve", by="human", epoch=0, step=0, group=1, attempt=1, before="b0", after="c1", time=at(30)
        )
    )
    assert view.status == "running" and view.pending_review is None and view.marks["c1"] == Mark("approve", "human")
    assert step_progress(view) == (8, 9)
    left = eta(view, T0 + dt.timedelta(seconds=30))
    # This step: group 2's backward (6 s). A whole step: 3 works x (10 + 2) s over 2 workers,
    # then reduce 4 s and two backward passes of 6 s = 34 s; one step is left after this one.
    assert left.step == pytest.approx(6.0) and left.run == pytest.approx(40.0)


def first_commit(time: str) -> ev.MicroStep:
    """Group 1's micro-step m1 of step 0: it added scene/a.md, taking the pool from b0 to c1."""
    return ev.MicroStep(
        epoch=0,
        step=0,
        group=1,
        attempt=1,
        label="m1",
        before="b0",
        after="c1",
        subject="s",
        added=["scene/a.md"],
        changed=[],
        removed=[],
        lint_ok=True,
        patch="",
        time=time,
    )


def full_run() -> list[ev.Event]:
    return first_step() + [
        stage("loss", "finished", 12, work="b", seconds=2),
        ev.Loss(epoch=0, step=0, work="b", loss=0.4, scores={}, report="b0.md", time=at(12)),
        first_commit(at(20)),
        ev.DecisionMade(
            decision="approve", by="auto", epoch=0, step=0, group=1, attempt=1, before="b0", after="c1", time=at(20)
        ),
        ev.MicroStepSkipped(epoch=0, step=0, group=2, attempts=3, before="c1", reason="no commit", time=at(21)),
        ev.Call(
            role="forward",
            backend="offline",
            model=None,
            work="a",
            input_tokens=100,
            output_tokens=20,
            cost_usd=0.5,
            time=at(21),
        ),
        ev.StepFinished(epoch=0, step=0, mean_loss=0.5, failed=["c"], works_in_mean=2, time=at(22)),
        # Step 1: c sits out; a scores first, then b.
        ev.StepStarted(epoch=0, step=1, first=3, last=4, works=["a", "b"], groups=[["a", "b"]], time=at(23)),
        ev.Loss(epoch=0, step=1, work="a", loss=0.3, scores={}, report="a1.md", time=at(30)),
    ]


def test_a_step_where_a_work_sat_out_is_a_mean_over_those_that_took_part_and_says_how_many():
    view = view_of(full_run())
    assert view.works["c"].stage == "sits out"
    assert step_means(view)[(0, 1)].text() == "0.300 (1 of 2 works)"  # the current step, under way
    view.apply(ev.Loss(epoch=0, step=1, work="b", loss=0.2, scores={}, report="b1.md", time=at(31)))
    assert step_means(view)[(0, 1)].text() == "0.250 (2 works)"
    # What step 0 taught shows on the works both steps scored, not on a mean that lost a work.
    assert change(view, (0, 0), (0, 1)) == (pytest.approx(0.5), pytest.approx(0.25), 2)


def test_a_kept_micro_step_that_changed_nothing_is_no_update_in_the_summary():
    """An epoch's consolidation that found nothing commits an empty commit and is kept: no update to pay for."""
    view = view_of(full_run())
    empty = replace(first_commit(at(32)), step=1, group=0, label="consolidation", before="c1", after="c2")
    empty = replace(empty, added=[])
    view.fold(
        [
            empty,
            ev.DecisionMade(
                decision="approve", by="auto", epoch=0, step=1, group=0, attempt=1, before="c1", after="c2", time=at(33)
            ),
        ]
    )
    assert kept_updates(view) == (1, 1)
    lines = summarise(view).lines()
    assert "notes: 1 added, 0 changed, 0 removed over 1 kept micro-step (and 1 kept that changed nothing)" in lines
    assert "cost $0.5000 ($0.5000 per kept update)" in lines  # not $0.25: the empty one is no update


def test_the_summary_says_loss_first_to_last_notes_cost_and_what_to_run_next():
    view = view_of(full_run())
    view.fold(
        [
            ev.Loss(epoch=0, step=1, work="b", loss=0.2, scores={}, report="b1.md", time=at(31)),
            ev.StepFinished(epoch=0, step=1, mean_loss=0.25, failed=[], works_in_mean=2, time=at(40)),
            ev.RunFinished(status="finished", epochs_done=1, time=at(41)),
        ]
    )
    lines = summarise(view).lines()
    assert lines[0] == "run r finished"
    assert lines[1] == "train loss 0.500 (2 of 3 works) → 0.250 (2 works)"
    assert "notes: 1 added, 0 changed, 0 removed over 1 kept micro-step" in lines
    assert "cost $0.5000 ($0.5000 per kept update)" in lines
    assert lines[-1] == "next: skilltui review /runs/r   ·   skilltui export /runs/r --to DIR"
    assert view.tokens == 120 and not view.active and view.in_flight == {}


def test_the_summary_leads_with_the_loss_over_the_works_both_steps_scored():
    """Step 0 scored a and b, step 1 only a (b failed): 0.500 -> 0.300 would credit the notes with b's absence."""
    view = view_of(full_run())
    view.fold(
        [
            stage("forward", "failed", 31, work="b", step=1, error="the writer wrote nothing"),
            ev.StepFinished(epoch=0, step=1, mean_loss=0.3, failed=["b"], works_in_mean=1, time=at(40)),
            ev.RunFinished(status="finished", epochs_done=1, time=at(41)),
        ]
    )
    lines = summarise(view).lines()
    assert lines[1] == "train loss 0.600 → 0.300 over the 1 work both steps scored"
    assert lines[2] == "  every work each step scored: 0.500 (2 of 3 works) → 0.300 (1 of 2 works)"


def test_the_summary_of_a_run_quit_at_a_review_counts_the_step_whose_works_all_scored():
    view = view_of(full_run())
    # Step 1's works have both scored; its micro-step waits for review when the person quits.
    view.fold(
        [
            ev.Loss(epoch=0, step=1, work="b", loss=0.2, scores={}, report="b1.md", time=at(31)),
            ev.RunFinished(status="stopped", reason="quit", time=at(41)),
        ]
    )
    assert summarise(view).lines()[1] == "train loss 0.500 (2 of 3 works) → 0.250 (2 works)"


def test_the_summary_starts_validation_from_the_notes_before_any_update():
    view = view_of(full_run())
    held = {"work": "held", "scores": {}, "time": at(10)}
    view.fold(
        [
            ev.ValLoss(epoch=0, step=0, loss=0.555, point="before", group=1, **held),
            ev.ValLoss(epoch=0, step=0, loss=0.4, point="micro", group=1, attempt=1, **held),
            ev.ValLoss(epoch=0, step=1, loss=0.5, point="before", group=1, **held),  # a later one: not the start
            ev.ValLoss(epoch=0, step=0, loss=0.052, point="step", **held),
            ev.Loss(epoch=0, step=1, work="b", loss=0.2, scores={}, report="b1.md", time=at(31)),
            ev.ValLoss(epoch=0, step=1, loss=0.01, point="step", **held),
            ev.StepFinished(epoch=0, step=1, mean_loss=0.25, failed=[], works_in_mean=2, time=at(40)),
            ev.RunFinished(status="finished", epochs_done=1, time=at(41)),
        ]
    )
    lines = summarise(view).lines()
    assert "selection (validation) loss 0.555 (1 work) before any update → 0.010 (1 work)" in lines, lines


def test_a_resumed_session_starts_its_rows_afresh_and_keeps_the_numbers_and_decisions():
    view = view_of(full_run())
    view.apply(ev.RunFinished(status="stopped", reason="quit", time=at(50)))
    assert view.status == "stopped"
    view.apply(ev.RunStarted(run_id="r", run_dir="/runs/r", works=["a", "b", "c"], config={}, resumed=True))
    assert view.status == "running" and view.works["a"].stage == "waiting"
    assert view.marks == {"c1": Mark("approve", "auto")} and view.steps[(0, 0)].losses == {"a": 0.6, "b": 0.4}
    assert view.stage_seconds == {}  # another session's durations do not predict this one's
    # Step 1 again: a's stages were done in the earlier session, so they are skipped, and
    # its row still counts the step's episodes as written (not 0 of 2).
    view.apply(ev.StepStarted(epoch=0, step=1, first=3, last=4, works=["a", "b"], groups=[["a", "b"]], time=at(51)))
    view.fold([stage("forward", "skipped", 52, work="a", step=1), stage("loss", "skipped", 52, work="a", step=1)])
    assert (view.works["a"].stage, view.works["a"].episodes, view.works["a"].needed) == ("done", 2, 2)
    assert view.works["b"].episodes == 0


def test_parse_gives_back_every_event_and_refuses_unknown_shapes_clearly(tmp_path):
    for event in full_run():
        assert parse_event(json.loads(json.dumps(event.to_dict()))) == event
    with pytest.raises(EventShapeError, match="unknown event kind 'vibes'"):
        parse_event({"kind": "vibes"})
    with pytest.raises(EventShapeError, match="a 'loss' event has no field 'lost'"):
        parse_event({**ev.Loss(epoch=0, step=0, work="a", loss=0.1, scores={}, report="x").to_dict(), "lost": 1})
    with pytest.raises(EventShapeError, match="a 'stage' event needs 'status'"):
        parse_event({"kind": "stage", "stage": "forward", "epoch": 0, "step": 0})
    with pytest.raises(EventShapeError, match="'loss' cannot be 'high'"):
        parse_event({"kind": "loss", "epoch": 0, "step": 0, "work": "a", "loss": "high", "scores": {}, "report": ""})
    # An old record (no counts, no plan, no time) still reads; a stranger is counted out, and a last
    # line without its newline (still being written, or torn) is left for the next read, not counted.
    path = tmp_path / "events.jsonl"
    old = {"kind": "step_finished", "epoch": 0, "step": 0, "mean_loss": 0.4, "failed": []}
    path.write_text(json.dumps(old) + "\n" + '{"kind": "nope"}\n' + '{"kind": "stage", "sta')
    record = read_run(path)
    assert record.events == [ev.StepFinished(epoch=0, step=0, mean_loss=0.4, failed=[], time=record.events[0].time)]
    assert record.unreadable == 1 and "line 2: unknown event kind 'nope'" in record.problem


def test_an_old_tool_line_with_its_retired_ok_still_reads_and_a_field_nobody_wrote_is_refused():
    # Written before `ok` was retired: it was always `error is None`, and now is just that.
    refused = {"kind": "tool", "time": "t", "role": "forward", "tool": "view", "path": "a.md", "work": "w"}
    old = parse_event({**refused, "ok": False, "error": "off-limits"})
    assert old == ev.ToolUsed(role="forward", tool="view", path="a.md", work="w", error="off-limits", time="t")
    assert not old.ok and parse_event({**refused, "ok": True, "error": None}).ok
    assert "ok" not in old.to_dict()
    with pytest.raises(EventShapeError, match="a 'tool' event has no field 'okay'"):
        parse_event({**refused, "okay": True})
    # Retiring is per kind: another kind with an `ok` is still refused.
    with pytest.raises(EventShapeError, match="a 'paused' event has no field 'ok'"):
        parse_event({**ev.Paused(paused=True).to_dict(), "ok": True})


def test_the_console_prints_a_start_line_per_stage_and_a_heartbeat_while_calls_run():
    out = io.StringIO()
    sink = ConsoleSink(Console(file=out, force_terminal=False, width=200), now=lambda: T0 + dt.timedelta(seconds=42))
    for event in first_step()[:5]:
        sink(event)
    sink.view.apply(
        ev.Call(role="forward", backend="offline", model=None, work="a", input_tokens=1000, output_tokens=234)
    )
    printed = out.getvalue()
    assert "[start] forward a (epoch 0 step 0)" in printed and "[start] forward c (epoch 0 step 0)" in printed
    beat = heartbeat_line(sink.view, T0 + dt.timedelta(seconds=42))
    assert beat.startswith("[working] forward a 42s 1,234 tok; forward b 42s 0 tok; forward c 42s 0 tok")
    assert "stages 0/9" in beat and "steps 0/2" in beat


def test_a_tail_folds_only_the_complete_lines_added_since_the_last_look(tmp_path):
    from skilltui.model.tail import EventTail

    path = tmp_path / "events.jsonl"
    lines = [json.dumps(event.to_dict()) + "\n" for event in first_step()]
    path.write_text("".join(lines[:2]))
    tail = EventTail(path)
    assert tail.poll().current == (0, 0) and tail.offset == path.stat().st_size
    with open(path, "a") as f:
        f.write("".join(lines[2:]) + lines[0][:10])  # the last line is still being written
    view = tail.poll()
    assert view.steps[(0, 0)].losses == {"a": 0.6} and view.works["c"].stage == "failed"
    assert tail.offset == path.stat().st_size - 10
    same = tail.poll()
    assert same is view and same.steps[(0, 0)].losses == {"a": 0.6}  # nothing new: nothing folded twice
    path.write_text(lines[0])  # cut back (a crash repaired): read again from the start
    assert tail.poll().steps == {}


def test_review_credits_a_micro_step_with_the_change_on_the_works_both_steps_scored():
    from skilltui.model.figures import loss_changes

    def loss(step: int, work: str, value: float) -> ev.Loss:
        return ev.Loss(epoch=0, step=step, work=work, loss=value, scores={}, report=f"{work}{step}.md")

    view = RunView().fold(
        [
            ev.StepStarted(epoch=0, step=0, first=1, last=2, works=["a", "b", "c"], groups=[["a", "b", "c"]]),
            loss(0, "a", 0.6),
            loss(0, "b", 0.6),
            loss(0, "c", 0.9),
            ev.StepFinished(epoch=0, step=0, mean_loss=0.7, failed=[], works_in_mean=3),
            # c has no episode 4: it sits out, and alone would make the mean drop from 0.7 to 0.5.
            ev.StepStarted(epoch=0, step=1, first=3, last=4, works=["a", "b"], groups=[["a", "b"]]),
            loss(1, "a", 0.5),
            loss(1, "b", 0.5),
        ]
    )
    assert loss_changes(view) == {}  # "after" waits for step 1 to finish
    view.apply(ev.StepFinished(epoch=0, step=1, mean_loss=0.5, failed=[], works_in_mean=2))
    assert loss_changes(view) == {(0, 0): (pytest.approx(0.6), pytest.approx(0.5))}


def a_whole_step(step: int, works: list[str], groups: list[list[str]]) -> list[ev.Event]:
    """One step of a long run as the engine records it: every work's stages and loss, every group's micro-step."""
    t = step * 100.0
    events: list[ev.Event] = [
        ev.StepStarted(epoch=0, step=step, first=step, last=step, works=works, groups=groups, time=at(t))
    ]
    for work in works:
        events += [
            stage("forward", "started", t, work=work, step=step),
            stage("forward", "finished", t + 10, work=work, seconds=10, step=step),
            stage("loss", "started", t + 10, work=work, step=step),
            stage("loss", "finished", t + 12, work=work, seconds=2, step=step),
            ev.Loss(epoch=0, step=step, work=work, loss=0.5, scores={}, report=f"/r/{step}/{work}.md", time=at(t + 12)),
        ]
    for number, _ in enumerate(groups, 1):
        before, after = f"{step:04d}{number:036d}", f"{step + 1:04d}{number:036d}"
        events += [
            stage("reduce", "started", t + 12, group=number, step=step),
            stage("reduce", "finished", t + 14, group=number, seconds=2, step=step),
            stage("backward", "started", t + 14, group=number, step=step),
            stage("backward", "finished", t + 20, group=number, seconds=6, step=step),
            replace(
                first_commit(at(t + 20)),
                step=step,
                group=number,
                before=before,
                after=after,
                patch=f"+ scene/{step}-{number}.md\n" * 100,  # a patch and a message as long as a model's
                message=f"Step {step}: what group {number} learned.\n" * 20,
            ),
            ev.DecisionMade(
                decision="approve",
                by="auto",
                epoch=0,
                step=step,
                group=number,
                attempt=1,
                before=before,
                after=after,
                time=at(t + 20),
            ),
        ]
    finished = ev.StepFinished(epoch=0, step=step, mean_loss=0.5, failed=[], works_in_mean=len(works), time=at(t + 21))
    return [*events, finished]


def test_a_long_run_keeps_what_each_step_shows_and_not_every_stage_it_ran():
    """The app, the trainer's process and the feedback each hold a view for the length of a run."""
    works = [f"work-{n:02d}" for n in range(16)]
    groups = [works[n : n + 4] for n in range(0, 16, 4)]
    view = view_of(first_step()[:1])
    for step in range(10):
        view.fold(a_whole_step(step, works, groups))
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for step in range(10, 60):
            view.fold(a_whole_step(step, works, groups))
        gc.collect()
        per_step = (tracemalloc.get_traced_memory()[0] - before) / 50
    finally:
        tracemalloc.stop()
    # 8.0 kB: each step's scheduled works, losses, report paths and micro-steps. It was 12.4 kB
    # when a finished step kept its (stage, who) pairs and every stage's duration, and 16.8 kB
    # when its micro-steps kept their patches and messages.
    assert per_step < 1024 * 10, f"{per_step / 1024:.1f} kB a step"
    assert step_progress(view) == (16 * 2 + 4 * 2, 16 * 2 + 4 * 2)  # the last step's progress stays whole
    assert eta(view, T0).step == 0.0  # the step is done; the ETA's means still count every stage run
    assert (typical(view, "forward"), typical(view, "backward")) == (10.0, 6.0)
    assert view.micro_steps[(0, 59, 4, 1)].added == ["scene/a.md"]  # what the pool panes and the summary read
