"""The gate in whole runs: samples accumulate, resume keeps the past, rejected updates teach.

`--offline-noise` makes the offline writer vary between passes, as a real model does, so the
gate must take more passes before it decides; the scripted backward pass knows what each
update does to the held-out work.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.store.run_folder import read_json
from tests.support.cli import assert_refused, run_cli, snapshot
from tests.support.scripted import ScriptedBackend, seed_pool
from tests.support.validation import SECRET, events, held_out_work, train_with


def test_a_new_pass_on_the_same_notes_adds_a_sample_and_replaces_none(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    backend = ScriptedBackend(script=[("add", "scene")], noise=0.3)
    assert train_with(backend, runs, works, [val], "--steps", "1", "--gate", "--gate-max-repeats", "3") == 0
    before = [v for v in events(runs, "val_loss") if v["point"] == "before"]
    # A writer that may vary: one pass measures no spread, so the gate went back for more.
    assert [v["samples"] for v in before][:2] == [1, 2]
    assert before[0]["commit"] == before[1]["commit"]
    first_pass = read_json(Path(before[0]["report"].removesuffix(".md") + ".json"))["loss"]
    second_pass = read_json(Path(before[1]["report"].removesuffix(".md") + ".json"))["loss"]
    assert before[0]["report"] != before[1]["report"]
    assert first_pass == before[0]["loss"]  # the first sample is still on disk, unchanged
    assert before[1]["loss"] == pytest.approx((first_pass + second_pass) / 2, abs=1e-4)
    (gate,) = events(runs, "gate")
    assert gate["passes"] >= 2 and gate["n"] == 2 * gate["passes"]  # two episodes a pass


def test_a_resumed_run_keeps_its_recorded_validation_points(tmp_path, make_work):
    # Stop while a harmful update waits for its verdict, resume, roll it back.
    # The step-0 point was measured on the kept notes; a resume whose pool holds the waiting
    # attempt must not measure it again on those notes.
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    script = [("add", "scene"), ("remove", "dialogue/dialogue-blocks.md")]
    argv = ["--steps", "2", "--gate", "--init-pool", str(donor)]
    capped = ScriptedBackend(script=script, cost_per_call=0.01)
    assert train_with(capped, runs, works, [val], *argv, "--max-cost", "0.095") == 0
    assert events(runs, "run_finished")[-1]["status"] == "stopped"
    first = {(v["epoch"], v["step"]): v["loss"] for v in events(runs, "val_loss") if v["point"] == "step"}
    assert list(first) == [(0, 0)]
    count = len(events(runs))
    again = ScriptedBackend(script=script[1:], cost_per_call=0.01)
    assert train_with(again, runs, works, [val], *argv, "--max-cost", "1") == 0
    later = events(runs)[count:]
    assert [d["decision"] for d in later if d["kind"] == "decision"] == ["rollback"]
    assert not [v for v in later if v["kind"] == "val_loss" and (v["epoch"], v["step"]) == (0, 0)]
    finished = {(f["epoch"], f["step"]): f["val_mean_loss"] for f in later if f["kind"] == "step_finished"}
    assert finished[(0, 0)] == first[(0, 0)]
    # The rolled-back update changed nothing that was kept: the curve stays level.
    assert finished[(0, 1)] == first[(0, 0)]


@pytest.mark.slow
@pytest.mark.subprocess
def test_train_on_a_finished_run_says_so_and_changes_nothing(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    args = ["train", "--auto", "--steps", "2", "--runs-dir", str(runs), "--run-id", "r"]
    args += ["--work", str(works[0]), "--val-work", str(val)]
    assert run_cli(*args, cwd=tmp_path).returncode == 0
    recorded = (runs / "r" / "events.jsonl").read_bytes()
    vals = [v["loss"] for v in events(runs, "val_loss")]
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and "is finished" in lines[0]
    assert "skilltui review" in lines[0] and "skilltui export" in lines[0] and "--to DIR" in lines[0]
    assert (runs / "r" / "events.jsonl").read_bytes() == recorded
    assert [v["loss"] for v in events(runs, "val_loss")] == vals


def test_rejected_updates_reach_the_next_backward_prompt_without_validation_material(tmp_path, make_work):
    works = [make_work("kestrel", 6)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    script = [("remove", "dialogue/dialogue-blocks.md"), ("add", "transition"), ("add", "scene")]
    backend = ScriptedBackend(script=script)
    assert train_with(backend, runs, works, [val], "--steps", "3", "--gate", "--init-pool", str(donor)) == 0
    assert [d["decision"] for d in events(runs, "decision")] == ["rollback", "rollback", "approve"]
    gates = events(runs, "gate")
    prompts = [c.request.prompt for c in backend.calls if c.role == "backward"]
    assert "Rejected updates" not in prompts[0]
    third = prompts[2]
    section = third[third.index("Rejected updates") :]
    assert '"scripted: remove dialogue/dialogue-blocks.md" touched -dialogue/dialogue-blocks.md' in section
    assert '"scripted: add transition" touched +scene/transitions.md' in section
    for gate in gates[:2]:
        assert f"validation Δ {gate['delta']:+.3f} [{gate['low']:+.3f}, {gate['high']:+.3f}] at 90%" in section
        assert gate["reason"] in section  # who rejected it (auto) and why: the gate's figures
    assert section.count("rolled back by auto") == 2
    run = runs / "r"
    for call in backend.calls:
        if call.role != "backward":
            continue
        r = call.request
        rendered = "\n".join([r.system, r.lead or "", r.prefix, r.prompt, json.dumps(r.context, default=str)])
        for secret in [*SECRET, "orrery", str(run / "val"), str(val)]:
            assert secret not in rendered, secret


@pytest.mark.slow
def test_the_rejected_list_is_bounded_to_the_last_eight(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    script = [("neutral", f"scene/mood-{n}.md") for n in range(10)]
    backend = ScriptedBackend(script=script)
    argv = ["--steps", "2", "--epochs", "5", "--gate"]
    assert train_with(backend, runs, works, [val], *argv) == 0
    assert [d["decision"] for d in events(runs, "decision")] == ["rollback"] * 10  # ties, every one
    last = [c.request.prompt for c in backend.calls if c.role == "backward"][-1]
    section = last[last.index("Rejected updates") :]
    assert section.count("- e") == 8 and "(1 earlier rejected updates not shown.)" in section
    assert "scene/mood-0.md" not in section and "scene/mood-8.md" in section


def test_every_extra_pass_is_a_call_shown_live_and_counted_in_max_cost(tmp_path, make_work):
    works = [make_work("harbor", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    backend = ScriptedBackend(script=[("add", "scene")], cost_per_call=0.01, noise=0.3)
    assert train_with(backend, runs, works, [val], "--steps", "1", "--gate") == 0
    (gate,) = events(runs, "gate")
    every = events(runs)
    # The verdict's calls come before its event; a kept update's fresh pass each side comes after it.
    until = next(i for i, e in enumerate(every) if e["kind"] == "gate")
    val_calls = [c for c in every[:until] if c["kind"] == "call" and c["work"] == "orrery"]
    passes = len({c["transcript"].split("/val/")[1].split("/works/")[0] for c in val_calls if c["role"] == "forward"})
    assert passes >= 4  # at least two passes on each side: one pass measures no spread
    assert gate["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in val_calls))
    # A cap the training calls alone stay under stops the run once the gate's passes reach it.
    capped = tmp_path / "capped"
    again = ScriptedBackend(script=[("add", "scene")], cost_per_call=0.01, noise=0.3)
    assert train_with(again, capped, works, [val], "--steps", "1", "--gate", "--max-cost", "0.075") == 0
    finished = events(capped, "run_finished")[-1]
    assert finished["status"] == "stopped" and "--max-cost" in finished["reason"]
    assert not events(capped, "gate")


BAD = [
    (["--gate-confidence", "1.5"], "--gate-confidence"),
    (["--gate-confidence", "nan"], "--gate-confidence"),
    (["--val-repeats", "nan"], "--val-repeats"),
    (["--val-repeats", "0"], "--val-repeats"),
    (["--val-episodes", "0"], "--val-episodes"),
    (["--gate-max-repeats", "0"], "--gate-max-repeats"),
    (["--gate-tolerance", "nan"], "--gate-confidence"),
    (["--gate-tolerance", "0.01"], "--gate-confidence"),
    (["--offline-noise", "nan"], "--offline-noise"),
    (["--offline-noise", "1.5"], "--offline-noise"),
    (["--offline-noise-call", "2"], "--offline-noise-call"),
    (["--consolidate-margin", "-1"], "--consolidate-margin"),
    (["--consolidate-margin", "nan"], "--consolidate-margin"),
    (["--consolidate-margin", "inf"], "--consolidate-margin"),
    (["--forward-timeout", "nan"], "--forward-timeout"),
    (["--val-episodes", "9"], "no episode 4"),
]


@pytest.mark.subprocess
@pytest.mark.parametrize("flags, word", BAD)
def test_bad_gate_and_validation_values_are_refused_before_anything_is_written(tmp_path, make_work, flags, word):
    train = make_work("train", 4)
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    args = ["train", "--auto", "--work", str(train), "--val-work", str(val), "--gate", "--runs-dir", str(runs)]
    result = run_cli(*args, *flags, cwd=tmp_path)
    assert_refused(result, word)
    assert snapshot(runs) == []


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_run_gated_by_the_old_tolerance_rule_is_refused_with_where_to_go(tmp_path, make_work):
    # A run from before the interval rule: its settings hold a tolerance and no confidence.
    # Resuming it under another rule would mix two meanings of "kept"; say so and point on.
    train = make_work("train", 4)
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    args = ["train", "--auto", "--steps", "1", "--work", str(train), "--val-work", str(val), "--gate"]
    args += ["--runs-dir", str(runs), "--run-id", "old"]
    (runs / "old").mkdir(parents=True)
    assert run_cli(*args, "--max-cost", "0.000001", cwd=tmp_path).returncode in (0, 1)
    config = read_json(runs / "old" / "config.json")
    for key in ("gate_confidence", "gate_max_repeats", "val_repeats"):
        config.pop(key, None)
    config["gate_tolerance"] = 0.005
    (runs / "old" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    before = snapshot(runs)
    result = run_cli(*args, cwd=tmp_path)
    assert_refused(result, "old rule", "0.005", "skilltui review", "skilltui export", "--init-pool")
    assert snapshot(runs) == before
