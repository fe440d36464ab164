"""`skilltui compare` on runs written by hand, where the right numbers are known: a work sits out a step."""

from __future__ import annotations

import json
from pathlib import Path

from skilltui.model.events import Loss, StepFinished, StepStarted
from skilltui.runs.compare import compare_runs
from skilltui.store.run_folder import Run


def _run(root: Path, steps: list[dict[str, float]]) -> Run:
    """A run whose step `i` scored `steps[i]` (work -> loss); a work missing from a step sat it out."""
    run = Run(root)
    root.mkdir(parents=True)
    events: list = []
    for number, scores in enumerate(steps):
        works = sorted(scores)
        events.append(StepStarted(epoch=0, step=number, first=number, last=number, works=works, groups=[works]))
        events += [Loss(epoch=0, step=number, work=w, loss=v, scores={}, report="") for w, v in scores.items()]
        mean = round(sum(scores.values()) / len(scores), 4)
        events.append(StepFinished(epoch=0, step=number, mean_loss=mean, failed=[], works_in_mean=len(scores)))
    run.events_path.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in events))
    return run


def test_a_step_where_one_work_sits_out_says_how_many_works_its_mean_covers(tmp_path):
    # c (the best work) sits out step 1 of the first run: its step means cover 3 works, then 2.
    sat_out = _run(tmp_path / "sat-out", [{"a": 0.6, "b": 0.8, "c": 0.2}, {"a": 0.4, "b": 0.6}])
    full = _run(tmp_path / "full", [{"a": 0.6, "b": 0.8, "c": 0.2}, {"a": 0.4, "b": 0.6, "c": 0.2}])
    data = compare_runs([sat_out, full])
    assert data["curves"]["sat-out"]["train"] == [[0, 0, 0.5333, 3], [0, 1, 0.5, 2]]
    assert data["curves"]["full"]["train"] == [[0, 0, 0.5333, 3], [0, 1, 0.4, 3]]
    rows = {r["work"]: r for r in data["rows"]}
    # c's epoch mean covers one step in the first run and two in the second: the row says so.
    assert rows["c"]["steps"] == {"sat-out": 1, "full": 2} and not rows["c"]["same_steps"]
    assert rows["a"]["loss"] == {"sat-out": 0.5, "full": 0.5} and rows["a"]["same_steps"]
    assert rows["mean of 3 works"]["loss"] == {"sat-out": 0.4667, "full": 0.4667}
