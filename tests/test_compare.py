"""`skilltui compare`: a trained run against its --no-backward control, checked against their events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.cli import main
from tests.support.recorded import recorded
from tests.support.validation import held_out_work
from tests.support.works import write_work


def train_two(root: Path) -> None:
    runs = root / "runs"
    works = [write_work(root / "works", "kestrel", 4), write_work(root / "works", "lantern", 4)]
    val = held_out_work(root / "held")
    base = ["train", "--auto", "--runs-dir", str(runs), "--steps", "2", "--epochs", "2", "--val-work", str(val)]
    base += [a for w in works for a in ("--work", str(w))]
    assert main([*base, "--run-id", "trained"]) == 0
    assert main([*base, "--run-id", "control", "--no-backward"]) == 0


@pytest.fixture
def two_runs(tmp_path, made_once) -> Path:
    made_once("compare: trained and control", train_two)
    return tmp_path / "runs"


def expected_from_events(runs: Path, run: str) -> dict[tuple[int, str, str], float]:
    """What compare should say, recomputed straight from the run's events."""
    events = recorded(runs / run / "events.jsonl")
    train: dict[tuple[int, str], list[float]] = {}
    val: dict[tuple[int, str], tuple[int, float]] = {}
    for e in events:
        if e["kind"] == "loss":
            train.setdefault((e["epoch"], e["work"]), []).append(e["loss"])
        if e["kind"] == "val_loss" and e["point"] == "step":
            val[(e["epoch"], e["work"])] = max(val.get((e["epoch"], e["work"]), (-1, 0.0)), (e["step"], e["loss"]))
    out = {(ep, w, "train"): round(sum(v) / len(v), 4) for (ep, w), v in train.items()}
    out |= {(ep, w, "val"): loss for (ep, w), (_, loss) in val.items()}
    return out


def test_compare_matches_the_events_of_both_runs(two_runs, capsys):
    assert main(["compare", "trained", "control", "--runs-dir", str(two_runs), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"] == ["trained", "control"]
    rows = {(r["epoch"], r["work"], r["kind"]): r for r in data["rows"]}
    for run in ("trained", "control"):
        expected = expected_from_events(two_runs, run)
        assert {k: rows[k]["loss"][run] for k in expected} == expected
    assert {k for k in rows if not k[1].startswith("mean")} == set(expected_from_events(two_runs, "trained"))
    for row in data["rows"]:
        assert row["diff"]["control"] == pytest.approx(row["loss"]["control"] - row["loss"]["trained"], abs=1e-4)
    for epoch in (0, 1):
        mean = rows[(epoch, "mean of 2 works", "train")]["loss"]["trained"]
        works = [rows[(epoch, w, "train")]["loss"]["trained"] for w in ("kestrel", "lantern")]
        assert mean == pytest.approx(sum(works) / 2, abs=1e-4)
    # The control's notes never change, so its validation is level; training beat it on the held-out work.
    control_val = [rows[(e, "orrery", "val")]["loss"]["control"] for e in (0, 1)]
    assert control_val[0] == control_val[1]
    assert rows[(1, "orrery", "val")]["diff"]["control"] > 0.1
    steps = data["curves"]["trained"]["train"]
    assert [(e, s) for e, s, _, n in steps] == [(0, 0), (0, 1), (1, 0), (1, 1)] and {n for *_, n in steps} == {2}


def test_compare_prints_a_table_and_a_plot_of_the_curves(two_runs, capsys):
    assert main(["compare", "trained", "control", "--runs-dir", str(two_runs)]) == 0
    out = capsys.readouterr().out
    assert "Δ control" in out and "mean of 2 works" in out and "orrery" in out
    assert "trained val (1 work)" in out and "control train (2 works)" in out
    assert "e0s0" in out and "e1s1" in out


def test_compare_refuses_a_missing_run(two_runs, capsys):
    assert main(["compare", "trained", "nowhere", "--runs-dir", str(two_runs)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no run named nowhere" in err[0]


@pytest.mark.slow
def test_runs_says_how_many_works_each_mean_covers_and_shows_validation(two_runs):
    from skilltui.runs.overview import list_runs, runs_line

    by_id = {s.id: s for s in list_runs(two_runs)}
    last = [e for e in recorded(two_runs / "trained" / "events.jsonl") if e["kind"] == "step_finished"][-1]
    trained = by_id["trained"]
    assert (trained.latest_works, trained.latest_val, trained.latest_val_works) == (2, last["val_mean_loss"], 1)
    line = runs_line(trained)
    assert f"mean loss {last['mean_loss']:.3f} over 2 works" in line
    assert f"selection {last['val_mean_loss']:.3f} (1)" in line


def test_the_plot_keeps_its_legend_above_the_data_and_draws_train_over_validation():
    from skilltui.runs.compare import plot

    level = [(0, s, 0.95, 2) for s in range(3)]  # a control: train and validation coincide
    data = {
        "curves": {
            "trained": {"train": [(0, 0, 0.95, 2), (0, 1, 0.6, 2), (0, 2, 0.3, 2)], "val": [(0, 0, 0.97, 1)]},
            "control": {"train": level, "val": [(0, s, 0.95, 1) for s in range(3)]},
        }
    }
    rows = plot(data, width=100, height=20, color=False).splitlines()
    top = next(i for i, row in enumerate(rows) if row.startswith("1.00┤"))
    legend = [i for i, row in enumerate(rows) if " train (" in row or " val (" in row]
    assert len(legend) == 4 and max(legend) < top  # every legend line sits above the 1.0 line
    # The control's train line at 0.95 is drawn (not hidden under its validation dots).
    drawn = "".join(rows[top : top + 3])
    assert "▀" in drawn or "▄" in drawn
