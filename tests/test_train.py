"""The training loop end to end on the offline backend, through the command line a user types."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.pool.notes import Pool
from tests.support.recorded import recorded
from tests.support.runs import unfinish


def train(runs: Path, works: list[Path], *extra: str) -> int:
    argv = ["train", "--auto", "--runs-dir", str(runs), "--run-id", "r"]
    for work in works:
        argv += ["--work", str(work)]
    return main(argv + list(extra))


def events(runs: Path, kind: str | None = None) -> list[dict]:
    found = recorded(runs / "r" / "events.jsonl")
    return [e for e in found if kind is None or e["kind"] == kind]


def commits(runs: Path) -> int:
    return int(Pool(runs / "r" / "memory").git("rev-list", "--count", "HEAD"))


def test_training_lowers_the_loss_on_works_it_never_saw(tmp_path, make_work):
    works = [make_work("kestrel", 6), make_work("lantern", 6)]
    assert train(tmp_path / "runs", works, "--steps", "3") == 0
    means = [e["mean_loss"] for e in events(tmp_path / "runs", "step_finished")]
    assert len(means) == 3
    assert means[-1] < means[0] - 0.1, means
    for loss in events(tmp_path / "runs", "loss"):
        assert 0.0 <= loss["loss"] <= 1.0
        assert {"epoch", "step", "work", "loss", "time"} <= set(loss)
    decisions = events(tmp_path / "runs", "decision")
    assert decisions and all(d["decision"] == "approve" and d["by"] == "auto" for d in decisions)


def test_repeating_the_command_adds_no_commit_and_skips_every_stage(tmp_path, make_work):
    works = [make_work("quarry", 4), make_work("harbor", 4), make_work("meadow", 4)]
    runs = tmp_path / "runs"
    assert train(runs, works, "--steps", "2", "--group-size", "2") == 0
    before = commits(runs)
    count = len(events(runs))
    assert train(runs, works, "--steps", "2", "--group-size", "2") == 0
    assert commits(runs) == before
    # A finished run is said to be finished: nothing runs, nothing is recorded.
    assert len(events(runs)) == count
    # A run stopped at its very end (no run_finished yet) resumes by skipping every stage.
    unfinish(runs)
    count = len(events(runs))
    assert train(runs, works, "--steps", "2", "--group-size", "2") == 0
    assert commits(runs) == before
    second = events(runs)[count:]
    stages = [e for e in second if e["kind"] == "stage"]
    assert stages and all(e["status"] in ("started", "skipped") for e in stages)
    assert not [e for e in second if e["kind"] in ("call", "loss", "decision")]


def test_resume_after_a_crash_runs_only_what_is_missing(tmp_path, make_work):
    works = [make_work("birch", 4), make_work("cedar", 4)]
    runs = tmp_path / "runs"
    assert train(runs, works, "--steps", "2") == 0
    step1 = runs / "r" / "epoch0" / "step1"
    # Simulate a crash during step 1: cedar's loss and the micro-step never finished.
    (step1 / "loss" / "cedar.json").unlink()
    commit_txt = step1 / "backward" / "g1" / "commit.txt"
    approved = json.loads(commit_txt.read_text())["after"]
    commit_txt.unlink()
    # ...before its decision was recorded (a recorded one is carried out on resume, not made again).
    (step1 / "backward" / "g1" / "decision.json").unlink()
    pool = Pool(runs / "r" / "memory")
    pool.reset((step1 / "backward" / "g1" / "before.txt").read_text().strip())
    unfinish(runs)  # a crashed run never wrote its end
    count = len(events(runs))
    assert train(runs, works, "--steps", "2") == 0
    again = events(runs)[count:]
    ran = {(e["stage"], e.get("work")) for e in again if e["kind"] == "stage" and e["status"] == "finished"}
    assert ("loss", "cedar") in ran
    assert ("loss", "birch") not in ran and ("forward", "cedar") not in ran
    assert ("backward", None) in ran
    assert (step1 / "backward" / "g1" / "attempt2" / "checked.json").exists()  # a new attempt on the old base
    assert commit_txt.exists() and pool.is_clean()
    assert Pool.subject(pool, approved) == pool.subject(pool.head())


def let_stale_stories_in(monkeypatch) -> None:
    """`train` refuses a story with no section for an episode (tests/test_import_check.py); these
    tests use one to make a forward fail, so they let it past that check to see what the loop does."""
    monkeypatch.setattr("skilltui.engine.data.work_check.train_problems", lambda work: [])


def test_groups_are_built_from_scheduled_works_even_when_one_fails(tmp_path, make_work, monkeypatch):
    let_stale_stories_in(monkeypatch)
    works = [make_work("ash", 4), make_work("elm", 4), make_work("fir", 4)]
    # elm's story tells only a later episode, so its writer fails at step 0.
    (works[1] / "story.md").write_text("# Elm\n\n## Episode 9\n\nOnly the ending.\n", encoding="utf-8")
    runs = tmp_path / "runs"
    assert train(runs, works, "--steps", "1", "--group-size", "2") == 0
    started = events(runs, "step_started")[0]
    assert started["groups"] == [["ash", "elm"], ["fir"]]
    failed = [e for e in events(runs, "stage") if e["status"] == "failed"]
    assert [(e["stage"], e["work"]) for e in failed] == [("forward", "elm")]
    batch = json.loads((runs / "r" / "epoch0" / "step0" / "backward" / "g1" / "batch.json").read_text())
    assert [s["work"] for s in batch] == ["ash"]  # elm's failure cost elm only
    assert (runs / "r" / "epoch0" / "step0" / "backward" / "g2" / "commit.txt").exists()


def test_every_work_failing_stops_the_run_with_exit_1(tmp_path, make_work, capsys, monkeypatch):
    let_stale_stories_in(monkeypatch)
    work = make_work("void", 4)
    (work / "story.md").write_text("# Void\n\n## Episode 9\n\nOnly the ending.\n", encoding="utf-8")
    assert train(tmp_path / "runs", [work], "--steps", "1") == 1
    assert "every work failed" in capsys.readouterr().err
    assert events(tmp_path / "runs", "run_finished")[-1]["status"] == "failed"


def test_a_short_work_sits_out_and_the_epoch_ends_when_none_reach_last(tmp_path, make_work):
    works = [make_work("long", 6), make_work("short", 2)]
    runs = tmp_path / "runs"
    assert train(runs, works, "--steps", "5", "--epochs", "2") == 0
    steps = [(e["epoch"], e["step"], e["works"]) for e in events(runs, "step_started")]
    assert steps == [
        (0, 0, ["long", "short"]),
        (0, 1, ["long"]),
        (0, 2, ["long"]),
        (1, 0, ["long", "short"]),
        (1, 1, ["long"]),
        (1, 2, ["long"]),
    ]
    # Fewer steps than asked for is said, once per session, not left to be noticed.
    said = [e["message"] for e in events(runs, "warning") if e["message"].startswith("--steps 5")]
    assert said == [
        "--steps 5: the works have episodes for 3 steps of 2 episodes (the longest has 6), so an epoch runs 3"
    ]


def test_no_backward_freezes_the_pool_and_init_pool_seeds_it(tmp_path, make_work):
    works = [make_work("oak", 4)]
    runs = tmp_path / "runs"
    assert train(runs, works, "--steps", "2") == 0
    trained = runs / "r" / "memory"
    assert (
        main(
            [
                "train",
                "--auto",
                "--runs-dir",
                str(runs),
                "--run-id",
                "control",
                "--work",
                str(works[0]),
                "--steps",
                "2",
                "--no-backward",
                "--init-pool",
                str(trained),
            ]
        )
        == 0
    )
    control = Pool(runs / "control" / "memory")
    assert control.note_paths() == Pool(trained).note_paths()
    assert int(control.git("rev-list", "--count", "HEAD")) == 2  # start + seed, nothing trained
    assert not (runs / "control" / "epoch0" / "step0" / "backward").exists()


def test_the_writer_reads_notes_through_traced_tools(tmp_path, make_work):
    works = [make_work("pine", 4)]
    runs = tmp_path / "runs"
    assert train(runs, works, "--steps", "2") == 0
    first = json.loads((runs / "r" / "epoch0" / "step0" / "works" / "pine" / "reads.json").read_text())
    second = json.loads((runs / "r" / "epoch0" / "step1" / "works" / "pine" / "reads.json").read_text())
    assert first == {"notes": [], "episodes": {"1": [], "2": []}}  # the pool starts empty
    assert second["notes"] and all(p.endswith(".md") for p in second["notes"])
    # Kept per episode: the offline writer reads its notes first, so both episodes had them all.
    assert second["episodes"] == {"3": second["notes"], "4": second["notes"]}


@pytest.mark.subprocess
def test_the_engine_imports_no_textual():
    code = (
        "import sys, skilltui.engine.loop, skilltui.engine.opening, skilltui.drivers.console, "
        "skilltui.drivers.driver, skilltui.drivers.headless, skilltui.model.view, "
        "skilltui.agents.offline, skilltui.engine.data.diffuse; "
        "print('textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_worker_count_does_not_change_what_is_computed(tmp_path, make_work):
    works = [make_work("gull", 4), make_work("tern", 4), make_work("wren", 4)]
    losses = []
    for workers in ("1", "3"):
        runs = tmp_path / f"runs{workers}"
        assert train(runs, works, "--steps", "2", "--workers", workers) == 0
        losses.append({(e["step"], e["work"]): e["loss"] for e in events(runs, "loss")})
    assert losses[0] == losses[1] and len(losses[0]) == 6
