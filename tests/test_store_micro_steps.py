"""`store.micro_steps`, the one reader of a run's micro-steps, on runs trained offline.

Each record joins three sources: the attempt files, the event log and the trailers of the
decided commit. These tests hold each against what the run itself wrote: the files read
directly, the events parsed, the pool's git log.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from skilltui.model import events as ev
from skilltui.model.at import At
from skilltui.model.parse import read_run
from skilltui.store.micro_records import micro_step_done
from skilltui.store.micro_steps import (
    Told,
    commit_trailers,
    kept_updates,
    micro_step_records,
    read_micro_step,
    step_end,
    step_records,
)
from skilltui.store.run_folder import Run
from tests.support.works import train_works


def _facts(m) -> tuple:
    return (m.epoch, m.step, m.group, m.attempt, m.label, m.decision, m.by, m.subject, m.message, m.after)


def test_records_of_a_trained_run_join_its_files_events_and_trailers(copied_run):
    run = copied_run("alpha", "beta")
    events = read_run(run.events_path).events
    told = [e for e in events if isinstance(e, ev.MicroStep)]
    decisions = [e for e in events if isinstance(e, ev.DecisionMade)]
    records = micro_step_records(run)

    # One record per micro-step folder, in the order the log told them: two steps, one group each.
    folders = sorted(run.root.glob("epoch*/step*/backward/g*"))
    assert [r.folder for r in records] == folders and len(records) == 2
    assert [(r.epoch, r.step, r.group) for r in records] == [(e.epoch, e.step, e.group) for e in told]
    for record, event, decision in zip(records, told, decisions, strict=True):
        batch = json.loads((record.folder / "batch.json").read_text(encoding="utf-8"))
        assert record.works == tuple(b["work"] for b in batch) and set(record.works) == {"alpha", "beta"}
        assert record.label == event.label
        (attempt,) = record.attempts
        checked = json.loads((attempt.attempt_dir / "checked.json").read_text(encoding="utf-8"))
        review = json.loads((attempt.attempt_dir / "review.json").read_text(encoding="utf-8"))
        # The files: what the attempt committed and how it was decided; its commit is the one with trailers.
        assert (attempt.subject, attempt.message) == (checked["subject"], checked.get("message", ""))
        assert attempt.added == tuple(checked["added"]) and attempt.works == list(record.works)
        assert (attempt.decision, attempt.by, attempt.after) == ("approve", "auto", review["commit"])
        assert attempt.after != checked["after"]  # the agent's commit, stamped again with its trailers
        # The event log says the same of it, and its decision names the same commit.
        assert [_facts(m) for m in record.told] == [_facts(attempt)]
        assert [d.event for d in record.decided] == [decision] and decision.after == attempt.after
        # The outcome (commit.txt): done, one attempt, the same commit.
        assert record.outcome is not None
        assert (record.outcome.decision, record.outcome.attempt, record.outcome.after) == ("approve", 1, attempt.after)
        # The trailers on that commit say which micro-step made it, on what evidence, and how it was decided.
        said = commit_trailers(run, attempt.after)
        assert said.get("Step") == f"e{record.epoch} s{record.step} g{record.group} a1"
        assert said.get("Decision") == "kept by auto"
        assert all(work in said.get("Evidence") for work in record.works)
        assert record.failures == () and record.rerun_notes == () and record.rejected == []
    # Every commit training made in the pool is the commit of one record.
    trained = [c.sha for c in run.pool.log("HEAD") if c.subject.startswith("train ")]
    assert sorted(trained) == sorted(a.after for r in records for a in r.attempts)
    # The backward prompt's per-step reading is the same files, without the log's labels.
    for record in records:
        (alone,) = step_records(run, (record.epoch, record.step))
        assert [a.after for a in alone.attempts] == [a.after for a in record.attempts]
        assert alone.label == f"epoch {record.epoch} step {record.step} micro {record.group}"


def test_candidates_not_chosen_are_dropped_in_the_files_and_untold_by_the_log(make_work, tmp_path):
    works = [make_work("alpha"), make_work("beta")]
    val = make_work("held", seed=9)
    extra = ["--candidates", "2", "--gate", "--val-work", str(val), "--group-size", "2"]
    assert train_works(tmp_path / "runs", works, *extra) == 0
    run = Run(tmp_path / "runs" / "r")
    for record in micro_step_records(run):
        assert sorted(a.attempt for a in record.attempts) == [1, 2]
        chosen = {d.event.attempt for d in record.decided}
        assert len(chosen) == 1
        by_file = {a.attempt: a.decision for a in record.attempts}
        by_log = {m.attempt: m.decision for m in record.told}
        # The files record each candidate's fate; the log names only the one the reviewer chose.
        dropped = [n for n in (1, 2) if n not in chosen]
        assert [by_file[n] for n in dropped] == ["dropped"] and [by_log[n] for n in dropped] == [None]
        assert [a.attempt for a in record.rejected] == dropped
        # The gate measured both candidates; the decision carries the chosen one's verdict.
        assert sorted(record.verdicts) == [1, 2]
        (decided,) = record.decided
        assert decided.gate is record.verdicts[decided.event.attempt]


def test_damaged_records_leave_out_what_they_would_have_said(copied_run):
    run = copied_run("alpha", "beta")
    first, second = micro_step_records(run)
    (attempt,) = second.attempts
    (attempt.attempt_dir / "review.json").write_text("{not json", encoding="utf-8")
    (second.folder / "commit.txt").unlink()
    (second.folder / "batch.json").write_text("[1, 2]", encoding="utf-8")
    # A log that lost the second micro-step's lines: the folder still holds it, after what the log told.
    lines = run.events_path.read_text(encoding="utf-8").splitlines(keepends=True)
    keep = [line for line in lines if f'"step": {second.step}' not in line or '"kind": "micro_step"' not in line]
    run.events_path.write_text("".join(keep), encoding="utf-8")

    again = micro_step_records(run)
    assert [(r.epoch, r.step, r.group) for r in again] == [(r.epoch, r.step, r.group) for r in (first, second)]
    damaged = again[1]
    assert damaged.told == () and damaged.outcome is None and damaged.works == ()
    # Its checked attempt still stands, undecided as far as the records can tell.
    (still,) = damaged.attempts
    checked = json.loads((attempt.attempt_dir / "checked.json").read_text(encoding="utf-8"))
    assert (still.after, still.decision, still.by) == (checked["after"], None, None)
    # The micro-step beside it reads as before: read alone, only the log's label is not at hand.
    alone = read_micro_step(run, (first.epoch, first.step, first.group))
    assert alone.outcome == replace(first.outcome, label=f"epoch {first.epoch} step {first.step} micro {first.group}")


def test_what_the_engine_asks_of_the_outcomes_is_what_commit_txt_says(copied_run):
    # Consolidation asks which micro-steps of an epoch kept an update, validation where a step
    # ended, a resumed micro-step whether it is decided: each answered from commit.txt alone.
    run = copied_run("alpha", "beta")
    first, second = micro_step_records(run)
    outcomes = [json.loads((r.folder / "commit.txt").read_text(encoding="utf-8")) for r in (first, second)]
    assert all(o["decision"] == "approve" and o["after"] != o["before"] for o in outcomes)
    keys = [(r.epoch, r.step, r.group) for r in (first, second)]
    assert kept_updates(run, 0) == [(key, o["after"]) for key, o in zip(keys, outcomes, strict=True)]
    assert kept_updates(run, 1) == []
    assert [step_end(run, key[:2]) for key in keys] == [o["after"] for o in outcomes]
    assert all(micro_step_done(run, At(*key)) for key in keys)
    # A micro-step rolled back keeps no update; a damaged record keeps none either, but where the
    # step ended cannot be guessed from it: validation must not measure another tree.
    (first.folder / "commit.txt").write_text(json.dumps({**outcomes[0], "decision": "rollback"}), encoding="utf-8")
    (second.folder / "commit.txt").write_text("{not json", encoding="utf-8")
    assert kept_updates(run, 0) == []
    assert step_end(run, keys[0][:2]) == outcomes[0]["after"]
    with pytest.raises(ValueError):
        step_end(run, keys[1][:2])
    (second.folder / "commit.txt").unlink()
    assert not micro_step_done(run, At(*keys[1])) and step_end(run, keys[1][:2]) is None


def test_a_run_folder_with_no_micro_step_has_no_records(tmp_path: Path):
    run = Run(tmp_path / "empty")
    run.root.mkdir()
    run.events_path.write_text("", encoding="utf-8")
    assert micro_step_records(run) == []
    assert step_records(run, (0, 0)) == []
    assert kept_updates(run, 0) == [] and step_end(run, (0, 0)) is None


def test_an_attempts_cost_is_its_transcripts_calls_and_its_groups_calls_kept_without_one():
    told = Told()

    def call(cost: float | None, transcript: str | None, role: str = "backward", group: int | None = 1) -> ev.Call:
        return ev.Call(
            role=role, backend="x", model=None, epoch=0, step=2, group=group, cost_usd=cost, transcript=transcript
        )

    for event in (
        call(0.25, "/r/epoch0/step2/backward/g1/attempt1/transcript.json"),
        call(0.5, "/r/epoch0/step2/backward/g1/attempt1/transcript.reminder.json"),
        call(None, "/r/epoch0/step2/backward/g1/attempt2/transcript.json"),
        call(0.125, None),  # the group's, with no transcript: every attempt of the group carries it
        call(9.0, "/r/epoch0/step2/works/a/attempt1/transcript.json", role="forward"),  # not an update's
        call(9.0, "/r/epoch0/step2/backward/g3/attempt1/transcript.json", group=None),  # no micro-step's
    ):
        told.apply(event)
    assert told.cost((0, 2, 1, 1)) == 0.875
    assert told.cost((0, 2, 1, 2)) is None  # one of its calls had no price: its cost is unknown, not less
    assert told.cost((0, 2, 3, 1)) == 0.0
