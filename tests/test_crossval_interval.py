"""Crossval's figures across folds: a mean interval that allows for folds moving
together, a separate interval for a new work, and only finished folds in the mean."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from skilltui.cli import main
from skilltui.engine.validation.crossval import across_folds
from skilltui.engine.validation.test_split import TestFigure
from tests.support.splits import crossval_argv, small_works


def figure(delta: float, works: int = 1) -> TestFigure:
    return TestFigure(0.5, 0.5 + delta, delta, None, None, 0.9, works, 2, 2)


def test_the_mean_interval_has_the_nadeau_bengio_variance_and_a_new_work_a_wider_one() -> None:
    deltas = [-0.625, -0.465, -0.718]
    found = across_folds([figure(d) for d in deltas], 0.9, works=3)
    assert found is not None and found.low is not None and found.new_low is not None
    t, s = stats.t.ppf(0.95, 2), statistics.stdev(deltas)
    # each fold trained on 2 works and tested on 1: n_test/n_train = 1/2
    assert found.mean - found.low == pytest.approx(t * s * math.sqrt(1 / 3 + 1 / 2), abs=1e-4)
    assert found.new_high - found.mean == pytest.approx(t * s * math.sqrt(1 + 1 / 2 + 1 / 3 + 1 / 2), abs=1e-4)
    assert "at 90%, a new work [" in found.text()


def test_the_mean_interval_holds_the_truth_as_often_as_it_says_when_folds_share_their_training() -> None:
    """Folds correlated as n_test/n_train says (rho = 1/K): the plain t on s²/K held the truth ~79% of
    the time at a stated 90%; the corrected interval holds it at 90%, and a new work's at 90%."""
    rng = np.random.default_rng(5)
    k, reps, rho = 3, 3000, 1 / 3
    mean_in = new_in = 0
    for _ in range(reps):
        shared, own = rng.normal(0, math.sqrt(rho), 2), rng.normal(0, math.sqrt(1 - rho), k + 1)
        found = across_folds([figure(float(d)) for d in shared[0] + own[:k]], 0.9, works=k)
        assert found is not None and found.low is not None and found.high is not None
        assert found.new_low is not None and found.new_high is not None
        mean_in += found.low <= 0.0 <= found.high
        new_in += found.new_low <= shared[1] + own[k] <= found.new_high
    for hits in (mean_in, new_in):
        ci = stats.binomtest(hits, reps).proportion_ci(0.99, method="exact")
        assert ci.low <= 0.9 <= ci.high, (hits / reps, ci)


def test_a_fold_that_did_not_finish_is_named_and_left_out_of_the_mean(tmp_path: Path, monkeypatch, capsys) -> None:
    works = small_works(tmp_path / "works")
    runs = tmp_path / "runs"
    argv = crossval_argv(runs, works)
    assert main(argv) == 0
    capsys.readouterr()
    # fold1 as a kill leaves it: its record ends before the run finished, its last test point standing
    log = runs / "cv" / "fold1" / "events.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    cut = next(i for i, line in enumerate(lines) if json.loads(line)["kind"] == "run_finished")
    log.write_text("\n".join(lines[:cut]) + "\n", encoding="utf-8")
    monkeypatch.setattr("skilltui.drivers.folds.train_folds", lambda folds, secrets: ([], 0))  # nothing trains
    assert main(argv) == 1
    out = capsys.readouterr().out
    result = json.loads(out[out.index("\n{") :])
    by_fold = {f["fold"]: f for f in result["folds"]}
    assert by_fold["fold1"]["figure"] is not None and by_fold["fold1"]["in_mean"] is False
    mean = result["mean"]
    assert mean["folds"] == 2 and mean["left_out"] == ["fold1"]
    kept = [by_fold[n]["figure"]["delta"] for n in ("fold2", "fold3")]
    assert mean["mean"] == pytest.approx(statistics.fmean(kept), abs=1e-4)
    # The lines say the same: the fold's own figure is shown, marked, and the mean names it.
    assert main([a for a in argv if a != "--json"]) == 1
    lines = capsys.readouterr().out.splitlines()
    fold1 = next(line for line in lines if line.startswith("fold1 ("))
    assert "test: start" in fold1 and fold1.endswith("not finished: left out of the mean)")
    assert next(line for line in lines if line.startswith("crossval: mean")).endswith(
        "folds 2; fold1 not finished: left out"
    )
