"""The test split (`--test-work`) and `skilltui eval`: a figure nothing else touched, paired, with its interval."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skilltui.cli import main
from tests.support.cli import assert_refused, run_cli, snapshot
from tests.support.recorded import recorded
from tests.support.splits import bundled_works, crossval_argv, small_works
from tests.support.validation import SECRET, held_out_work, run_texts


def train(runs: Path, works: list[Path], tests: list[Path], *extra: str, run_id: str = "r") -> int:
    argv = ["train", "--auto", "--backend", "offline", "--runs-dir", str(runs), "--run-id", run_id, "--steps", "2"]
    argv += [a for w in works for a in ("--work", str(w))]
    argv += [a for w in tests for a in ("--test-work", str(w))]
    return main(argv + list(extra))


def points_of(runs: Path, run_id: str = "r") -> list[dict]:
    return [e for e in recorded(runs / run_id / "events.jsonl") if e["kind"] == "test"]


def test_a_frozen_pool_tests_exactly_zero_with_a_deterministic_writer(tmp_path, make_work, capsys):
    runs = tmp_path / "runs"
    assert train(runs, [make_work("quay", 4)], [make_work("moor", 4)], "--no-backward") == 0
    points = points_of(runs)
    assert [p["point"] for p in points] == ["start", "e0"]
    figure = points[-1]["figure"]
    assert figure["delta"] == 0.0 and figure["low"] == 0.0 and figure["high"] == 0.0
    assert (figure["works"], figure["episodes"], figure["passes"]) == (1, 2, 2)
    out = capsys.readouterr().out
    assert points[-1]["text"] in out  # the end summary says it
    assert points[-1]["text"].startswith("test: start ") and "Δ +0.000 [+0.000, +0.000] at 90%" in points[-1]["text"]


@pytest.mark.slow
def test_a_frozen_pool_under_noise_keeps_zero_in_its_interval(tmp_path, make_work):
    """40 seeded --no-backward runs under --offline-noise: the 90% interval holds 0 in at least 85% of them."""
    works, tests = [make_work("quay", 2)], [make_work("moor", 2), make_work("fell", 2)]
    held, measured = 0, 0
    for seed in range(40):
        runs = tmp_path / f"runs{seed}"
        argv = ("--no-backward", "--steps", "1", "--offline-noise", "0.3", "--test-repeats", "3")
        assert train(runs, works, tests, *argv, run_id=f"seed-{seed}") == 0
        figure = points_of(runs, f"seed-{seed}")[-1]["figure"]
        measured += 1
        held += figure["low"] <= 0.0 <= figure["high"]
    print(f"interval held 0 in {held} of {measured} seeded runs")
    assert measured == 40 and held >= 34, held


def test_no_prompt_of_a_run_sees_the_test_work_or_its_figure(tmp_path, make_work):
    """Backward, reduce, loss reports and consolidation: every prompt the run kept, none with the test work."""
    runs = tmp_path / "runs"
    secret = held_out_work(tmp_path / "works")
    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    assert train(runs, works, [secret], "--epochs", "2", "--group-size", "2") == 0
    run = runs / "r"
    figures = [p["text"] for p in points_of(runs)]
    assert len(figures) == 3 and all(f.startswith("test: start") for f in figures)
    story = (secret / "story.md").read_text(encoding="utf-8")
    lines = [line for line in story.splitlines() if len(line) > 12]
    roles: set[str] = set()
    searched, stored = 0, 0
    for where, text in run_texts(run, skip=("test", "events.jsonl")):
        stored += ":blob " in where
        if where.endswith("transcript.json"):
            roles.add(json.loads(text)["role"])
        searched += 1
        for word in SECRET + lines + figures + ["test:", "Δ"]:
            assert word not in text, f"{word!r} in {where}"
    assert {"forward", "loss", "reduce", "backward", "consolidate"} <= roles, roles
    assert searched > 20 and stored > 3  # the notes' git history was read too
    # The test's own writer did see its story, and only there.
    assert any(SECRET[0] in p.read_text(encoding="utf-8") for p in (run / "test").rglob("prompt.md"))


def test_resume_never_measures_a_recorded_test_point_again(tmp_path, make_work, capsys):
    runs = tmp_path / "runs"
    works, tests = [make_work("quay", 4)], [make_work("moor", 4)]
    assert train(runs, works, tests, "--epochs", "2", "--test-every", "end") == 0
    assert [p["point"] for p in points_of(runs)] == ["start", "e1"]
    marker = runs / "r" / "test" / "points" / "e1.json"
    before = marker.read_bytes()
    # Cut the run's end from its record: the next session walks every stage again.
    events = (runs / "r" / "events.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (runs / "r" / "events.jsonl").write_text("".join(e for e in events if '"run_finished"' not in e), encoding="utf-8")
    assert train(runs, works, tests, "--epochs", "2", "--test-every", "end") == 0
    assert [p["point"] for p in points_of(runs)] == ["start", "e1"]
    assert marker.read_bytes() == before
    assert "[start] test" not in capsys.readouterr().out.split("resumed")[-1]


def test_eval_of_a_trained_run_beats_the_empty_pool_on_a_held_out_work_and_pays_once(tmp_path, capsys):
    bundled = bundled_works(tmp_path / "works")
    runs = tmp_path / "runs"
    assert train(runs, [bundled["dead-air"], bundled["night-oven"]], [], run_id="two") == 0
    capsys.readouterr()
    argv = ["eval", "--pool", str(runs / "two"), "--work", str(bundled["the-second-bid"]), "--runs-dir", str(runs)]
    argv += ["--backend", "offline", "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    overall = first["overall"]
    assert overall["delta"] < 0 and overall["high"] < 0 and overall["excludes_zero"], overall
    assert first["calls"] == 4 and first["pool_b"] == "empty pool"
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["calls"] == 0 and again["overall"] == overall
    # The text form reads the same samples back: still no call.
    assert main(argv[:-1]) == 0
    assert "model calls this time: 0" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.subprocess
def test_bad_test_and_eval_input_is_one_line_and_writes_nothing(tmp_path, make_work):
    runs = tmp_path / "runs"
    work, other = make_work("quay", 4), make_work("moor", 2)
    base = ["train", "--auto", "--backend", "offline", "--runs-dir", str(runs), "--work", str(work)]
    refused = [
        (base + ["--test-work", str(work)], "also a --work"),
        (base + ["--test-work", str(other), "--test-episodes", "3"], "no episode 3"),
        (base + ["--test-work", str(other), "--test-repeats", "0"], "at least 1"),
        (["eval", "--pool", str(tmp_path / "nowhere"), "--work", str(work), "--runs-dir", str(runs)], "does not exist"),
        (["eval", "--pool", "r@abc", "--work", str(work), "--runs-dir", str(runs)], "not a run folder"),
    ]
    for argv, words in refused:
        assert_refused(run_cli(*argv, cwd=tmp_path), words)
        assert snapshot(runs) == []


def fold_records(runs: Path) -> dict[str, list[dict]]:
    return {f.name: recorded(f / "events.jsonl") for f in sorted((runs / "cv").glob("fold*/")) if f.is_dir()}


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("kill_at", ["step_finished", "test", "run_finished"])
def test_crossval_resumes_after_a_kill_with_the_same_folds_and_no_fold_trained_twice(tmp_path, kill_at):
    # Small works finish their folds together; the bundled works' folds differ in length, so a
    # kill at a fold's end usually leaves one to resume.
    bundled = (bundled_works if kill_at == "run_finished" else small_works)(tmp_path / "works")
    runs = tmp_path / "runs"
    argv = crossval_argv(runs, bundled)
    # Slowed so the kill lands at its point; the resume runs at full speed (the latency is not
    # part of a run's identity, so each fold resumes as it would with it).
    slowed = [sys.executable, "-m", "skilltui", *argv, "--offline-latency", "0.05"]
    started = subprocess.Popen(slowed, cwd=tmp_path, stdout=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not any(e["kind"] == kill_at for events in fold_records(runs).values() for e in events):
        assert started.poll() is None and time.monotonic() < deadline, "crossval ended before the kill point"
        time.sleep(0.02)
    started.kill()
    started.wait()
    folds = json.loads((runs / "cv" / "folds.json").read_text(encoding="utf-8"))["folds"]
    before = fold_records(runs)
    finished_before = {name for name, events in before.items() if any(e["kind"] == "run_finished" for e in events)}
    # A fold whose session had not yet begun when the kill landed has nothing to resume.
    begun = {name for name, events in before.items() if any(e["kind"] == "run_started" for e in events)}
    # Killed at a fold's end, the other folds (trained at once) may have ended within the same
    # tens of milliseconds: then every fold is finished, and what is checked is that none is
    # trained again. The other two kill points always leave folds to resume.
    assert begun - finished_before or kill_at == "run_finished", "the kill left no fold to resume"
    again = run_cli(*argv, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout[again.stdout.index("{") :])
    assert [f["test_works"] for f in result["folds"]] == folds
    assert all(f["status"] == "finished" and f["figure"] for f in result["folds"])
    mean = result["mean"]
    assert mean["folds"] == 3 and mean["low"] <= mean["mean"] <= mean["high"]
    for name, events in fold_records(runs).items():
        sessions = sum(e["kind"] == "run_started" for e in events)
        assert sessions == (2 if name in begun - finished_before else 1), (name, sessions)
        ran = [
            (e["stage"], e["epoch"], e["step"], e["work"])
            for e in events
            if e["kind"] == "stage" and e["stage"] in ("forward", "loss") and e["status"] == "finished"
        ]
        assert len(ran) == len(set(ran)), f"{name} trained a stage twice"
        assert sum(e["kind"] == "test" for e in events) == 2  # start and e0, each once


@pytest.mark.subprocess
def test_crossval_bad_folds_are_one_line_and_write_nothing(tmp_path):
    bundled = small_works(tmp_path / "works")
    runs = tmp_path / "runs"
    for folds, words in (("1", "give 2 or more"), ("4", "more than the 3 works")):
        argv = crossval_argv(runs, bundled)
        argv[argv.index("--folds") + 1] = folds
        assert_refused(run_cli(*argv, cwd=tmp_path), words)
        assert snapshot(runs) == []
    test_work = ["--test-work", str(bundled["dead-air"])]
    assert_refused(run_cli(*crossval_argv(runs, bundled, *test_work), cwd=tmp_path), "drop --test-work")
    assert snapshot(runs) == []


def test_the_test_points_are_tracked_per_epoch_with_the_final_interval(tmp_path, make_work):
    from skilltui.model.parse import read_run
    from skilltui.store.run_folder import Run
    from skilltui.tracking.layout import RunLayout

    runs = tmp_path / "runs"
    assert train(runs, [make_work("quay", 4)], [make_work("moor", 4)], "--epochs", "2") == 0
    layout = RunLayout(Run(runs / "r"))
    for event in read_run(runs / "r" / "events.jsonl").events:
        layout.apply(event)
    metrics = layout.metrics()
    points = points_of(runs)
    assert [p["point"] for p in points] == ["start", "e0", "e1"]
    assert sorted(metrics["test/delta"]) == [1, 3]  # each epoch's last step (2 steps an epoch)
    assert metrics["test/start"][0][0] == points[0]["start"]
    last = points[-1]["figure"]
    assert [metrics[f"test/{k}"][3][0] for k in ("delta", "low", "high")] == [last["delta"], last["low"], last["high"]]


async def test_the_apps_header_shows_the_latest_test_delta_with_its_interval(tmp_path, make_work):
    """Once a test point is measured, the header says its delta and interval (the delta alone when narrow)."""
    from textual.app import App

    from skilltui.apps.shared.widgets.run_header import HeaderFacts, RunHeader
    from skilltui.model.parse import read_run
    from skilltui.model.summary import test_delta_text
    from skilltui.model.view import RunView

    runs = tmp_path / "runs"
    works, tests = [make_work("quay", 4)], [make_work("moor", 4)]
    assert await asyncio.to_thread(train, runs, works, tests, "--no-backward") == 0  # main() runs its own loop
    figure = test_delta_text(RunView().fold(read_run(runs / "r" / "events.jsonl").events))
    assert figure == "+0.000 [+0.000, +0.000]"

    class One(App):
        def compose(self):
            yield RunHeader()

    for width, shown in ((200, "test Δ +0.000 [+0.000, +0.000]"), (60, "test Δ +0.000")):
        app = One()
        async with app.run_test(size=(width, 10)) as pilot:
            header = app.query_one(RunHeader)
            header.facts = HeaderFacts(run_id="r", status="finished", epoch=0, step=1, test=figure)
            await pilot.pause()
            assert shown in header.render().plain
            header.facts = HeaderFacts(run_id="r", status="running")
            await pilot.pause()
            assert "test Δ" not in header.render().plain


def test_a_run_with_a_test_work_writes_no_event_line_twice(tmp_path, make_work):
    """The two pools of a test point write the same work's pass; their events name the work, not the pool,
    so run at the same moment they were byte-identical lines, which the log's reader drops (and `runs` warns)."""
    runs = tmp_path / "runs"
    works = [make_work("quay", 2), make_work("fell", 2)]
    argv = ("--steps", "1", "--workers", "4", "--test-repeats", "3")
    assert train(runs, works, [make_work("moor", 2)], *argv) == 0
    lines = (runs / "r" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    twice = sorted({line for line in lines if lines.count(line) > 1})
    assert twice == [], twice[:3]
    started = [e for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "stage" and e["stage"] == "test"]
    # start: one pool x 3 passes; e0: two pools x 3 passes; each pass started and finished once
    assert sum(e["status"] == "started" for e in started) == 9
    assert sum(e["status"] == "finished" for e in started) == 9


def test_eval_on_a_work_the_pool_trained_on_warns_that_it_is_not_held_out(tmp_path, make_work, capsys):
    runs = tmp_path / "runs"
    seen, held, chosen = make_work("quay", 2), make_work("moor", 2), make_work("fell", 2)
    assert train(runs, [seen], [], "--steps", "1", "--val-work", str(chosen), run_id="one") == 0
    assert main(["export", "one", "--runs-dir", str(runs), "--to", str(tmp_path / "skill")]) == 0
    capsys.readouterr()
    base = ["eval", "--runs-dir", str(runs), "--backend", "offline", "--episodes", "1", "--repeats", "1"]
    for pool in (str(runs / "one"), "one@HEAD", str(tmp_path / "skill")):
        assert main([*base, "--pool", pool, "--work", str(seen), "--work", str(held)]) == 0
        warned = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
        assert len(warned) == 1, (pool, warned)
        assert f"--work quay is one of {pool}'s training works" in warned[0] and "not held-out" in warned[0]
    assert main([*base, "--pool", str(runs / "one"), "--work", str(chosen)]) == 0
    assert f"--work fell is one of {runs / 'one'}'s selection works" in capsys.readouterr().err
    assert main([*base, "--pool", str(runs / "one"), "--work", str(held)]) == 0
    assert "warning" not in capsys.readouterr().err  # a work the run never saw


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_test_point_recorded_but_not_told_before_a_kill_is_told_on_resume(tmp_path, make_work):
    from tests.support.faults import run_again, run_killed

    runs = tmp_path / "runs"
    argv = ["train", "--auto", "--backend", "offline", "--runs-dir", str(runs), "--run-id", "r", "--steps", "1"]
    argv += ["--work", str(make_work("quay", 2)), "--test-work", str(make_work("moor", 2))]
    # Killed just after the start point's record is written, before its event is.
    point = "skilltui.engine.validation.test_points:write_json"
    assert run_killed(point, 1, argv, when="after") == -9, "the point was never reached"
    assert (runs / "r" / "test" / "points" / "start.json").exists()
    assert points_of(runs) == []
    again = run_again(argv)
    assert again.returncode == 0, again.stderr
    assert [p["point"] for p in points_of(runs)] == ["start", "e0"]  # each told once
