"""`--batch`: a step's judge calls and reduce calls go through the Message Batches API, at most once.

`skilltui train --batch --backend anthropic` against `tests/support/fakeapi.py`, whose batches
endpoints (`tests/support/fakebatches.py`) answer every request of a batch with the same fake
model that answers normal calls.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skilltui.agents import pricing
from skilltui.agents.base import Usage
from skilltui.cli import main
from tests.support.fakeapi import FakeAnthropic
from tests.support.fakemodel import KEY, FakeModel, role_of
from tests.support.recorded import recorded

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def server(server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    """The fake API (conftest.py), reached through the environment as the command line reaches it."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    return server


def argv(runs: Path, works: list[Path]) -> list[str]:
    args = [
        "train",
        "--auto",
        "--batch",
        "--backend",
        "anthropic",
        "--runs-dir",
        str(runs),
        "--run-id",
        "r",
        "--steps",
        "1",
        "--group-size",
        "0",
    ]
    for work in works:
        args += ["--work", str(work)]
    return args


def loss_requests(server: FakeAnthropic) -> list:
    return [r for r in server.messages_requests if role_of(r) == "loss"]


@pytest.mark.slow
def test_a_steps_judge_calls_go_in_one_batch_at_half_price(
    server: FakeAnthropic, make_work, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    works = [make_work("kestrel", 2), make_work("lantern", 2), make_work("marlin", 2)]
    server.script = FakeModel(tmp_path / "works")
    runs = tmp_path / "runs"
    assert main(argv(runs, works) + ["--workers", "1"]) == 0  # one worker: waiting for the batch holds no slot
    run = runs / "r"
    purposes = [json.loads(json.dumps(b.requests))[0]["custom_id"].split("-")[0] for b in server.batches.created]
    assert purposes == ["loss", "reduce"]  # one batch per step for the judges, one for the reduce
    assert len(server.batches.created[0].requests) == 3
    assert all(r.answer == "batch" for r in loss_requests(server))  # no judge was called on its own
    record = json.loads((run / "epoch0" / "step0" / "loss" / "batch.json").read_text())
    assert record["id"] == server.batches.created[0].id and sorted(record["ids"].values()) == [
        "kestrel",
        "lantern",
        "marlin",
    ]
    for name in ("kestrel", "lantern", "marlin"):
        assert "What went wrong" in (run / "epoch0" / "step0" / "loss" / f"{name}.md").read_text()
    events = recorded(run / "events.jsonl")
    states = [(e["purpose"], e["state"]) for e in events if e["kind"] == "batch"]
    assert states[0] == ("loss", "submitted") and ("loss", "ended") in states and ("reduce", "ended") in states
    for call in (e for e in events if e["kind"] == "call" and e["role"] == "loss"):
        usage = Usage(*(call[k] for k in ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")))
        assert call["cost_usd"] == pytest.approx(pricing.cost_usd(call["model"], usage) / 2)
    assert "[batch] loss e0 s0 msgbatch_" in capsys.readouterr().out


@pytest.mark.slow
def test_errored_and_expired_results_fall_back_to_normal_calls(
    server: FakeAnthropic, make_work, tmp_path: Path
) -> None:
    works = [make_work("kestrel", 2), make_work("lantern", 2), make_work("marlin", 2)]
    server.script = FakeModel(tmp_path / "works")
    outcomes = {"loss-0": "errored", "loss-1": "expired"}
    server.batches.outcome = lambda custom_id, recorded: outcomes.get(custom_id, "succeeded")
    runs = tmp_path / "runs"
    assert main(argv(runs, works)) == 0
    judged = loss_requests(server)
    # The errored and the expired request each become one normal call.
    assert sorted(r.answer for r in judged) == ["Reply", "Reply", "batch", "batch errored", "batch expired"]
    for name in ("kestrel", "lantern", "marlin"):
        assert (runs / "r" / "epoch0" / "step0" / "loss" / f"{name}.md").exists()
    ended = [e for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "batch" and e["state"] == "ended"]
    assert (ended[0]["errored"], ended[0]["expired"], ended[0]["succeeded"]) == (1, 1, 1)
    assert len(server.batches.created) == 2


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_killed_run_resumes_polling_the_same_batch_and_never_submits_twice(
    server: FakeAnthropic, make_work, tmp_path: Path
) -> None:
    works = [make_work("kestrel", 2), make_work("lantern", 2)]
    server.script = FakeModel(tmp_path / "works")
    server.batches.polls_to_end = 10**6  # the batch stays in progress until the run is killed
    runs = tmp_path / "runs"
    record = runs / "r" / "epoch0" / "step0" / "loss" / "batch.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "skilltui", *argv(runs, works)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (record.exists() and json.loads(record.read_text()).get("id")):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never recorded its batch"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert len(server.batches.created) == 1
    first_id = server.batches.created[0].id
    assert not (runs / "r" / "epoch0" / "step0" / "loss" / "kestrel.md").exists()

    server.batches.polls_to_end = 0
    assert main(argv(runs, works)) == 0
    loss_batches = [b for b in server.batches.created if b.requests[0]["custom_id"].startswith("loss")]
    assert [b.id for b in loss_batches] == [first_id]  # polled again, not submitted again
    assert json.loads(record.read_text())["id"] == first_id
    for name in ("kestrel", "lantern"):
        assert (runs / "r" / "epoch0" / "step0" / "loss" / f"{name}.md").exists()
    states = [
        e["state"] for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "batch" and e["purpose"] == "loss"
    ]
    assert "resumed" in states
    assert [r.answer for r in loss_requests(server)] == ["batch", "batch"]  # no judge paid twice


def test_batch_needs_the_anthropic_backend(make_work, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code = main(
        [
            "train",
            "--auto",
            "--batch",
            "--backend",
            "offline",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--work",
            str(make_work("kestrel", 2)),
        ]
    )
    assert code == 2 and "--batch needs --backend anthropic" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


async def test_a_run_killed_during_the_submit_never_submits_again(tmp_path: Path) -> None:
    """The record is written before the submit; without an id, a resumed run makes normal calls."""
    from skilltui.agents.base import CallResult, Request
    from skilltui.engine.stages.batching import BatchJob, StepBatch
    from skilltui.model import events as ev
    from skilltui.model.at import At
    from skilltui.model.bus import EventBus

    class NoSubmit:
        async def submit(self, items):  # pragma: no cover - failing is the point
            raise AssertionError("a second batch was submitted")

    class Backend:
        calls: list[str] = []

        async def text(self, request: Request) -> CallResult:
            self.calls.append(request.prompt)
            return CallResult(text=f"report for {request.prompt}")

    record = tmp_path / "batch.json"
    record.write_text(json.dumps({"id": None, "ids": {"loss-0": "kestrel", "loss-1": "lantern"}}))
    seen: list = []
    bus = EventBus()
    bus.subscribe(seen.append)
    backend = Backend()
    job = BatchJob("loss", At(0, 0), record, frozenset({"kestrel", "lantern"}))
    batch = StepBatch(NoSubmit(), backend, bus, job)
    import asyncio

    results = await asyncio.gather(
        batch.text("kestrel", Request(role="loss", prompt="kestrel")),
        batch.text("lantern", Request(role="loss", prompt="lantern")),
    )
    assert [r.text for r in results] == ["report for kestrel", "report for lantern"]
    assert sorted(backend.calls) == ["kestrel", "lantern"]
    assert any(isinstance(e, ev.Warning_) and "never saved" in e.message for e in seen)


def test_the_app_shows_the_batch_state() -> None:
    from skilltui.model import events as ev
    from skilltui.model.notices import notice_of
    from skilltui.model.view import RunView

    view = RunView.of("r", Path("runs/r"), ["a"])
    pending = ev.BatchState(epoch=0, step=1, purpose="loss", batch_id="msgbatch_1", state="in_progress", processing=3)
    view.apply(pending)
    assert view.batch == "loss e0 s1 msgbatch_1 in_progress: 3 processing"
    assert notice_of(pending).message == "batch loss e0 s1 msgbatch_1 in_progress: 3 processing"
    view.apply(ev.BatchState(epoch=0, step=1, purpose="loss", batch_id="msgbatch_1", state="ended", succeeded=3))
    assert view.batch == ""


@pytest.mark.slow
def test_a_batch_the_api_refuses_becomes_normal_calls(server: FakeAnthropic, make_work, tmp_path: Path) -> None:
    works = [make_work("kestrel", 2), make_work("lantern", 2)]
    server.script = FakeModel(tmp_path / "works")
    server.batches.create_status = 500
    runs = tmp_path / "runs"
    assert main(argv(runs, works)) == 0
    assert server.batches.created == []
    assert sorted(r.answer for r in loss_requests(server)) == ["Reply", "Reply"]
    warnings = [e["message"] for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "warning"]
    assert any("could not be submitted" in w for w in warnings)
