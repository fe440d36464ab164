"""The gate: a micro-step that makes the held-out work worse is rolled back, one that helps is kept.

The scripted backend's backward pass removes or adds notes the offline writer really uses,
so whether a micro-step helps the held-out work is known before the run starts.
"""

from __future__ import annotations

import re

import pytest

from skilltui.pool.notes import Pool
from tests.support.scripted import ScriptedBackend, seed_pool
from tests.support.validation import events, held_out_work, train_with

# The reason's format: before -> after, the paired delta, its interval at the confidence, n
# writing calls and what the interval rests on, and the finding.
REASON = re.compile(
    r"^gate: val (\d\.\d{3}) -> (\d\.\d{3}), Δ [+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\] at 90%, "
    r"n=\d+ calls \(\d+ episodes, [^()]+\): "
    r"(?:better|worse|tie, rolled back)$"
)


def test_the_gate_rolls_back_a_worsening_micro_step_and_keeps_an_improving_one(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    backend = ScriptedBackend(script=[("remove", "dialogue/dialogue-blocks.md"), ("add", "scene")])
    assert train_with(backend, runs, works, [val], "--steps", "2", "--gate", "--init-pool", str(donor)) == 0

    worse, better = events(runs, "decision")
    assert (worse["decision"], worse["by"]) == ("rollback", "auto")
    before, after = map(float, REASON.match(worse["reason"]).groups())
    assert worse["reason"].endswith(": worse") and better["reason"].endswith(": better")
    assert after > before + 0.005
    assert (better["decision"], better["by"]) == ("approve", "auto")
    before2, after2 = map(float, REASON.match(better["reason"]).groups())
    assert after2 < before2
    assert before2 == before  # the rolled-back step left the notes exactly as they were

    gates = events(runs, "gate")
    assert [g["advice"] for g in gates] == ["rollback", "keep"]
    micro = [v for v in events(runs, "val_loss") if v["point"] == "micro"]
    assert [g["after"] for g in gates] == [v["loss"] for v in micro]
    pool = Pool(runs / "r" / "memory")
    assert sorted(pool.note_paths()) == ["dialogue/dialogue-blocks.md", "scene/scene-headings.md"]
    # The validation curve after each step follows what was kept.
    steps = [v["loss"] for v in events(runs, "val_loss") if v["point"] == "step"]
    assert steps == [pytest.approx(before, abs=5e-4), pytest.approx(after2, abs=5e-4)]


def test_a_tie_is_rolled_back_and_the_reason_says_so(tmp_path, make_work):
    # The held-out work has no cut, so a note teaching the transition changes nothing it writes.
    # Before the interval rule a tie passed ("rose by no more than 0.005"); now it is rolled back.
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    assert (
        train_with(ScriptedBackend(script=[("add", "transition")]), runs, works, [val], "--steps", "1", "--gate") == 0
    )
    (gate,) = events(runs, "gate")
    assert gate["delta"] == 0 and gate["low"] == gate["high"] == 0 and gate["advice"] == "rollback"
    assert gate["reason"].endswith(": tie, rolled back") and REASON.match(gate["reason"])
    (decision,) = events(runs, "decision")
    assert (decision["decision"], decision["by"]) == ("rollback", "auto") and decision["reason"] == gate["reason"]
    figures = ("n", "delta", "low", "high", "confidence")
    assert [decision[f"gate_{k}"] for k in figures] == [gate[k] for k in figures] == [2, 0, 0, 0, 0.9]
    assert Pool(runs / "r" / "memory").note_paths() == []


def test_gate_validation_is_paid_for_shown_and_counted_in_max_cost(tmp_path, make_work):
    works = [make_work("harbor", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    script = [("add", "scene"), ("add", "dialogue")]
    assert (
        train_with(ScriptedBackend(script=script, cost_per_call=0.01), runs, works, [val], "--steps", "2", "--gate")
        == 0
    )
    val_calls = sum(c["cost_usd"] for c in events(runs, "call") if c["work"] == "orrery")
    assert val_calls == pytest.approx(0.06)  # the first pool, then each micro-step's notes: forward + loss
    assert sum(g["cost_usd"] for g in events(runs, "gate")) == pytest.approx(val_calls)

    # Training alone would have spent 0.03 before the gate's validation: only counting
    # validation makes the cap of 0.045 stop the run there.
    capped = tmp_path / "capped"
    backend = ScriptedBackend(script=script, cost_per_call=0.01)
    assert train_with(backend, capped, works, [val], "--steps", "2", "--gate", "--max-cost", "0.045") == 0
    finished = events(capped, "run_finished")[-1]
    assert finished["status"] == "stopped" and "--max-cost" in finished["reason"]
    assert finished["cost_usd"] == pytest.approx(0.05)
    assert not events(capped, "gate")
    # Raising the cap resumes it: the waiting micro-step is judged without a new backward pass.
    again = ScriptedBackend(script=script[1:], cost_per_call=0.01)
    assert train_with(again, capped, works, [val], "--steps", "2", "--gate", "--max-cost", "1") == 0
    assert [d["decision"] for d in events(capped, "decision")] == ["approve", "approve"]
    assert sum(1 for c in again.calls if c.role == "backward") == 1
