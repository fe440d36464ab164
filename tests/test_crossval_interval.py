"""Crossval's figures across folds: a mean interval that allows for folds moving
together, at a fold correlation it names and the user may state, a separate interval
for a new work, and only finished folds in the mean."""

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
from tests.support.cli import assert_refused, run_cli, snapshot
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
    assert "a new work [" in found.text()


def test_the_default_names_the_correlation_nadeau_bengio_assume_and_a_stated_one_replaces_it() -> None:
    deltas = [-0.625, -0.465, -0.718]
    found = across_folds([figure(d) for d in deltas], 0.9, works=3)
    assert found is not None
    # n_test/n_train = 1/2 is rho / (1 - rho) for rho = 1/3: the line names it, and the JSON carries it
    assert found.correlation == 0.333
    assert "[-0.944, -0.262] at 90% if folds correlate 0.33, a new work [-1.173, -0.032], folds 3" in found.text()
    assert json.loads(json.dumps(found.to_dict()))["correlation"] == 0.333
    assert across_folds([figure(d) for d in deltas], 0.9, works=3, correlation=1 / 3) == found
    stated = across_folds([figure(d) for d in deltas], 0.9, works=3, correlation=0.5)
    assert stated is not None and stated.low is not None and stated.new_high is not None
    t, s = stats.t.ppf(0.95, 2), statistics.stdev(deltas)
    assert stated.mean - stated.low == pytest.approx(t * s * math.sqrt(1 / 3 + 1), abs=1e-4)  # r = 0.5 / 0.5
    assert stated.new_high - stated.mean == pytest.approx(t * s * math.sqrt(2 + 1 / 3 + 1), abs=1e-4)
    assert stated.correlation == 0.5 and "at 90% if folds correlate 0.50," in stated.text()
    one = across_folds([figure(-0.6)], 0.9, works=3, correlation=0.2)
    assert one is not None and one.low is None and one.correlation == 0.2 and "correlate" not in one.text()


def coverage(k: int, rho: float, reps: int, seed: int, stated: float | None = None) -> tuple[int, int]:
    """How often the mean's interval holds the truth (0) and a new work's holds that work's delta, over
    `reps` crossvals whose K fold deltas correlate `rho`; a new work is the procedure run again, so it
    has its own shared part as well as its own spread."""
    rng = np.random.default_rng(seed)
    mean_in = new_in = 0
    for _ in range(reps):
        shared, own = rng.normal(0, math.sqrt(rho), 2), rng.normal(0, math.sqrt(1 - rho), k + 1)
        found = across_folds([figure(float(d)) for d in shared[0] + own[:k]], 0.9, works=k, correlation=stated)
        assert found is not None and found.low is not None and found.high is not None
        assert found.new_low is not None and found.new_high is not None
        mean_in += found.low <= 0.0 <= found.high
        new_in += found.new_low <= shared[1] + own[k] <= found.new_high
    return mean_in, new_in


def assert_holds_90(hits: int, reps: int) -> None:
    ci = stats.binomtest(hits, reps).proportion_ci(0.99, method="exact")
    assert ci.low <= 0.9 <= ci.high, (hits / reps, ci)


def test_the_mean_interval_holds_the_truth_as_often_as_it_says_when_folds_share_their_training() -> None:
    """Folds correlated as n_test/n_train says (rho = 1/K): the plain t on s²/K held the truth ~79% of
    the time at a stated 90%; the corrected interval holds it at 90%, and a new work's at 90%."""
    for hits in coverage(3, 1 / 3, 3000, seed=5):
        assert_holds_90(hits, 3000)


def test_a_stated_fold_correlation_holds_at_its_level_when_the_folds_correlate_that_much() -> None:
    """At rho 0.3 Nadeau-Bengio's default assumes 0.1 at K=10 and holds the truth ~72% of the time at a
    stated 90%; stating 0.3 holds the mean's and a new work's at 90%, at K=10 and K=5."""
    for k in (10, 5):
        for hits in coverage(k, 0.3, 3000, seed=k, stated=0.3):
            assert_holds_90(hits, 3000)
    short, _ = coverage(10, 0.3, 3000, seed=11)
    assert stats.binomtest(short, 3000).proportion_ci(0.99, method="exact").high < 0.8


@pytest.mark.subprocess
def test_a_fold_correlation_outside_0_to_1_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    works = small_works(tmp_path / "works")
    runs = tmp_path / "runs"
    for rho in ("1", "-0.1"):
        result = run_cli(*crossval_argv(runs, works, "--fold-correlation", rho), cwd=tmp_path)
        assert_refused(result, f"--fold-correlation {rho}", "at least 0 and below 1")
        assert snapshot(runs) == []
    estimate = run_cli(*crossval_argv(runs, works, "--fold-correlation", "1", "--estimate"), cwd=tmp_path)
    assert_refused(estimate, "--fold-correlation 1")
    assert main(crossval_argv(runs, works, "--fold-correlation", "0.3", "--estimate")) == 0  # a good one is taken
    assert snapshot(runs) == []


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
    assert mean["correlation"] == 0.333  # each finished fold tested 1 work of 3: n_test/n_train = 1/2
    # The lines say the same: the fold's own figure is shown, marked, and the mean names it.
    assert main([*(a for a in argv if a != "--json"), "--fold-correlation", "0.3"]) == 1
    lines = capsys.readouterr().out.splitlines()
    fold1 = next(line for line in lines if line.startswith("fold1 ("))
    assert "test: start" in fold1 and fold1.endswith("not finished: left out of the mean)")
    line = next(line for line in lines if line.startswith("crossval: mean"))
    assert " at 90% if folds correlate 0.30, a new work [" in line  # the stated correlation, not the default
    assert line.endswith("folds 2; fold1 not finished: left out")
