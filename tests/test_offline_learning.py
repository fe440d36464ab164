"""Under the engine's loss, the offline backend still learns, and its control arm does not.

The work is generated here, so neither the offline writer nor the loss was tuned on it.
Epochs cover the same episodes step by step, so their means compare like for like.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltui.cli import main
from tests.support.recorded import recorded
from tests.support.works import write_varied_work

SETTINGS = ["--steps", "3", "--episodes-per-step", "2", "--epochs", "2"]


def run(runs: Path, works: list[Path], *extra: str) -> dict[int, dict[tuple[int, str], float]]:
    argv = ["train", "--auto", "--runs-dir", str(runs), "--run-id", "r", *SETTINGS, *extra]
    for work in works:
        argv += ["--work", str(work)]
    assert main(argv) == 0
    by_epoch: dict[int, dict[tuple[int, str], float]] = {}
    for e in recorded(runs / "r" / "events.jsonl"):
        if e["kind"] == "loss":
            by_epoch.setdefault(e["epoch"], {})[(e["step"], e["work"])] = e["loss"]
    return by_epoch


def mean(values: dict) -> float:
    return sum(values.values()) / len(values)


@pytest.mark.parametrize("varied", [False, True], ids=["make_work", "varied"])
def test_epoch_1_is_below_epoch_0_on_a_new_work_and_the_control_stays_level(tmp_path, make_work, varied):
    if varied:
        works = [write_varied_work(tmp_path / "works", "saltmarsh", 6, seed=3)]
    else:
        works = [make_work("saltmarsh", 6, seed=3)]
    trained = run(tmp_path / "trained", works)
    control = run(tmp_path / "control", works, "--no-backward")
    assert set(trained[0]) == set(trained[1]) == set(control[0]) == set(control[1])  # the same episodes
    assert mean(trained[1]) < mean(trained[0]) - 0.1, trained
    assert control[1] == control[0]  # nothing learned, nothing changed: exactly level
    # Both arms start from the same empty pool, so their first step is the same script.
    assert control[0][(0, "saltmarsh")] == trained[0][(0, "saltmarsh")]
