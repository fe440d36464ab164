"""The `anthropic` backend against the fake Messages API: streaming, tools, caching, cost, retries, secrets.

Every test drives the real `anthropic` SDK over HTTP to `tests/support/fakeapi.py` on 127.0.0.1;
nothing reaches the network.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from skilltui.agents import pricing
from skilltui.agents.anthropic_backend import AnthropicBackend
from skilltui.agents.base import BackendError, Connection, FatalBackendError, Request, Usage
from skilltui.agents.redact import REDACTED, redact
from skilltui.agents.tools import Sandbox
from skilltui.core.errors import UsageError
from tests.support.fakeapi import Drop, Error, FakeAnthropic, Recorded, Reply, text, thinking, tool_use

KEY = "sk-ant-test-XXXX-0123456789abcdef"
EDITOR = "str_replace_based_edit_tool"


def backend(server: FakeAnthropic, **kwargs) -> AnthropicBackend:
    kwargs.setdefault("backoff_base", 0.01)
    kwargs.setdefault("backoff_cap", 0.05)
    link = {name: kwargs.pop(name) for name in ("max_retries", "timeout") if name in kwargs}
    return AnthropicBackend(kwargs.pop("model", None), Connection(KEY, server.base_url, **link), **kwargs)


def usage_of(answer: dict) -> Usage:
    return Usage(
        answer["input_tokens"],
        answer["output_tokens"],
        answer["cache_creation_input_tokens"],
        answer["cache_read_input_tokens"],
    )


def writer_sandbox(roots: dict[str, Path]) -> Sandbox:
    return Sandbox(
        read_roots=[roots["pool"], roots["work"]],
        write_roots=[roots["scripts"]],
        denied=[roots["work"] / "human"],
        traced=roots["pool"],
    )


# -- single text answers ---------------------------------------------------------------------


async def test_text_streams_deltas_and_returns_text_usage_and_cost(server: FakeAnthropic) -> None:
    answer = "INT. KITCHEN - NIGHT\n\nMara counts the spoons twice."
    server.script = [Reply([text(answer)])]
    deltas: list[str] = []
    result = await backend(server).text(
        Request(role="diffuse", prompt="Retell it.", system="You retell.", on_delta=deltas.append)
    )
    assert result.text == answer
    assert len(deltas) > 1 and "".join(deltas) == answer
    sent = server.messages_requests[0]
    assert sent.body["stream"] is True
    assert sent.body["model"] == "claude-sonnet-5-5"
    assert sent.api_key == KEY
    # Far under the model's minimum cacheable length: a mark would cache nothing.
    assert sent.body["system"] == [{"type": "text", "text": "You retell."}]
    assert "tools" not in sent.body
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.cost_usd == pytest.approx(pricing.cost_usd("claude-sonnet-5-5", result.usage))
    assert result.model == "claude-sonnet-5-5" and result.turns == 1


async def test_request_model_overrides_the_backend_default(server: FakeAnthropic) -> None:
    server.script = [Reply([text("a")]), Reply([text("b")])]
    b = backend(server, model="claude-opus-5-5")
    await b.text(Request(role="loss", prompt="x"))
    await b.text(Request(role="loss", prompt="x", model="claude-haiku-5-5"))
    assert [r.body["model"] for r in server.messages_requests] == ["claude-opus-5-5", "claude-haiku-5-5"]


async def test_unknown_model_reports_tokens_and_no_price(server: FakeAnthropic) -> None:
    server.script = [Reply([text("ok")])]
    result = await backend(server, model="claude-someday-9").text(Request(role="loss", prompt="x"))
    assert result.cost_usd is None
    assert result.usage.total > 0


async def test_text_cut_off_at_max_tokens_fails_instead_of_returning_half(server: FakeAnthropic) -> None:
    server.script = [Reply([text("Once upon a")], stop_reason="max_tokens")]
    with pytest.raises(BackendError, match="max_tokens") as info:
        await backend(server).text(Request(role="diffuse", prompt="x"))
    assert not isinstance(info.value, FatalBackendError)
    assert info.value.partial.usage.output_tokens > 0  # the cut answer was still paid for


# -- retries and failures --------------------------------------------------------------------


async def test_overloaded_rate_limited_and_dropped_answers_are_retried(server: FakeAnthropic) -> None:
    server.script = [
        Error(529),
        Error(429, retry_after=0.4),
        Drop(),
        Drop(partial_stream=True),
        Error(200, "overloaded_error", mid_stream=True),
        Error(503),
        Reply([text("the story")]),
    ]
    result = await backend(server).text(Request(role="diffuse", prompt="x"))
    assert result.text == "the story"
    times = [r.time for r in server.messages_requests]
    assert len(times) == 7
    assert times[2] - times[1] >= 0.4  # retry-after honoured, although the backoff would be ~0.01s
    retries = [e for e in result.transcript if e["event"] == "retry"]
    assert len(retries) == 6


async def test_backoff_grows_and_is_capped(server: FakeAnthropic) -> None:
    b = backend(server, backoff_base=0.1, backoff_cap=0.4)
    waits = [b.retry.backoff(n) for n in range(8)]
    assert all(w <= 0.4 for w in waits)
    assert max(waits[4:]) > max(waits[:1])


async def test_gives_up_after_max_retries_with_a_work_level_error(server: FakeAnthropic) -> None:
    server.script = [Error(500, message="boom")] * 3
    with pytest.raises(BackendError) as info:
        await backend(server, max_retries=2).text(Request(role="loss", prompt="x"))
    assert not isinstance(info.value, FatalBackendError)
    assert "gave up after 3 attempts" in str(info.value)
    assert len(server.messages_requests) == 3
    assert sum(e["event"] == "retry" for e in info.value.partial.transcript) == 2


async def test_bad_key_stops_at_once_with_one_clear_line(server: FakeAnthropic) -> None:
    server.key = "sk-ant-test-the-right-one-0000"
    with pytest.raises(FatalBackendError) as info:
        await backend(server).text(Request(role="loss", prompt="x"))
    message = str(info.value)
    assert "ANTHROPIC_API_KEY" in message and "401" in message and "\n" not in message
    assert len(server.messages_requests) == 1


async def test_unknown_model_404_stops_at_once_naming_the_model(server: FakeAnthropic) -> None:
    server.script = [Error(404, message="model: claude-nope")]
    with pytest.raises(FatalBackendError, match="claude-nope") as info:
        await backend(server, model="claude-nope").text(Request(role="loss", prompt="x"))
    assert "--model" in str(info.value)
    assert len(server.messages_requests) == 1


async def test_a_bad_request_costs_the_call_without_retries(server: FakeAnthropic) -> None:
    server.script = [Error(400, message="prompt is too long")]
    with pytest.raises(BackendError, match="prompt is too long") as info:
        await backend(server).text(Request(role="loss", prompt="x"))
    assert not isinstance(info.value, FatalBackendError)
    assert len(server.messages_requests) == 1


async def test_x_should_retry_false_is_respected(server: FakeAnthropic) -> None:
    server.script = [Error(500, headers={"x-should-retry": "false"})]
    with pytest.raises(BackendError):
        await backend(server).text(Request(role="loss", prompt="x"))
    assert len(server.messages_requests) == 1


def test_no_key_is_a_usage_error_saying_how_to_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UsageError, match="export ANTHROPIC_API_KEY"):
        AnthropicBackend()


def test_key_from_the_environment_is_used(monkeypatch: pytest.MonkeyPatch, server: FakeAnthropic) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.script = [Reply([text("hi")])]
    asyncio.run(
        AnthropicBackend(connection=Connection(base_url=server.base_url)).text(Request(role="loss", prompt="x"))
    )
    assert server.messages_requests[0].api_key == KEY


# -- agents with tools -----------------------------------------------------------------------


async def test_agent_writes_with_the_editor_tool_and_echoes_thinking_unchanged(
    server: FakeAnthropic, roots: dict[str, Path]
) -> None:
    episode = roots["scripts"] / "01.fountain"
    first = Reply(
        [
            thinking("I should read the note first."),
            text("Reading the pool."),
            tool_use(EDITOR, {"command": "view", "path": str(roots["pool"] / "dialogue" / "subtext.md")}),
        ]
    )
    second = Reply(
        [
            thinking("Now the episode."),
            tool_use(EDITOR, {"command": "create", "path": str(episode), "file_text": "INT. ROOM - DAY\n\nQuiet.\n"}),
        ]
    )
    third = Reply(
        [
            tool_use(
                EDITOR, {"command": "str_replace", "path": str(episode), "old_str": "Quiet.", "new_str": "Silence."}
            ),
            tool_use(
                EDITOR, {"command": "insert", "path": str(episode), "insert_line": 0, "insert_text": "Title: One"}
            ),
        ]
    )
    fourth = Reply([text("Episode 1 written.")])
    server.script = [first, second, third, fourth]
    tools_seen: list[tuple] = []
    sandbox = writer_sandbox(roots)
    result = await backend(server).agent(
        Request(
            role="forward", prompt="Write episode 1.", system="You write.", on_tool=lambda *a: tools_seen.append(a)
        ),
        sandbox,
    )

    assert episode.read_text() == "Title: One\nINT. ROOM - DAY\n\nSilence.\n"
    assert result.text == "Episode 1 written."
    assert result.turns == 4
    assert sandbox.reads == ["dialogue/subtext.md"]
    assert [t[0] for t in tools_seen] == ["view", "create", "str_replace", "insert"]
    assert all(error is None for _, _, error in tools_seen)

    requests = server.messages_requests
    assert len(requests) == 4
    # The assistant turn goes back exactly as it came, thinking and signature included.
    echoed = requests[1].body["messages"][1]
    assert echoed["role"] == "assistant" and echoed["content"] == first.content
    assert server.altered_thinking == []
    # Usage and cost add up over the turns.
    total = Usage()
    for entry in (e for e in result.transcript if e["event"] == "response"):
        total.add(
            Usage(
                **{
                    k: entry["usage"][k]
                    for k in ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
                }
            )
        )
    assert total == result.usage
    assert result.cost_usd == pytest.approx(sum(e["cost_usd"] for e in result.transcript if e["event"] == "response"))


async def test_agent_is_offered_the_editor_tool_and_commit_only_when_it_may_commit(
    server: FakeAnthropic, roots: dict[str, Path]
) -> None:
    commits: list[str] = []
    pool_sandbox = Sandbox(
        read_roots=[roots["pool"]],
        write_roots=[roots["pool"]],
        on_commit=lambda message: commits.append(message) or "committed abc123",
    )
    server.script = [
        Reply(
            [
                tool_use(
                    EDITOR,
                    {
                        "command": "str_replace",
                        "path": "dialogue/subtext.md",
                        "old_str": "Say less.",
                        "new_str": "Say less; mean more.",
                    },
                )
            ]
        ),
        Reply([tool_use("commit", {"message": "subtext: mean more"})]),
        Reply([text("done")]),
        Reply([text("done")]),
    ]
    await backend(server).agent(Request(role="backward", prompt="Edit."), pool_sandbox)
    await backend(server).agent(Request(role="forward", prompt="Write."), writer_sandbox(roots))
    backward_tools, forward_tools = server.messages_requests[0].body["tools"], server.messages_requests[3].body["tools"]
    assert backward_tools[0]["type"] == "text_editor_20250728" and backward_tools[0]["name"] == EDITOR
    assert [t["name"] for t in backward_tools] == [EDITOR, "delete_file", "commit"]
    assert [t["name"] for t in forward_tools] == [EDITOR, "delete_file"]
    assert commits == ["subtext: mean more"]
    assert "Say less; mean more." in (roots["pool"] / "dialogue" / "subtext.md").read_text()
    assert server.messages_requests[2].tool_results()[0]["content"] == "committed abc123"


async def test_refused_tool_calls_go_back_as_error_results(server: FakeAnthropic, roots: dict[str, Path]) -> None:
    human = roots["work"] / "human" / "01.fountain"
    server.script = [
        Reply(
            [
                tool_use(EDITOR, {"command": "view", "path": str(human)}),
                tool_use(EDITOR, {"command": "create", "path": str(roots["pool"] / "x.md"), "file_text": "x"}),
                tool_use(
                    EDITOR, {"command": "str_replace", "path": str(roots["scripts"] / "none.fountain"), "old_str": "a"}
                ),
                tool_use("bash", {"command": "cat /etc/passwd"}),
            ]
        ),
        Reply([text("I could not.")]),
    ]
    reported: list[tuple] = []
    result = await backend(server).agent(
        Request(role="forward", prompt="x", on_tool=lambda *a: reported.append(a)), writer_sandbox(roots)
    )
    results = server.messages_requests[1].tool_results()
    assert [r.get("is_error") for r in results] == [True, True, True, True]
    assert "off-limits" in results[0]["content"] and "SECRET TARGET" not in json.dumps(results)
    assert "off-limits" in results[1]["content"]
    assert "does not exist" in results[2]["content"]
    assert "unknown tool" in results[3]["content"]
    assert not (roots["pool"] / "x.md").exists()
    assert [(r[0], r[2] is None) for r in reported] == [
        ("view", False),
        ("create", False),
        ("str_replace", False),
        ("bash", False),
    ]
    assert all(error for _, _, error in reported)  # each refusal says why
    assert result.text == "I could not."


async def test_a_tool_call_cut_off_by_max_tokens_is_not_run(server: FakeAnthropic, roots: dict[str, Path]) -> None:
    target = roots["scripts"] / "02.fountain"
    server.script = [
        Reply(
            [tool_use(EDITOR, {"command": "create", "path": str(target), "file_text": "INT. HALF"})],
            stop_reason="max_tokens",
        ),
        Reply([text("ok")]),
    ]
    await backend(server).agent(Request(role="forward", prompt="x"), writer_sandbox(roots))
    assert not target.exists()
    result = server.messages_requests[1].tool_results()[0]
    assert result["is_error"] is True and "cut off" in result["content"]


async def test_agent_stops_at_the_turn_bound(server: FakeAnthropic, roots: dict[str, Path]) -> None:
    server.script = lambda r: Reply([tool_use(EDITOR, {"command": "view", "path": str(roots["pool"])})])
    with pytest.raises(BackendError, match="within 3 turns") as info:
        await backend(server).agent(Request(role="forward", prompt="x", max_turns=3), writer_sandbox(roots))
    assert len(server.messages_requests) == 3
    assert info.value.partial.turns == 3 and info.value.partial.usage.input_tokens > 0


async def test_agent_call_times_out(server: FakeAnthropic, roots: dict[str, Path]) -> None:
    server.script = [Reply([text("late")], delay=1.5)]
    with pytest.raises(BackendError, match="longer than 0.3s"):
        await backend(server).agent(Request(role="forward", prompt="x", timeout=0.3), writer_sandbox(roots))


async def test_stable_prefix_is_cached_across_turns_and_works(server: FakeAnthropic, roots: dict[str, Path]) -> None:
    system = "You are the writer. " * 200
    pool = "The pool's headers. " * 400  # shared word for word by every work of a step

    def script(recorded: Recorded) -> Reply:
        if not recorded.tool_results():
            return Reply([tool_use(EDITOR, {"command": "view", "path": str(roots["pool"])})])
        return Reply([text("done")])

    server.script = script
    b = backend(server)
    first = await b.agent(
        Request(role="forward", prefix=pool, prompt="story A " * 300, system=system), writer_sandbox(roots)
    )
    second = await b.agent(
        Request(role="forward", prefix=pool, prompt="story B " * 300, system=system), writer_sandbox(roots)
    )

    body = server.messages_requests[1].body
    marks = json.dumps(body).count('"cache_control"')
    assert marks == 3  # at most four are allowed; the prompt's moved on to the latest turn
    # The system breakpoint covers the tools before it; the shared prefix has its own.
    assert "cache_control" not in body["tools"][-1] and "cache_control" in body["system"][-1]
    assert body["messages"][0]["content"][0]["text"] == pool
    assert "cache_control" in body["messages"][0]["content"][0]
    assert "cache_control" not in body["messages"][0]["content"][-1]
    assert "cache_control" in body["messages"][-1]["content"][-1]  # the rolling breakpoint

    turns = [e for e in first.transcript if e["event"] == "response"]
    assert turns[0]["usage"]["cache_write_tokens"] > 0
    assert turns[1]["usage"]["cache_read_tokens"] > turns[0]["usage"]["cache_write_tokens"] // 2
    # Another work shares tools, system and the pool's headers: its first turn reads them from cache.
    other = [e for e in second.transcript if e["event"] == "response"]
    assert other[0]["usage"]["cache_read_tokens"] >= (len(system) + len(pool)) // 4 - 10
    assert first.cost_usd is not None and second.cost_usd is not None


async def test_concurrent_agents_each_get_their_own_conversation(server: FakeAnthropic, roots: dict[str, Path]) -> None:
    def script(recorded: Recorded) -> Reply:
        work = "A" if "work A" in recorded.all_text else "B"
        if not recorded.tool_results():
            return Reply(
                [tool_use(EDITOR, {"command": "create", "path": f"{work}.fountain", "file_text": f"work {work}\n"})],
                delay=0.1,
            )
        return Reply([text(f"wrote {work}")])

    server.script = script
    b = backend(server)
    results = await asyncio.gather(
        b.agent(Request(role="forward", prompt="work A"), writer_sandbox(roots)),
        b.agent(Request(role="forward", prompt="work B"), writer_sandbox(roots)),
    )
    assert [r.text for r in results] == ["wrote A", "wrote B"]
    assert (roots["scripts"] / "A.fountain").read_text() == "work A\n"
    assert (roots["scripts"] / "B.fountain").read_text() == "work B\n"


# -- secrets ---------------------------------------------------------------------------------


async def test_the_key_never_reaches_transcripts_errors_or_text(server: FakeAnthropic, roots: dict[str, Path]) -> None:
    other_key = "sk-ant-api03-" + "Z" * 40
    server.script = [
        Error(500, message=f"upstream echoed {KEY}"),
        Reply(
            [
                text(f"my key is {KEY} and {other_key}"),
                tool_use(EDITOR, {"command": "create", "path": "k.fountain", "file_text": f"{KEY}\n"}),
            ]
        ),
        Reply([text(f"done {KEY}")]),
    ]
    result = await backend(server).agent(Request(role="forward", prompt="x"), writer_sandbox(roots))
    dumped = json.dumps(result.transcript)
    assert KEY not in dumped and other_key not in dumped and REDACTED in dumped
    assert KEY not in result.text
    server.script = [Error(400, message=f"bad key {KEY}")]
    with pytest.raises(BackendError) as info:
        await backend(server).text(Request(role="loss", prompt="x"))
    assert KEY not in str(info.value) and KEY not in json.dumps(info.value.partial.transcript)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_redact_scrubs_the_secret_and_key_shapes_everywhere() -> None:
    data = {"a": [f"x {KEY} y", ("sk-ant-admin01-abcdefgh",)], KEY: 3, "n": 4, "gateway": "tok-123456"}
    clean = redact(data, ["tok-123456", None, ""])
    text_ = json.dumps(clean)
    assert KEY not in text_ and "sk-ant-admin01" not in text_ and "tok-123456" not in text_
    assert clean["n"] == 4 and data["a"][0].startswith("x sk-ant")  # input untouched


async def test_a_partial_key_in_a_server_message_is_redacted(server: FakeAnthropic) -> None:
    """Servers show a key cut down to its first 12 and last 6 characters: that is still a leak."""
    shown = f"{KEY[:12]}...{KEY[-6:]}"
    server.script = [Error(400, message=f"invalid x-api-key: {shown}")]
    with pytest.raises(BackendError) as info:
        await backend(server).text(Request(role="loss", prompt="x"))
    said = str(info.value) + json.dumps(info.value.partial.transcript)
    assert shown not in said and KEY[-6:] not in said and REDACTED in said


def test_redact_catches_cut_down_keys_and_masked_echoes_of_our_own_secret() -> None:
    token = "gw-9f8e7d6c5b4a3210zyxw"
    for cut in ("sk-ant-probe...efghij", "sk-ant-probe\u2026efghij", "sk-ant-api03-***efghij", "sk-ant-ab"):
        assert redact(f"key {cut} refused", []) == f"key {REDACTED} refused"
    for masked in (f"{token[:6]}...{token[-6:]}", f"{token[:4]}****{token[-4:]}"):
        assert redact(f"token {masked} refused", [token]) == f"token {REDACTED} refused"
    # Ordinary text with dots is left alone.
    assert redact("wait... then sk", [token]) == "wait... then sk"


# -- prices ----------------------------------------------------------------------------------


def test_prices_follow_the_table_and_unknown_models_have_none() -> None:
    usage = Usage(
        input_tokens=1_000_000, output_tokens=1_000_000, cache_write_tokens=1_000_000, cache_read_tokens=1_000_000
    )
    assert pricing.cost_usd("claude-sonnet-5-5", usage) == pytest.approx(2 + 10 + 2.5 + 0.10)
    assert pricing.cost_usd("claude-opus-5-5", usage) == pytest.approx(4 + 20 + 5 + 0.20)
    assert pricing.cost_usd("claude-opus-4-8", usage) == pytest.approx(5 + 25 + 6.25 + 0.50)
    assert pricing.cost_usd("claude-haiku-4-5-20251001", usage) == pytest.approx(1 + 5 + 1.25 + 0.10)
    assert pricing.cost_usd("claude-sonnet-5-5[1m]", usage) == pricing.cost_usd("claude-sonnet-5-5", usage)
    assert pricing.cost_usd("claude-mythos-preview", usage) is None
    assert pricing.cost_usd("gpt-9", usage) is None
    assert pricing.price_for(None) is None


def test_haiku_5_5_long_prompts_pay_the_higher_band_on_every_token() -> None:
    short = Usage(input_tokens=50_000, output_tokens=1_000, cache_read_tokens=40_000)
    long_ = Usage(input_tokens=50_000, output_tokens=1_000, cache_read_tokens=60_000)
    assert pricing.cost_usd("claude-haiku-5-5", short) == pytest.approx(
        (50_000 * 0.10 + 1_000 * 0.50 + 40_000 * 0.01) / 1e6
    )
    assert pricing.cost_usd("claude-haiku-5-5", long_) == pytest.approx(
        (50_000 * 0.50 + 1_000 * 2.50 + 60_000 * 0.05) / 1e6
    )


def test_every_model_the_sdk_lists_is_priced_or_deliberately_unpriced() -> None:
    import typing

    from anthropic.types import Model

    listed = [m for m in typing.get_args(typing.get_args(Model)[0])]
    unpriced = {m for m in listed if pricing.price_for(m) is None}
    assert unpriced == {"claude-mythos-preview"}
