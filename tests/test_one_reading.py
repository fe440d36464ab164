"""One run, every interface, the same numbers: compare, report, runs, the end-of-run summary and the app.

Each reads `events.jsonl` through the one reader and takes its means, counts and loss
changes from `model/figures.py`. The run here has what makes those numbers differ when
two places compute them apart: two steps, a micro-step the gate rolled back and one it
kept, and a held-out work whose validation loss is measured after every step.
"""

from __future__ import annotations

import asyncio
import json
import re

from skilltui import cli
from skilltui.cli import main
from skilltui.commands import training
from skilltui.engine.opening import open_run
from skilltui.model.figures import finished_means, loss_changes, val_means
from skilltui.model.parse import read_run
from skilltui.model.summary import summarise
from skilltui.model.view import RunView
from skilltui.runs.records import load_history
from skilltui.runs.status import run_status
from skilltui.store.run_folder import Run
from tests.support.scripted import ScriptedBackend, seed_pool
from tests.support.tui import SIZE, make_app, screen_text, wait_for
from tests.support.validation import held_out_work, train_with


def test_compare_report_runs_the_summary_and_the_app_agree_on_one_run(tmp_path, make_work, capsys):
    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    backend = ScriptedBackend(script=[("remove", "dialogue/dialogue-blocks.md"), ("add", "scene")])
    extra = ("--steps", "2", "--gate", "--init-pool", str(donor))
    assert train_with(backend, runs, works, [val], *extra) == 0
    console = capsys.readouterr().out

    # What the figures say of the run, read once.
    view = RunView().fold(read_run(runs / "r" / "events.jsonl").events)
    train = finished_means(view)
    vals = {key: mean for key, mean in val_means(view).items() if key in train}
    changes = loss_changes(view)
    assert list(train) == [(0, 0), (0, 1)] and list(vals) == list(train)
    assert view.decisions == {"rollback": 1, "approve": 1}
    assert all(mean.works == 2 for mean in train.values()) and set(changes) == {(0, 0)}
    first, last = train[(0, 0)], train[(0, 1)]
    summary = summarise(view).lines()
    assert summary[1] == f"train loss {first.text()} → {last.text()}"
    # A gated run: validation starts from the notes before any update, as the gate measured them.
    base = view.gate_before[view.first_review][0]  # what the first review's header showed
    assert summary[2] == f"selection (validation) loss {base:.3f} (1 work) before any update → {vals[(0, 1)].text()}"
    assert "over 1 kept micro-step" in summary[3]

    # The end-of-run summary --auto printed.
    printed = console.splitlines()
    assert printed[-len(summary) :] == summary
    for (e, s), mean in train.items():  # and each step's line as it ended
        assert f"[step] epoch {e} step {s}: mean loss {mean.text()}, selection {vals[(e, s)].text()}," in console

    # compare --json: the curves, and the epoch's mean of the works (every work scored both steps,
    # so it is the mean of the step means).
    assert main(["compare", "r", "--runs-dir", str(runs), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["curves"]["r"]["train"] == [[e, s, round(m.value, 4), m.works] for (e, s), m in train.items()]
    assert data["curves"]["r"]["val"] == [[e, s, round(m.value, 4), m.works] for (e, s), m in vals.items()]
    rows = {(row["epoch"], row["work"], row["kind"]): row["loss"]["r"] for row in data["rows"]}
    assert abs(rows[(0, "mean of 2 works", "train")] - (first.value + last.value) / 2) < 1e-4
    assert rows[(0, "orrery", "val")] == vals[(0, 1)].value

    # runs: the table and the status behind it.
    run = Run(runs / "r")
    status = run_status(run)
    assert (status.latest_loss, status.latest_works) == (last.value, 2)
    assert (status.latest_val, status.latest_val_works) == (vals[(0, 1)].value, 1)
    assert (status.approved, status.rolled_back, status.steps_done) == (1, 1, 2)
    assert status.step_means == train
    assert main(["runs", "--runs-dir", str(runs)]) == 0
    [row] = [line.split() for line in capsys.readouterr().out.splitlines() if line.split()[:1] == ["r"]]
    assert f"{last.value:.3f}" in " ".join(row) and f"{vals[(0, 1)].value:.3f}" in " ".join(row)

    # report: the curve's points, and the loss change each micro-step is credited with.
    assert main(["report", "r", "--runs-dir", str(runs), "--to", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    for (e, s), mean in train.items():
        assert f"train mean e{e} s{s}: {mean.value:.3f} over 2 works" in page
    for (e, s), mean in vals.items():
        assert f"selection (validation) mean e{e} s{s}: {mean.value:.3f} over 1 work<" in page
    before, after = changes[(0, 0)]
    # The rolled-back micro-step of step 0: the next step trained without it, so it is credited with nothing.
    assert page.count(f"{before:.3f} (its step); not kept, so no later step measured it") == 1
    assert f"{before:.3f} (its step) → {after:.3f} (next step)" not in page
    assert f"{last.value:.3f} (its step) → … (next step)" in page  # the kept one of step 1: no next step yet
    assert re.search(r"1 approved, 0 rerun, 1 rolled back", page)

    # review's records: every micro-step's commit carries the same change.
    history = load_history(run)
    micro = [c for c in history.commits if c.micro is not None]
    assert {c.micro.step: (c.loss_before, c.loss_after) for c in micro} == {0: changes[(0, 0)], 1: (last.value, None)}
    assert {c.decision for c in micro} == {"approved by auto", "rolled back by auto"}

    # The app, reopened on the finished run: its curve's legend and its summary.
    settings = training.settings_from(
        cli.build_parser().parse_args(
            ["train", "--runs-dir", str(runs), "--run-id", "r", "--work", str(works[0]), "--work", str(works[1])]
            + ["--val-work", str(val), *extra, "--no-consolidate"]  # as train_with trained it
        )
    )
    opened = open_run(settings)

    async def in_the_app() -> None:
        app = make_app(opened)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda: not app.training)
            await wait_for(pilot, lambda: "next: skilltui review" in screen_text(app))
            text = screen_text(app)
            assert f"mean {last.text()}" in text and f"val {vals[(0, 1)].text()}" in text
            for line in summary[1:4]:
                assert line in text
            assert summarise(app.view).lines()[1:4] == summary[1:4]

    try:
        asyncio.run(in_the_app())
    finally:
        opened.lock.release()
