"""API faults through the real `anthropic` SDK against the fake server: each is retried,
capped, and paid for, and a work whose calls keep failing costs only that work.

Every test drives HTTP on 127.0.0.1 (`tests/support/fakeapi.py`); nothing is mocked in between.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest

from skilltui.agents import pricing
from skilltui.agents.anthropic_backend import AnthropicBackend
from skilltui.agents.base import BackendError, Connection, FatalBackendError, Request, Usage
from skilltui.agents.tools import Sandbox
from skilltui.apps.train.output_feed import OutputFeed
from skilltui.cli import main
from skilltui.model.parse import read_run
from skilltui.model.view import RunView
from tests.support.fakeapi import Cut, Error, FakeAnthropic, Recorded, Reply, text, tool_use
from tests.support.recorded import recorded

KEY = "sk-ant-test-XXXX-faults-0123456789ab"
EDITOR = "str_replace_based_edit_tool"
USAGE = {"input_tokens": 1000, "output_tokens": 200, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def backend(server: FakeAnthropic, **kwargs) -> AnthropicBackend:
    kwargs.setdefault("backoff_base", 0.01)
    kwargs.setdefault("backoff_cap", 0.05)
    link = {name: kwargs.pop(name) for name in ("max_retries", "timeout") if name in kwargs}
    return AnthropicBackend(None, Connection(KEY, server.base_url, **link), **kwargs)


def priced(input_tokens: int, output_tokens: int) -> float:
    return pricing.cost_usd("claude-sonnet-5-5", Usage(input_tokens, output_tokens, 0, 0))


async def test_a_stream_cut_inside_a_tool_call_is_retried_the_tool_runs_once_and_the_cut_is_paid_for(
    server: FakeAnthropic, tmp_path: Path
) -> None:
    out = tmp_path / "scripts"
    out.mkdir()
    create = tool_use(EDITOR, {"command": "create", "path": str(out / "01.fountain"), "file_text": "INT. ROOM - DAY\n"})
    turn = Reply([text("Writing it."), create], usage=USAGE)
    # message_start, ping, the text block (start, 2 deltas, stop), then the tool block's start and
    # one piece of its JSON: the connection closes in the middle of the tool call's input.
    server.script = [Cut(turn, events=8), turn, Reply([text("Done.")], usage=USAGE)]
    sandbox = Sandbox(read_roots=[out], write_roots=[out])
    result = await backend(server).agent(Request(role="forward", prompt="Write episode 1."), sandbox)
    assert result.text == "Done."
    assert (out / "01.fountain").read_text() == "INT. ROOM - DAY\n"
    assert [e["name"] for e in result.transcript if e["event"] == "tool"] == [EDITOR]  # not run from half a call
    # The cut request reported 1000 input tokens in its message_start: they count.
    assert result.usage.input_tokens == 3 * 1000
    assert result.usage.output_tokens == 2 * 200 + 1
    assert result.cost_usd == pytest.approx(2 * priced(1000, 200) + priced(1000, 1))
    partial = [e for e in result.transcript if e["event"] == "partial_usage"]
    assert len(partial) == 1 and partial[0]["usage"]["input_tokens"] == 1000


async def test_a_cut_stream_that_never_recovers_reports_what_it_cost(server: FakeAnthropic) -> None:
    turn = Reply([text("The story begins and then")], usage=USAGE)
    server.script = [Cut(turn, events=4)] * 3
    with pytest.raises(BackendError) as info:
        await backend(server, max_retries=2).text(Request(role="loss", prompt="x"))
    assert not isinstance(info.value, FatalBackendError)
    assert "gave up after 3 attempts" in str(info.value)
    assert info.value.partial.usage.input_tokens == 3 * 1000
    assert info.value.partial.cost_usd == pytest.approx(3 * priced(1000, 1))


async def test_a_read_timeout_is_retried(server: FakeAnthropic) -> None:
    server.script = [Reply([text("late")], delay=1.5), Reply([text("on time")])]
    result = await backend(server, timeout=0.3).text(Request(role="loss", prompt="x"))
    assert result.text == "on time"
    retries = [e for e in result.transcript if e["event"] == "retry"]
    assert len(retries) == 1 and "Timeout" in retries[0]["error"]


async def test_a_500_is_retried(server: FakeAnthropic) -> None:
    server.script = [Error(500, message="internal"), Reply([text("fine")])]
    result = await backend(server).text(Request(role="loss", prompt="x"))
    assert result.text == "fine" and len(server.messages_requests) == 2


async def test_a_storm_of_529_gives_up_at_the_retry_cap(server: FakeAnthropic) -> None:
    server.script = [Error(529)] * 50
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        await backend(server, max_retries=4).text(Request(role="loss", prompt="x"))
    assert len(server.messages_requests) == 5  # the first try and four retries, then no more
    assert "overloaded_error" in str(info.value) and "gave up after 5 attempts" in str(info.value)
    assert time.monotonic() - started < 5
    server.script = []


async def test_429_waits_as_long_as_retry_after_says(server: FakeAnthropic) -> None:
    server.script = [Error(429, retry_after=0.5), Reply([text("ok")])]
    result = await backend(server).text(Request(role="loss", prompt="x"))
    first, second = (r.time for r in server.messages_requests)
    assert result.text == "ok" and second - first >= 0.5


async def test_retries_are_capped_in_time_too(server: FakeAnthropic) -> None:
    server.script = [Error(429, retry_after=30)]
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        await backend(server, max_retry_wait=5).text(Request(role="loss", prompt="x"))
    assert time.monotonic() - started < 3  # not waited out
    assert "rather than wait 30s" in str(info.value)
    assert len(server.messages_requests) == 1


async def test_slow_failures_count_against_the_retry_budget_as_the_openai_backend_counts_them(
    server: FakeAnthropic,
) -> None:
    def slow(recorded: Recorded) -> Error:
        time.sleep(0.3)  # a gateway that answers 502 after a while, every time
        return Error(502, message="upstream timed out")

    server.script = slow
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        await backend(server, max_retries=100, max_retry_wait=1.0).text(Request(role="loss", prompt="x", timeout=60))
    assert time.monotonic() - started < 2.5 and len(server.messages_requests) <= 4
    assert "\n" not in str(info.value) and "rather than wait" in str(info.value)
    assert str(info.value).endswith("the server keeps failing: check it, then run the same command again to resume")
    server.script = []


def test_a_work_whose_calls_keep_failing_fails_alone_with_its_reason_in_runs(
    make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    works = [make_work("steady", 2), make_work("broken", 2)]

    def answer(r: Recorded):
        if "broken" in r.all_text:
            return Error(500, message="the fake server keeps failing")
        return scripted(r)

    with FakeAnthropic(answer) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setattr(AnthropicBackend, "__init__", _fast_retries(AnthropicBackend.__init__))
        argv = [
            "train",
            "--auto",
            "--backend",
            "anthropic",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-id",
            "r",
            "--steps",
            "1",
            "--group-size",
            "1",
        ]
        for work in works:
            argv += ["--work", str(work)]
        assert main(argv) == 0
    events = recorded(tmp_path / "runs" / "r" / "events.jsonl")
    failed = [e for e in events if e["kind"] == "stage" and e["status"] == "failed"]
    assert [(e["stage"], e["work"]) for e in failed] == [("forward", "broken")]
    assert "500" in failed[0]["error"] and "gave up after" in failed[0]["error"]
    assert [e["work"] for e in events if e["kind"] == "loss"] == ["steady"]
    assert events[-1]["kind"] == "run_finished" and events[-1]["status"] == "finished"
    # The app's run model (the fold every pane reads) shows the same reason on the work.
    view = RunView.of("r", tmp_path / "runs" / "r", ["broken", "steady"])
    feed = OutputFeed(view)
    for e in read_run(tmp_path / "runs" / "r" / "events.jsonl").events:
        view.apply(e)
        feed.feed(e)
    assert view.works["broken"].stage == "failed" and "500" in (view.works["broken"].error or "")
    assert "forward failed: the API answered 500" in feed.buffer("broken").text()
    assert view.works["steady"].stage != "failed"
    capsys.readouterr()
    assert main(["runs", "--runs-dir", str(tmp_path / "runs")]) == 0
    shown = capsys.readouterr().out
    assert "broken failed at epoch 0 step 0 forward: the API answered 500" in " ".join(shown.split())


def _fast_retries(init):
    def wrapped(self, model=None, connection=None, **kwargs):
        connection = dataclasses.replace(connection or Connection(), max_retries=2)
        init(self, model, connection, **{**kwargs, "backoff_base": 0.01, "backoff_cap": 0.02})

    return wrapped


def scripted(r: Recorded) -> Reply:
    """A minimal model for the healthy work: writes its episodes, judges, edits a note, commits."""
    system = json.dumps(r.body.get("system", ""))
    turns = sum(1 for m in r.body.get("messages", []) if m.get("role") == "assistant")
    prompt = r.body["messages"][0]["content"]
    prompt = prompt if isinstance(prompt, str) else " ".join(b.get("text", "") for b in prompt)
    if "You are the forward agent" in system:
        if turns == 0:
            import re

            first, last = map(int, re.search(r"# Write episodes (\d+) to (\d+)", prompt).groups())
            scripts = re.search(r"Write each episode to `([^`]+)/NN\.fountain`", prompt).group(1)
            return Reply(
                [
                    tool_use(
                        EDITOR,
                        {
                            "command": "create",
                            "path": f"{scripts}/{n:02d}.fountain",
                            "file_text": "INT. ROOM - DAY\n\nADA\nHello.\n",
                        },
                    )
                    for n in range(first, last + 1)
                ]
            )
        return Reply([text("Written.")])
    if "You are the backward agent" in system:
        if turns == 0:
            return Reply([tool_use("commit", {"message": "Nothing worth changing yet."})])
        return Reply([text("Committed.")])
    return Reply([text("## What went wrong\n\nLittle.")])


def test_diffuse_prints_and_records_its_tokens_and_cost_as_train_does(
    make_work, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    work = make_work("tally-marsh", 3, story=False)
    with FakeAnthropic(lambda r: Reply([text("She walks in and says she is late.")], usage=USAGE)) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        assert main(["diffuse", "--work", str(work), "--backend", "anthropic"]) == 0
    calls = [e for e in recorded(work / "diffuse.jsonl") if e["kind"] == "call"]
    assert len(calls) == 3 and all(e["role"] == "diffuse" and e["input_tokens"] == 1000 for e in calls)
    assert sum(e["cost_usd"] for e in calls) == pytest.approx(3 * priced(1000, 200))
    err = capsys.readouterr().err
    assert f"diffuse: 3 calls, {3 * 1200:,} tokens, cost ${3 * priced(1000, 200):.4f}" in err


def test_a_failed_diffuse_still_counts_what_its_calls_cost(make_work, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    work = make_work("tally-fen", 2, story=False)
    script = [Reply([text("Told.")], usage=USAGE), Error(400, message="no")]
    with FakeAnthropic(script) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        assert main(["diffuse", "--work", str(work), "--backend", "anthropic"]) == 1
    assert not (work / "story.md").exists()
    err = capsys.readouterr().err
    assert "diffuse failed" in err and "story.md is unchanged (2 calls" in err
    assert len([e for e in recorded(work / "diffuse.jsonl") if e["kind"] == "call"]) == 2
