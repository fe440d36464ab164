"""Records a resume finds damaged are recomputed from what they were computed from, never
counted as a failure of the work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.store.run_folder import Run
from tests.support.recorded import recorded
from tests.support.runs import unfinish


def train(runs: Path, works: list[Path]) -> int:
    argv = ["train", "--auto", "--runs-dir", str(runs), "--run-id", "r", "--steps", "2"]
    for work in works:
        argv += ["--work", str(work)]
    return main(argv)


@pytest.mark.parametrize("damage", ["", '{"loss": 0.4', "null", '{"scores": {}}', '{"loss": "low"}'])
def test_a_damaged_loss_scores_file_is_recomputed_on_resume(make_work, tmp_path: Path, damage: str) -> None:
    works = [make_work("salt-marsh", 4), make_work("iron-bell", 4)]
    runs = tmp_path / "runs"
    assert train(runs, works) == 0
    run = Run(runs / "r")
    scores = run.loss_scores(0, 0, "salt-marsh")
    before = json.loads(scores.read_text())
    finished = [e for e in recorded(run.events_path) if e["kind"] == "step_finished"]
    means = {(e["epoch"], e["step"]): e["mean_loss"] for e in finished}
    scores.write_text(damage)
    unfinish(runs)  # a session that died before its end: the next one resumes it
    assert train(runs, works) == 0
    events = recorded(run.events_path)
    assert not [e for e in events if e["kind"] == "stage" and e.get("status") == "failed"]
    assert json.loads(scores.read_text())["loss"] == before["loss"]
    again = [e for e in events if e["kind"] == "step_finished"][len(means) :]
    assert all(e["mean_loss"] == means[(e["epoch"], e["step"])] for e in again)
    assert any("salt-marsh" in e["message"] and "recomputed" in e["message"] for e in events if e["kind"] == "warning")
