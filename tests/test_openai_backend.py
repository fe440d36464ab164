"""The `openai` backend through the real `openai` SDK against the fake chat-completions server.

Streaming with tool calls, usage and price (cached tokens at the cached rate, a provider's
own cost, no price for a local model), retries on 429 / 5xx / dropped and cut streams, the
throttle, fatal errors in one line, the key kept out of every record, and the preflight
that refuses a model without tool support or a server that refuses. Every test drives HTTP
on 127.0.0.1 (`tests/support/fakeopenai.py`); nothing is mocked in between.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai", reason="the openai extra is not installed (pip install -e '.[openai]')")

from skilltui.agents import pricing  # noqa: E402
from skilltui.agents.base import BackendError, Connection, FatalBackendError, Request, Usage  # noqa: E402
from skilltui.agents.openai_backend import OpenAIBackend  # noqa: E402
from skilltui.agents.tools import Sandbox  # noqa: E402
from skilltui.core.errors import UsageError  # noqa: E402
from tests.support.fakeopenai import Cut, Drop, Error, FakeOpenAI, Garbled, Reply, call  # noqa: E402

KEY = "sk-proj-test-0123456789abcdefABCDEF-backend"
MODEL = "gpt-4.1-mini"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(key=KEY) as server:
        yield server
    assert server.failures == [], server.failures


def backend(server: FakeOpenAI, model: str = MODEL, **kwargs) -> OpenAIBackend:
    kwargs.setdefault("backoff_base", 0.01)
    kwargs.setdefault("backoff_cap", 0.05)
    link = {name: kwargs.pop(name) for name in ("max_retries", "timeout") if name in kwargs}
    return OpenAIBackend(model, Connection(KEY, server.base_url, **link), **kwargs)


def writer_sandbox(roots: dict[str, Path]) -> Sandbox:
    return Sandbox(
        read_roots=[roots["pool"], roots["work"]],
        write_roots=[roots["scripts"]],
        denied=[roots["work"] / "human"],
        traced=roots["pool"],
    )


def responses(result) -> list[dict]:
    return [e for e in result.transcript if e["event"] == "response"]


async def test_text_streams_deltas_and_prices_the_usage(fake: FakeOpenAI) -> None:
    fake.script = [Reply("The writer flattened the dialogue into action.")]
    deltas: list[str] = []
    judge = Request(role="loss", prompt="Judge.", system="You judge.", on_delta=deltas.append)
    result = await backend(fake).text(judge)
    assert result.text == "The writer flattened the dialogue into action."
    assert len(deltas) > 1 and "".join(deltas) == result.text
    body = fake.chat_requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert [m["role"] for m in body["messages"]] == ["system", "user"] and "tools" not in body
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.cost_usd == pytest.approx(pricing.cost_usd(MODEL, result.usage))
    assert result.model == MODEL


async def test_cached_tokens_are_counted_as_cache_reads_at_the_cached_rate(fake: FakeOpenAI) -> None:
    fake.script = [Reply("one"), Reply("two")]
    shared = "The pool's notes, word for word. " * 60
    first = await backend(fake).text(Request(role="loss", prompt="A", lead=shared))
    second = await backend(fake).text(Request(role="loss", prompt="B", lead=shared))
    assert first.usage.cache_read_tokens == 0
    assert second.usage.cache_read_tokens > 400
    sent = fake.chat_requests[1]
    prompt_tokens = max(1, (len(json.dumps(sent.messages)) + 2) // 4)
    assert second.usage.input_tokens + second.usage.cache_read_tokens == prompt_tokens
    rates = pricing.price_for(MODEL).rates
    expected = (
        second.usage.input_tokens * rates.input
        + second.usage.cache_read_tokens * rates.cache_read
        + second.usage.output_tokens * rates.output
    ) / 1_000_000
    assert second.cost_usd == pytest.approx(expected)
    assert second.cost_usd < first.cost_usd


async def test_a_local_model_has_tokens_and_no_price_and_a_reported_cost_wins(fake: FakeOpenAI) -> None:
    fake.script = [Reply("hi")]
    local = await backend(fake, "llama3:8b").text(Request(role="loss", prompt="x"))
    assert local.usage.total > 0 and local.cost_usd is None
    fake.report_cost = 0.00042  # OpenRouter reports what it billed
    fake.script = [Reply("hi")]
    routed = await backend(fake, "meta-llama/llama-3-70b-instruct").text(Request(role="loss", prompt="x"))
    assert routed.cost_usd == pytest.approx(0.00042)


async def test_a_server_that_reports_no_usage_leaves_the_call_without_a_price(fake: FakeOpenAI) -> None:
    fake.report_usage = False
    fake.script = [Reply("hi")]
    result = await backend(fake).text(Request(role="loss", prompt="x"))
    assert result.text == "hi" and result.cost_usd is None and result.usage.total == 0
    assert [e["usage_reported"] for e in responses(result)] == [False]


def test_every_openai_price_is_a_full_row_and_dated_snapshots_are_not_guessed() -> None:
    assert pricing.price_for("gpt-4o-2024-05-13") is None  # twice gpt-4o's price: not listed, not guessed
    assert pricing.price_for("openai/gpt-4o") is None
    assert pricing.price_for("llama3") is None
    for name, price in pricing.OPENAI_PRICES.items():
        r = price.rates
        assert 0 < r.cache_read <= r.input < r.output, name
        assert r.cache_write_5m == r.cache_write_1h == r.input, name


async def test_agent_works_with_the_file_tools_in_the_sandbox(fake: FakeOpenAI, roots: dict[str, Path]) -> None:
    episode = roots["scripts"] / "01.fountain"
    note = str(roots["pool"] / "dialogue" / "subtext.md")
    fake.script = [
        Reply("Reading.", [call("view", {"path": note}), call("view", {"path": str(roots["work"] / "human")})]),
        Reply("", [call("create", {"path": str(episode), "file_text": "INT. ROOM - DAY\n\nQuiet.\n"})]),
        Reply(
            "",
            [
                call("str_replace", {"path": str(episode), "old_str": "Quiet.", "new_str": "Silence."}),
                call("insert", {"path": str(episode), "insert_line": 0, "insert_text": "Title: One"}),
                call("commit", {"message": "not mine to make"}),
            ],
        ),
        Reply("Episode 1 written."),
    ]
    seen: list[tuple] = []
    sandbox = writer_sandbox(roots)
    result = await backend(fake).agent(
        Request(role="forward", prompt="Write episode 1.", system="You write.", on_tool=lambda *a: seen.append(a)),
        sandbox,
    )
    assert episode.read_text() == "Title: One\nINT. ROOM - DAY\n\nSilence.\n"
    assert result.text == "Episode 1 written." and result.turns == 4
    assert sandbox.reads == ["dialogue/subtext.md"]
    assert [(t[0], t[2] is None) for t in seen] == [
        ("view", True),
        ("view", False),
        ("create", True),
        ("str_replace", True),
        ("insert", True),
        ("commit", False),
    ]
    requests = fake.chat_requests
    assert requests[0].tool_names == ["view", "create", "str_replace", "insert", "delete_file"]
    refused = requests[1].tool_results()
    assert "off-limits" in refused[1]
    assert requests[1].messages[2]["tool_calls"][0]["function"]["name"] == "view"  # the turn went back as it came
    total = Usage()
    for entry in responses(result):
        total.add(Usage(**{k: entry["usage"][k] for k in ("input_tokens", "output_tokens", "cache_read_tokens")}))
    assert total == result.usage
    assert result.cost_usd == pytest.approx(sum(e["cost_usd"] for e in responses(result)))


async def test_a_tool_call_cut_off_at_the_output_limit_is_not_run(fake: FakeOpenAI, roots: dict[str, Path]) -> None:
    episode = roots["scripts"] / "01.fountain"
    fake.script = [
        Reply("", [call("create", {"path": str(episode), "file_text": "half"})], finish_reason="length"),
        Reply("Stopped."),
    ]
    result = await backend(fake).agent(Request(role="forward", prompt="Write."), writer_sandbox(roots))
    assert not episode.exists() and result.text == "Stopped."
    assert "cut off" in fake.chat_requests[1].tool_results()[0]


async def test_429_5xx_drops_cut_streams_and_stream_errors_are_retried(
    fake: FakeOpenAI, roots: dict[str, Path]
) -> None:
    episode = roots["scripts"] / "01.fountain"
    create = Reply("", [call("create", {"path": str(episode), "file_text": "INT. ROOM - DAY\n"})])
    fake.script = [
        Error(429, "slow down", retry_after=0),
        Error(503, "overloaded"),
        Drop(),
        Cut(create, 4),  # cut inside the tool call's arguments
        Error(500, "boom", mid_stream=True),
        create,
        Reply("Done."),
    ]
    b = backend(fake)
    result = await b.agent(Request(role="forward", prompt="Write."), writer_sandbox(roots))
    assert result.text == "Done." and episode.read_text() == "INT. ROOM - DAY\n"
    retries = [e for e in result.transcript if e["event"] == "retry"]
    assert len(retries) == 5
    assert [e["event"] for e in result.transcript].count("tool") == 1  # the cut call never ran
    assert b.throttle.throttled  # the 429 lowered the calls in flight


async def test_a_garbled_stream_is_retried_and_said_in_plain_words(fake: FakeOpenAI) -> None:
    misshapen = '{"choices": [{"delta": "not an object"}]}'  # JSON, but no chunk
    fake.script = [Garbled(Reply("The judge")), Garbled(Reply("The"), data=misshapen), Reply("The judge's report.")]
    result = await backend(fake).text(Request(role="loss", prompt="x"))
    assert result.text == "The judge's report." and len(fake.chat_requests) == 3
    assert [e["error"] for e in result.transcript if e["event"] == "retry"] == [
        "the server sent a garbled stream (a chunk that is not JSON)",
        "the server sent a garbled stream (a chunk that is not shaped as a chat-completions chunk)",
    ]
    # Given up on, it fails the call as a transient fault does, in the same words.
    fake.script = [Garbled(Reply("x"))] * 3
    with pytest.raises(BackendError) as info:
        await backend(fake, max_retries=2).text(Request(role="loss", prompt="x"))
    assert str(info.value).startswith("the server sent a garbled stream (a chunk that is not JSON); gave up after 3")
    assert "JSONDecodeError" not in str(info.value) and "Expecting" not in str(info.value)


async def test_retry_after_is_waited_out(fake: FakeOpenAI) -> None:
    fake.script = [Error(429, "slow down", retry_after=0.4), Reply("ok")]
    b = backend(fake)
    b.throttle.hold = 0
    started = time.monotonic()
    result = await b.text(Request(role="loss", prompt="x"))
    assert result.text == "ok" and time.monotonic() - started >= 0.4
    assert [e["wait_seconds"] for e in result.transcript if e["event"] == "retry"] == [0.4]


async def test_retries_give_up_at_the_cap_with_what_the_call_cost(fake: FakeOpenAI) -> None:
    fake.script = [Error(500, "down")] * 3
    with pytest.raises(BackendError) as info:
        await backend(fake, max_retries=2).text(Request(role="loss", prompt="x"))
    assert "gave up after 3 attempts" in str(info.value) and not isinstance(info.value, FatalBackendError)
    assert info.value.partial is not None


async def test_a_server_that_answers_500_forever_is_given_up_on_with_what_to_do(fake: FakeOpenAI) -> None:
    # Quick 500s: the default bound, 6 retries (Connection.max_retries), then one line.
    fake.script = lambda recorded: Error(500, "internal")
    with pytest.raises(BackendError) as info:
        await backend(fake).text(Request(role="loss", prompt="x"))
    assert len(fake.chat_requests) == 7 and "\n" not in str(info.value)
    assert str(info.value) == (
        "the server answered 500: internal; gave up after 7 attempts: "
        "the server keeps failing: check it, then run the same command again to resume"
    )

    # Slow 500s (a gateway that gives up upstream after minutes, each time): their time counts
    # against the retry budget with the waits, so the call ends within it, not at the role's timeout.
    def slow(recorded) -> Error:
        time.sleep(0.3)
        return Error(502, "upstream timed out")

    fake.script = slow
    fake.requests.clear()
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        await backend(fake, max_retries=100, max_retry_wait=1.0).text(Request(role="loss", prompt="x", timeout=60))
    assert time.monotonic() - started < 2.5 and len(fake.chat_requests) <= 4
    assert "rather than wait" in str(info.value) and str(info.value).endswith("run the same command again to resume")


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (Error(401, "Incorrect API key provided"), "rejected the key (401): check OPENAI_API_KEY"),
        (Error(404, "The model `gpt-9` does not exist"), "does not know model"),
        (Error(429, "You exceeded your current quota", code="insufficient_quota"), "billing"),
        (Error(400, "llama2 does not support tools"), "cannot call tools"),
    ],
)
async def test_fatal_answers_stop_at_once_in_one_line(fake: FakeOpenAI, answer: Error, words: str) -> None:
    fake.script = [answer]
    with pytest.raises(FatalBackendError) as info:
        await backend(fake).text(Request(role="loss", prompt="x"))
    assert words in str(info.value) and "\n" not in str(info.value)
    assert len(fake.chat_requests) == 1


async def test_the_key_never_reaches_transcripts_errors_or_text(fake: FakeOpenAI, roots: dict[str, Path]) -> None:
    fake.script = [Error(500, f"upstream echoed {KEY}"), Reply(f"here is a key {KEY}")]
    result = await backend(fake).text(Request(role="loss", prompt="x"))
    dumped = json.dumps(result.transcript)
    assert KEY not in dumped and KEY not in result.text and "[REDACTED]" in result.text
    fake.script = [Error(400, f"bad key {KEY}")]
    with pytest.raises(BackendError) as info:
        await backend(fake).text(Request(role="loss", prompt="x"))
    assert KEY not in str(info.value) and KEY not in json.dumps(info.value.partial.transcript)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_no_key_and_no_base_url_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        OpenAIBackend()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # a server of one's own needs no key
    assert OpenAIBackend().base_url == "http://127.0.0.1:9/v1"


def test_preflight_refuses_a_model_without_tools_and_one_that_ignores_them(fake: FakeOpenAI) -> None:
    fake.script = [Reply("", [call("ready", {})]), Reply("ready")]
    lines = backend(fake).preflight({"forward": MODEL, "loss": "gpt-4.1-nano"})
    assert len(lines) == 2 and "with tool calls" in lines[0] and "$" in lines[0]  # gpt-4.1-mini, the writer's
    assert "tool" not in lines[1]
    assert fake.chat_requests[0].tool_names == ["ready"] and not fake.chat_requests[1].tool_names

    fake.script = [Reply("I am ready!")]  # answers, but never calls the tool
    with pytest.raises(UsageError, match="answered without calling the tool"):
        backend(fake).preflight({"forward": "tiny-local"})

    fake.tools_supported = False
    with pytest.raises(UsageError, match="cannot call tools .* choose a model with tool support"):
        backend(fake).preflight({"backward": "gemma:2b"})


def test_preflight_says_at_once_that_a_server_refuses() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    b = OpenAIBackend("llama3", Connection(None, f"http://127.0.0.1:{port}/v1"))
    started = time.monotonic()
    with pytest.raises(UsageError, match="connection failed") as info:
        b.preflight({"forward": "llama3"})
    assert time.monotonic() - started < 10 and "\n" not in str(info.value)


def test_train_knows_the_default_model_without_the_extra_and_it_is_priced() -> None:
    from skilltui.agents import openai_backend
    from skilltui.commands.training import default_model

    assert default_model("openai") == openai_backend.DEFAULT_MODEL
    assert pricing.price_for(openai_backend.DEFAULT_MODEL) is not None


def test_openai_rate_limit_headers_say_how_long_to_wait() -> None:
    from skilltui.agents.throttle import wait_from_headers

    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"}
    assert wait_from_headers(headers) == (90.0, "requests limit")
    headers = {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "250ms"}
    assert wait_from_headers(headers) == (0.25, "tokens limit")
    assert wait_from_headers({"x-ratelimit-remaining-tokens": "5", "x-ratelimit-reset-tokens": "9s"})[0] == 10.0
    assert wait_from_headers({"retry-after": "2", "x-ratelimit-remaining-tokens": "0"}) == (2.0, "retry-after")


def test_without_the_extra_the_backend_is_one_line_saying_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, make_work, tmp_path: Path
) -> None:
    import sys

    from skilltui.cli import main

    monkeypatch.setitem(sys.modules, "openai", None)  # what an install without the extra imports
    monkeypatch.delitem(sys.modules, "skilltui.agents.openai_backend", raising=False)
    monkeypatch.delitem(sys.modules, "skilltui.agents.openai_requests", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    work = make_work("cedar", 2)
    runs = tmp_path / "runs"
    assert main(["train", "--auto", "--backend", "openai", "--work", str(work), "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err.strip()
    assert "pip install 'skilltui[openai]'" in err and len(err.splitlines()) == 1 and not runs.exists()
