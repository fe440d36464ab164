"""A long run stays as fast at its end as near its start: a micro-step's look at the run's
records reads what changed since the last look, not every step again."""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from skilltui.engine.update.attribution import attribute, episodes, run_attribution
from skilltui.engine.update.feedback import commit_annotations, feedback_text, past_micro_steps
from skilltui.store.run_folder import Run

_WATCHING: list[Counter[str]] = []


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _WATCHING and event in ("open", "os.scandir", "os.listdir"):
        _WATCHING[-1][event] += 1


sys.addaudithook(_audit)


def file_system_calls(look) -> int:
    """How many files and folders `look()` opens (Python's audit events for them)."""
    _WATCHING.append(Counter())
    try:
        look()
    finally:
        counted = _WATCHING.pop()
    return sum(counted.values())


def recorded_run(root: Path, steps: int) -> Run:
    """A run's records as training leaves them: per step, two works' traces and scores and one micro-step."""
    for step in range(steps):
        sdir = root / "epoch0" / f"step{step}"
        for work, loss in (("a", 0.5 + step / 1000), ("b", 0.25)):
            (sdir / "works" / work).mkdir(parents=True)
            notes = ["scene/x.md"] if (step + len(work)) % 2 else ["scene/x.md", "dialogue/y.md"]
            (sdir / "works" / work / "reads.json").write_text(json.dumps({"notes": notes, "episodes": {"1": notes}}))
            (sdir / "loss").mkdir(exist_ok=True)
            (sdir / "loss" / f"{work}.json").write_text(json.dumps({"episode_losses": {"1": loss}}))
        gdir = sdir / "backward" / "g1"
        gdir.mkdir(parents=True)
        record = {"decision": "approve", "by": "auto", "after": f"{step:040x}", "message": f"update {step}\n"}
        (gdir / "commit.txt").write_text(json.dumps(record))
    return Run(root)


@pytest.mark.parametrize(
    "look",
    [
        lambda run: run_attribution(run, ["scene/x.md"]),
        past_micro_steps,
        feedback_text,
        commit_annotations,
    ],
    ids=["attribution", "past_micro_steps", "feedback", "annotations"],
)
def test_a_look_at_the_records_costs_the_same_at_step_200_as_at_step_10(tmp_path, look):
    calls = {}
    for steps in (10, 200):
        run = recorded_run(tmp_path / f"run{steps}", steps)
        look(run)  # the first look of a process reads the whole run once
        calls[steps] = file_system_calls(lambda run=run: look(run))
    assert calls[200] == calls[10], calls


def test_attribution_carried_forward_equals_the_join_of_every_trace(tmp_path):
    run = recorded_run(tmp_path / "run", 3)
    notes = ["scene/x.md", "dialogue/y.md", "action/z.md"]
    assert run_attribution(run, notes) == attribute(episodes(run), notes)
    # Steps that settle after the first look are added to what it carried, the same as a fresh join.
    for step in range(3, 8):
        extra = recorded_run(tmp_path / "more", step + 1)
        for path in (extra.root / "epoch0" / f"step{step}").rglob("*"):
            target = run.root / path.relative_to(extra.root)
            if path.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.write_bytes(path.read_bytes())
        assert run_attribution(run, notes) == attribute(episodes(run), notes)
        assert run_attribution(run, notes, upto=(0, 1)) == attribute(episodes(run, (0, 1)), notes)
        assert [m.after for m in past_micro_steps(run)] == [f"{n:040x}" for n in range(step + 1)]
        shutil.rmtree(extra.root)
    stats = run_attribution(run, notes)
    assert (stats["scene/x.md"].with_n, stats["action/z.md"].without_n) == (16, 16)


def test_the_loss_changes_carried_forward_equal_the_run_models_own(tmp_path, make_work):
    from skilltui.cli import main
    from skilltui.engine.update.feedback import carried_loss_changes, prompt_loss_changes, run_view

    works = [make_work("pale-fox", 6), make_work("red-kite", 4)]
    argv = ["train", "--auto", "--steps", "3", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r"]
    assert main([*argv, "--work", str(works[0]), "--work", str(works[1])]) == 0
    lines = (tmp_path / "runs" / "r" / "events.jsonl").read_text().splitlines(keepends=True)
    # The records replayed line by line into a run the process keeps looking at, as the
    # prompt looks while training goes on: every look agrees with a fresh computation.
    replay = Run(tmp_path / "replay")
    replay.root.mkdir()
    looks = 0
    with open(replay.events_path, "w") as events:
        for line in lines:
            events.write(line)
            events.flush()
            if '"kind": "loss"' in line or '"kind": "step_finished"' in line:
                with run_view(replay) as view:
                    assert carried_loss_changes(replay, view) == prompt_loss_changes(view)
                    looks += 1
    assert looks >= 8
    with run_view(replay) as view:
        changes = carried_loss_changes(replay, view)
        assert len(changes) == 3 and all(c.after is not None for k, c in changes.items() if k < (0, 2))
