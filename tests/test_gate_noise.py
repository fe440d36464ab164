"""The gate's error rates as a procedure: rates over many draws, with a binomial bound.

Each rate comes from simulating the whole decision loop (tests/support/gate_sim.py: the real
`gate.judge` and `gate.plan`, on drawn losses with a shock shared by each writing call)
thousands of times, and is asserted on the exact 95% interval of what was counted, so a
pass does not rest on a lucky seed. The engine's own decisions, with the offline writer,
are measured by bench/bench_gate.py (they take minutes); here the engine runs only the
cases whose outcome does not depend on the draw.
"""

from __future__ import annotations

import pytest

from tests.support.gate_sim import World, simulate
from tests.support.known_truths import MENU, START, held_out
from tests.support.scripted import ScriptedBackend, seed_pool
from tests.support.validation import events, held_out_work, train_with

SHOCKED = World(sd=0.05, shock=0.025)  # a call shock of half the per-episode sd: calls that move together


@pytest.mark.slow
def test_a_null_update_is_kept_at_most_at_the_stated_rate_under_call_shocks():
    tally = simulate(SHOCKED, 0.0, runs=400, seed=1)  # 2,000 decisions
    rate, low, high = tally.rate()
    assert tally.decisions == 2000
    assert high <= 0.06, f"null false-keep {rate:.3f} [{low:.3f}, {high:.3f}] over {tally.decisions}"
    assert tally.per_side() <= 3


def test_power_at_two_and_three_standard_errors_of_one_pass():
    for size, floor in ((3, 0.8), (2, 0.5)):
        tally = simulate(SHOCKED, -size * SHOCKED.pass_se, runs=60, seed=3)
        rate, low, _ = tally.rate()
        assert low >= floor, f"power at {size} SE: {rate:.3f}, lower bound {low:.3f}"
        assert tally.per_side() <= 3


def test_three_null_candidates_keep_one_at_most_at_the_stated_rate():
    tally = simulate(World(sd=0.05, shock=0.025, family=3), 0.0, runs=160, seed=4)
    rate, low, high = tally.rate()
    assert high <= 0.06, f"family-wise {rate:.3f} [{low:.3f}, {high:.3f}]"


def test_a_consolidation_that_costs_two_hundredths_is_rarely_kept():
    tally = simulate(World(sd=0.05, shock=0.025, margin=0.01), 0.02, runs=100, seed=5)
    rate, low, high = tally.rate()
    assert high <= 0.10, f"consolidation +0.02 kept {rate:.3f} [{low:.3f}, {high:.3f}]"


def test_a_writer_whose_every_call_ignores_the_notes_keeps_no_update(tmp_path, make_work):
    # --offline-noise-call 1: every validation call writes as with no notes, so a helpful
    # note changes nothing it writes; whatever the draws, the gate sees a tie and rolls back.
    train = make_work("train", 2)
    val = held_out(tmp_path / "works", 12, 0)
    donor = seed_pool(tmp_path / "donor", *START)
    backend = ScriptedBackend(script=[("add", MENU[0])])
    backend.call_noise = 1.0
    argv = ["--steps", "1", "--episodes-per-step", "2", "--gate", "--val-episodes", "12"]
    argv += ["--offline-noise-call", "1", "--init-pool", str(donor)]
    assert train_with(backend, tmp_path / "runs", [train], [val], *argv) == 0
    (decision,) = events(tmp_path / "runs", "decision")
    assert decision["decision"] == "rollback" and decision["reason"].endswith("tie, rolled back")


def test_no_call_noise_leaves_every_result_as_it_was(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    donor = seed_pool(tmp_path / "donor", "dialogue")
    seen = []
    for name, flag in (("without", []), ("zero", ["--offline-noise-call", "0"])):
        backend = ScriptedBackend(script=[("add", "scene")], noise=0.15)
        argv = ["--steps", "1", "--gate", "--offline-noise", "0.15", "--init-pool", str(donor), *flag]
        assert train_with(backend, tmp_path / name, works, [val], *argv) == 0
        losses = [(v["loss"], v["scores"]) for v in events(tmp_path / name, "val_loss")]
        gates = [(g["delta"], g["low"], g["high"], g["reason"]) for g in events(tmp_path / name, "gate")]
        seen.append((losses, gates))
    assert seen[0] == seen[1] and seen[0][1]  # the flag at 0 changes nothing, bit for bit


def test_a_validation_set_too_small_to_decide_says_so(tmp_path, make_work):
    # Null updates judged on 2 episodes of a noisy writer: the smallest change the gate could
    # detect at 3 passes is larger than every change the updates showed.
    from tests.support.scripted_backward import KnownMoves

    train = make_work("train", 2)
    val = held_out(tmp_path / "works", 12, 0)
    donor = seed_pool(tmp_path / "donor", *START)
    backend = KnownMoves(0, noise=0.15, menu=MENU, only="neutral")
    argv = ["--epochs", "3", "--steps", "1", "--episodes-per-step", "2", "--gate", "--val-episodes", "2"]
    argv += ["--offline-noise", "0.15", "--init-pool", str(donor)]
    assert train_with(backend, tmp_path / "runs", [train], [val], *argv) == 0
    told = [w["message"] for w in events(tmp_path / "runs", "warning") if "cannot decide" in w["message"]]
    assert len(told) == 1 and "at 5 passes a side it detects a change of" in told[0]
