"""`skilltui runs`: one row per run with its progress, decisions, loss, cost and state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from skilltui.agents.offline import OfflineBackend
from skilltui.cli import main
from skilltui.engine.loop import Trainer
from skilltui.engine.opening import open_run
from skilltui.engine.settings import Settings
from skilltui.model.bus import EventBus, JsonlSink
from skilltui.model.events import RunFinished, utc_now
from skilltui.model.parse import read_run
from skilltui.model.review import Decision, ReviewRequest
from skilltui.model.view import RunView
from skilltui.runs.overview import list_runs, runs_line
from skilltui.runs.status import run_state
from skilltui.store.run_folder import Run, RunLock
from tests.support.recorded import recorded
from tests.support.works import write_work


class Scripted:
    """Answers the first reviews from a list and approves the rest."""

    def __init__(self, *actions: str) -> None:
        self.actions = list(actions)

    async def review(self, request: ReviewRequest) -> Decision:
        action = self.actions.pop(0) if self.actions else "approve"
        return Decision(action, "human", note="say less" if action == "rerun" else "")


class Priced(OfflineBackend):
    """The offline backend with a price on every call, so the cost column has something to add."""

    async def agent(self, request, sandbox):
        result = await super().agent(request, sandbox)
        result.cost_usd = 0.01
        return result

    async def text(self, request):
        result = await super().text(request)
        result.cost_usd = 0.01
        return result


def train(runs: Path, run_id: str, works: list[Path], reviewer, backend=None, steps: int = 2) -> Run:
    opened = open_run(Settings(works=works, steps=steps, runs_dir=runs, run_id=run_id, auto=True))
    bus = EventBus()
    sink = JsonlSink(opened.run.events_path)
    bus.subscribe(sink)
    try:
        asyncio.run(Trainer(opened, backend or OfflineBackend(), reviewer, bus).train())
    finally:
        sink.close()
        opened.lock.release()
    return opened.run


def train_two(root: Path) -> None:
    folder = root / "runs"
    works = [write_work(root / "works", "salt-road"), write_work(root / "works", "brass-key")]
    train(folder, "reviewed", works, Scripted("rerun", "rollback"))
    train(folder, "plain", works[:1], Scripted(), steps=1)
    (folder / "not-a-run").mkdir()


@pytest.fixture
def runs(made_once, tmp_path: Path) -> Path:
    made_once("history: reviewed and plain", train_two)
    return tmp_path / "runs"


def test_runs_counts_what_each_run_did(runs: Path) -> None:
    by_id = {s.id: s for s in list_runs(runs)}
    assert set(by_id) == {"reviewed", "plain"}
    reviewed = by_id["reviewed"]
    events = recorded(runs / "reviewed" / "events.jsonl")
    decisions = [e["decision"] for e in events if e["kind"] == "decision"]
    assert decisions[:2] == ["rerun", "rollback"]
    assert (reviewed.approved, reviewed.rerun, reviewed.rolled_back) == (
        decisions.count("approve"),
        1,
        1,
    )
    last_mean = [e["mean_loss"] for e in events if e["kind"] == "step_finished"][-1]
    assert reviewed.latest_loss == last_mean
    assert reviewed.steps_done == 2 and reviewed.epochs_done == 1 and reviewed.epochs == 1
    assert reviewed.works == ["brass-key", "salt-road"]
    assert reviewed.state == "finished"


def test_runs_adds_up_the_cost_of_every_call(make_work, tmp_path: Path) -> None:
    run = train(tmp_path / "runs", "priced", [make_work("tin-bell")], Scripted(), backend=Priced(), steps=1)
    calls = [e for e in recorded(run.events_path) if e["kind"] == "call"]
    [status] = list_runs(tmp_path / "runs")
    assert status.cost_usd == pytest.approx(0.01 * len(calls)) and status.cost_known


def test_runs_state_says_running_stopped_failed_or_interrupted(runs: Path) -> None:
    run = Run(runs / "plain")
    events = lambda: recorded(run.events_path)  # noqa: E731
    view = lambda: RunView().fold(read_run(run.events_path).events)  # noqa: E731
    assert run_state(run, view()) == "finished"
    lock = RunLock(run.root)
    lock.acquire()
    try:
        assert run_state(run, view()) == "running"
    finally:
        lock.release()
    sink = JsonlSink(run.events_path)
    sink(RunFinished(status="stopped", reason="spend $1.00 reached --max-cost $1.00"))
    sink.close()
    assert run_state(run, view()) == "stopped: spend $1.00 reached --max-cost $1.00"
    sink = JsonlSink(run.events_path)
    sink(RunFinished(status="failed", reason="every work failed"))
    sink.close()
    assert run_state(run, view()) == "failed: every work failed"
    # A session that started and never finished was killed: its run_started is the last word.
    started = next(e for e in events() if e["kind"] == "run_started")
    with open(run.events_path, "a", encoding="utf-8") as f:
        import json

        f.write(json.dumps({**started, "time": utc_now()}) + "\n")  # a new session, not a copy of the line
    assert run_state(run, view()) == "interrupted"


def test_runs_prints_one_row_per_run(runs: Path, capsys) -> None:
    assert main(["runs", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    assert "reviewed" in out and "plain" in out and "not-a-run" not in out
    row = next(line for line in out.splitlines() if "reviewed" in line)
    assert "finished" in row and "brass-key, salt-road" in row


def test_runs_in_a_narrow_terminal_prints_a_block_per_run(runs: Path) -> None:
    from rich.console import Console

    from skilltui.runs.overview import print_runs

    console = Console(width=60, record=True)
    print_runs(runs, console)
    text = console.export_text()
    assert "reviewed  finished" in text
    status = {s.id: s for s in list_runs(runs)}["reviewed"]
    assert "1 rerun, 1 rolled back" in runs_line(status)


def test_runs_a_little_too_narrow_for_the_table_cuts_no_column(make_work, tmp_path: Path) -> None:
    """Squeezed, Rich cut the table's last columns (cost, est., state) off a terminal of 120 or 140."""
    from rich.console import Console

    from skilltui.runs.overview import print_runs

    runs = tmp_path / "runs"
    works = [a for name in ("kestrel", "harbour") for a in ("--work", str(make_work(name, 2)))]
    argv = ["train", "--auto", "--runs-dir", str(runs), "--run-id", "r", "--steps", "1", *works]
    assert main([*argv, "--test-work", str(make_work("sable", 2))]) == 0  # a test Δ widens the table
    [status] = list_runs(runs)
    delta = status.test_delta.split()[0]
    for width in (112, 120, 130, 140, 200):
        console = Console(width=width, record=True)
        print_runs(runs, console)
        text = console.export_text()
        assert "finished" in text and "$0.00" in text and delta in text, (width, text)


def test_runs_without_a_runs_folder_says_what_to_do(tmp_path: Path, capsys) -> None:
    assert main(["runs", "--runs-dir", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no runs folder" in err and "--runs-dir" in err


def test_review_of_a_crossval_folder_names_its_folds(trained_run, tmp_path, capsys):
    import shutil

    run = trained_run("amber-quay")
    cv = tmp_path / "cv"
    for fold in ("fold1", "fold2"):
        shutil.copytree(run.root, cv / fold)
    (cv / "folds.json").write_text('{"folds": [["a"], ["b"]], "seed": 0}', encoding="utf-8")
    capsys.readouterr()
    for command in (["review", str(cv)], ["export", str(cv), "--to", str(tmp_path / "skill")]):
        assert main(command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"skilltui: error: {cv} is a crossval folder (folds.json): each fold is a run; "
                       f"name one: {cv / 'fold1'} (fold1, fold2)"]  # fmt: skip
