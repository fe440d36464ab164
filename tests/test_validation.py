"""Validation works: held out, measured on the same episodes after every step, never trained on."""

from __future__ import annotations

import json

import pytest

from skilltui import cli
from skilltui.agents.tools import ToolError
from tests.support.cli import assert_refused, run_cli, snapshot
from tests.support.runs import unfinish
from tests.support.scripted import ScriptedBackend, seed_pool
from tests.support.validation import SECRET, events, held_out_work, train_with


def test_validation_measures_the_same_episodes_after_every_step(tmp_path, make_work):
    works = [make_work("kestrel", 6), make_work("lantern", 6)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    assert (
        cli.main(
            ["train", "--auto", "--runs-dir", str(runs), "--run-id", "r", "--steps", "3", "--val-work", str(val)]
            + [a for w in works for a in ("--work", str(w))]
        )
        == 0
    )
    vals = events(runs, "val_loss")
    assert [(e["epoch"], e["step"], e["point"], e["work"]) for e in vals] == [
        (0, 0, "step", "orrery"),
        (0, 1, "step", "orrery"),
        (0, 2, "step", "orrery"),
    ]
    # Always episodes 1-2 (--episodes-per-step), whatever episodes the step trained on.
    for folder in (runs / "r" / "val").glob("pool-*/works/orrery/scripts"):
        assert sorted(p.name for p in folder.iterdir()) == ["01.fountain", "02.fountain"]
    finished = events(runs, "step_finished")
    assert [f["val_mean_loss"] for f in finished] == [e["loss"] for e in vals]
    assert all(f["works_in_mean"] == 2 and f["val_works_in_mean"] == 1 for f in finished)
    # The offline writer learns moves that transfer: the held-out work gets better too.
    assert vals[-1]["loss"] < vals[0]["loss"] - 0.1, vals
    # Never trained on: no loss event, no backward batch, no training folder names it.
    assert all(e["work"] != "orrery" for e in events(runs, "loss"))
    for batch in (runs / "r").glob("epoch*/step*/backward/g*/batch.json"):
        assert "orrery" not in batch.read_text()
    assert not list((runs / "r").glob("epoch*/**/orrery*"))


def test_no_backward_validates_once_and_stays_level_and_resume_skips_it(tmp_path, make_work):
    works = [make_work("quarry", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    backend = ScriptedBackend()
    assert train_with(backend, runs, works, [val], "--steps", "2", "--no-backward") == 0
    vals = events(runs, "val_loss")
    assert len(vals) == 2 and vals[0]["loss"] == vals[1]["loss"]
    assert [v["reused"] for v in vals] == [False, True]  # the same notes are not paid for twice
    val_calls = [c for c in backend.calls if "orrery" in json.dumps(c.request.context, default=str)]
    assert len(val_calls) == 2  # one forward, one loss
    count = len(events(runs))
    again = ScriptedBackend()
    assert train_with(again, runs, works, [val], "--steps", "2", "--no-backward") == 0
    assert again.calls == [] and len(events(runs)) == count  # finished: nothing to do
    unfinish(runs)  # as if it had stopped at its very end: resume skips every point
    count = len(events(runs))
    assert train_with(again, runs, works, [val], "--steps", "2", "--no-backward") == 0
    assert again.calls == []
    second = events(runs)[count:]
    assert not [e for e in second if e["kind"] in ("val_loss", "call")]
    assert {e["status"] for e in second if e["kind"] == "stage" and e["stage"] == "validate"} == {"skipped"}


def test_resuming_a_trained_run_keeps_each_steps_validation_as_it_was_measured(tmp_path, make_work):
    works = [make_work("quarry", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    script = [("remove", "dialogue/dialogue-blocks.md"), ("add", "scene")]
    extra = ("--steps", "2", "--init-pool", str(seed_pool(tmp_path / "donor", "dialogue")))
    assert train_with(ScriptedBackend(script=list(script)), runs, works, [val], *extra) == 0
    measured = {(e["step"], e["val_mean_loss"]) for e in events(runs, "step_finished")}
    assert len({loss for _, loss in measured}) == 2  # the notes moved, so did validation
    unfinish(runs)  # a session that died before its end, so the next one resumes it
    count = len(events(runs))
    again = ScriptedBackend()
    assert train_with(again, runs, works, [val], *extra) == 0
    # Step 0 was measured with the notes step 0 left, not with the ones the run ended on.
    assert again.calls == [] and not [e for e in events(runs)[count:] if e["kind"] in ("val_loss", "call")]
    assert {(e["step"], e["val_mean_loss"]) for e in events(runs, "step_finished")[2:]} == measured


def test_validation_cost_is_counted_and_a_failing_validation_work_costs_only_itself(tmp_path, make_work):
    works = [make_work("harbor", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    backend = ScriptedBackend(cost_per_call=0.01)
    assert train_with(backend, runs, works, [val], "--steps", "2") == 0
    calls = events(runs, "call")
    val_cost = sum(c["cost_usd"] for c in calls if c.get("work") == "orrery")
    assert val_cost == pytest.approx(0.04)  # two steps, two different pools: forward + loss each
    finished = events(runs, "run_finished")[-1]
    assert finished["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls))


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "make_val, words",
    [
        (lambda tmp, mk: mk("short", 1), ["--val-work", "no episode 2", "--episodes-per-step"]),
        (lambda tmp, mk: tmp / "works" / "train", ["--val-work", "is also a --work"]),
        (lambda tmp, mk: mk("nostory", 3, story=False), ["story.md is missing", "diffuse"]),
    ],
)
def test_a_bad_validation_work_is_refused_before_anything_is_written(tmp_path, make_work, make_val, words):
    train = make_work("train", 4)
    val = make_val(tmp_path, make_work)
    runs = tmp_path / "runs"
    result = run_cli(
        "train", "--auto", "--work", str(train), "--val-work", str(val), "--runs-dir", str(runs), cwd=tmp_path
    )
    assert_refused(result, *words)
    assert snapshot(runs) == []


@pytest.mark.subprocess
def test_gate_without_validation_and_a_negative_tolerance_are_refused(tmp_path, make_work):
    train = make_work("train", 4)
    runs = tmp_path / "runs"
    result = run_cli("train", "--auto", "--work", str(train), "--gate", "--runs-dir", str(runs), cwd=tmp_path)
    assert_refused(result, "--gate", "--val-work")
    val = make_work("held", 4)
    result = run_cli(
        "train",
        "--auto",
        "--work",
        str(train),
        "--val-work",
        str(val),
        "--gate",
        "--gate-tolerance",
        "-1",
        "--runs-dir",
        str(runs),
        cwd=tmp_path,
    )
    assert_refused(result, "--gate-tolerance")
    result = run_cli(
        "train",
        "--auto",
        "--work",
        str(train),
        "--val-work",
        str(val),
        "--gate",
        "--no-backward",
        "--runs-dir",
        str(runs),
        cwd=tmp_path,
    )
    assert_refused(result, "--gate", "--no-backward")
    assert snapshot(runs) == []


def test_no_validation_material_reaches_a_backward_or_reduce_prompt_or_sandbox(tmp_path, make_work):
    works = [make_work("birch", 4), make_work("cedar", 4), make_work("maple", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    backend = ScriptedBackend()
    # --gate: validation runs in the middle of every micro-step, the closest it ever gets.
    assert train_with(backend, runs, works, [val], "--steps", "2", "--group-size", "0", "--gate") == 0
    run = runs / "r"
    material = [p for p in (run / "val").rglob("*") if p.is_file()] + [p for p in val.rglob("*") if p.is_file()]
    assert any("pool-" in str(p) and p.suffix == ".fountain" for p in material)  # scripts were written there
    assert any(p.name == "orrery.md" and "pool-" in str(p) for p in material)  # and loss reports
    checked = {"backward": 0, "reduce": 0}
    for call in backend.calls:
        if call.role not in checked:
            continue
        checked[call.role] += 1
        r = call.request
        rendered = "\n".join([r.system, r.prefix, r.prompt, json.dumps(r.context, default=str)])
        for secret in [*SECRET, str(run / "val"), str(val)]:
            assert secret not in rendered, (call.role, secret)
        if call.sandbox is None:
            continue  # reduce is a text call: it has no file tools at all
        for root in call.sandbox.read_roots + call.sandbox.write_roots:
            for held in ((run / "val").resolve(), val.resolve()):
                assert not held.is_relative_to(root) and not root.is_relative_to(held), (call.role, root)
        for path in material:
            with pytest.raises(ToolError):
                call.sandbox.read_text(str(path))
    assert checked["backward"] >= 2 and checked["reduce"] >= 2
    # The files backward may read (the step's reports, summaries) hold none of it either.
    for readable in list(run.glob("epoch*/step*/loss/*")) + list(run.glob("epoch*/step*/backward/**/*")):
        if readable.is_file():
            text = readable.read_text(encoding="utf-8", errors="replace")
            assert not any(secret in text for secret in SECRET), readable
