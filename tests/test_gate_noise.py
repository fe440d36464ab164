"""The gate under a noisy writer, on updates whose effect is known (issue 21, item 6).

`--offline-noise 0.15` makes every validation pass of the same notes score differently;
`KnownMoves` makes one helpful, one harmful and one neutral update in a seeded order, each
worth about -0.08, +0.08 to +0.4 and exactly 0 on the held-out work (tests/known_truths.py).
The noise is drawn from each call's identity, so these runs are the same every time: the
assertions are about decisions, not luck.
"""

from __future__ import annotations

import pytest
from known_truths import MENU, START, held_out
from scripted import seed_pool
from scripted_backward import KnownMoves
from test_validation import events, train_with


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_under_noise_the_gate_keeps_the_helpful_update_and_rolls_back_the_harmful_and_the_neutral(
    tmp_path, make_work, seed
):
    train = make_work("train", 2)
    val = held_out(tmp_path / "works", 12, seed)
    donor = seed_pool(tmp_path / "donor", *START)
    backend = KnownMoves(seed, noise=0.15, menu=MENU)
    argv = ["--epochs", "3", "--steps", "1", "--episodes-per-step", "2", "--gate", "--val-episodes", "12"]
    argv += ["--offline-noise", "0.15", "--init-pool", str(donor)]
    assert train_with(backend, tmp_path / "runs", [train], [val], *argv) == 0
    decided = [d["decision"] for d in events(tmp_path / "runs", "decision")]
    assert sorted(backend.kinds) == ["harmful", "helpful", "neutral"]
    assert decided == ["approve" if kind == "helpful" else "rollback" for kind in backend.kinds]
    gates = events(tmp_path / "runs", "gate")
    # Every verdict measured its spread and says how sure it is; none took more than three passes a side.
    assert all(g["low"] is not None and g["high"] is not None and g["passes"] <= 3 for g in gates)
    neutral = gates[backend.kinds.index("neutral")]
    assert neutral["low"] < 0 < neutral["high"]  # no effect: the interval straddles zero, so it is rolled back
