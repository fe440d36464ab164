"""Per-role timeouts: each role's calls are bounded by its flag, and a call that runs out is kept with its cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.agents.base import CallResult, Request
from skilltui.agents.offline import OfflineBackend
from skilltui.cli import main
from skilltui.engine.update.review import AutoReviewer
from tests.support.fakeapi import FakeAnthropic, Recorded, Reply, text
from tests.support.fakemodel import KEY, FakeModel, assistant_turns, call, role_of
from tests.support.recorded import recorded
from tests.support.reviewing import train_once


class Bounds(OfflineBackend):
    """The offline backend, noting the timeout every request carried."""

    def __init__(self) -> None:
        super().__init__()
        self.timeouts: dict[str, set[float]] = {}

    def _note(self, request: Request) -> None:
        self.timeouts.setdefault(request.role, set()).add(request.timeout)

    async def text(self, request: Request) -> CallResult:
        self._note(request)
        return await super().text(request)

    async def agent(self, request: Request, sandbox) -> CallResult:
        self._note(request)
        return await super().agent(request, sandbox)


def test_each_role_is_bounded_by_its_own_timeout(tmp_path, make_work):
    works = [make_work("rook", 4), make_work("swift", 4)]
    backend = Bounds()
    _, outcome = train_once(
        tmp_path, works, backend, AutoReviewer(), steps=1, forward_timeout=11, loss_timeout=22, backward_timeout=33
    )
    assert outcome.status == "finished"
    assert backend.timeouts == {"forward": {11}, "loss": {22}, "reduce": {22}, "backward": {33}}


def test_the_seeds_defaults_and_bad_values(tmp_path, make_work, capsys):
    from skilltui.cli import build_parser
    from skilltui.commands.training import settings_from

    args = build_parser().parse_args(["train", "--work", "w"])
    settings = settings_from(args)
    assert (settings.forward_timeout, settings.loss_timeout, settings.backward_timeout) == (2400, 1800, 5400)
    assert (settings.backward_retries, settings.strict, settings.max_edit_lines) == (2, False, 80)
    work = make_work("tern", 2)
    for flag, value in (("--backward-timeout", "0"), ("--backward-retries", "-1"), ("--max-edit-lines", "0")):
        runs = tmp_path / f"runs{flag}"
        assert main(["train", "--auto", "--work", str(work), "--runs-dir", str(runs), flag, value]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and flag in err[0]
        assert not runs.exists()


def test_a_backward_call_that_times_out_is_kept_with_its_partial_transcript_and_cost(
    make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    works = [make_work("wren", 2)]
    writer = FakeModel(tmp_path / "works")

    def script(r: Recorded) -> Reply:
        if role_of(r) != "backward":
            return writer(r)
        if assistant_turns(r) == 0:
            return Reply([call(r, "view", path="scene")])
        return Reply([text("still thinking")], delay=3.0)  # past --backward-timeout

    with FakeAnthropic(script) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        runs = tmp_path / "runs"
        argv = ["train", "--auto", "--backend", "anthropic", "--runs-dir", str(runs), "--run-id", "r"]
        argv += ["--work", str(works[0]), "--steps", "1", "--backward-timeout", "1", "--backward-retries", "0"]
        assert main(argv) == 0
    run = runs / "r"
    events = recorded(run / "events.jsonl")
    record = json.loads((run / "epoch0" / "step0" / "backward" / "g1" / "attempt1" / "transcript.json").read_text())
    assert "took longer than 1s" in record["error"]
    responses = [e for e in record["transcript"] if e.get("event") == "response"]
    assert len(responses) == 1 and responses[0]["cost_usd"] > 0  # the turn before the timeout
    calls = [e for e in events if e["kind"] == "call" and e["role"] == "backward"]
    assert len(calls) == 1 and calls[0]["cost_usd"] == pytest.approx(responses[0]["cost_usd"])
    skipped = [e for e in events if e["kind"] == "micro_step_skipped"]
    assert len(skipped) == 1 and "took longer than 1s" in skipped[0]["reason"]
