"""The `claude-code` backend: the real Claude Code CLI (bundled with claude-agent-sdk) against the fake API.

Claude Code reads `ANTHROPIC_BASE_URL`, so the same loopback server that tests the
`anthropic` backend answers it here. Its config folder is a temporary one. The backend
itself switches the CLI's non-essential traffic off (the tests set none of it), and
`test_only_the_agents_own_requests_reach_the_api` fails on any request that is not the
agent's own. Skipped when the optional extra is not installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from skilltui.agents.base import BackendError, Connection, FatalBackendError, Request
from skilltui.agents.tools import Sandbox
from skilltui.core.errors import UsageError
from tests.support.fakeapi import Error, FakeAnthropic, Recorded, Reply, text, tool_use

sdk = pytest.importorskip("claude_agent_sdk")

from skilltui.agents.claude_code import ClaudeCodeBackend  # noqa: E402
from skilltui.agents.claude_code_confine import permissions  # noqa: E402

KEY = "sk-ant-test-XXXX-claudecode-0123456789"
OURS = {"mcp__files__view", "mcp__files__create", "mcp__files__str_replace", "mcp__files__insert", "mcp__files__delete"}


def backend(server: FakeAnthropic, tmp_path: Path, model: str | None = None) -> ClaudeCodeBackend:
    config = tmp_path / "claude-config"
    config.mkdir(exist_ok=True)
    return ClaudeCodeBackend(
        model,
        Connection(KEY, server.base_url, max_retries=1),
        env={
            "CLAUDE_CONFIG_DIR": str(config),
            "HOME": str(config),
        },
    )


def main_turns(server: FakeAnthropic) -> list[Recorded]:
    """The agent's own requests (the CLI may make others, e.g. a quota probe)."""
    return [r for r in server.messages_requests if OURS & set(r.tool_names)]


@pytest.mark.subprocess
async def test_text_streams_and_takes_its_cost_from_the_result(server: FakeAnthropic, tmp_path: Path) -> None:
    server.script = lambda r: Reply([text("INT. DOCK - DAWN\n\nGulls.")])
    deltas: list[str] = []
    result = await backend(server, tmp_path, "claude-haiku-5-5").text(
        Request(role="loss", prompt="Judge it.", system="You judge.", on_delta=deltas.append)
    )
    assert result.text == "INT. DOCK - DAWN\n\nGulls."
    assert "".join(deltas) == result.text
    assert result.cost_usd is not None and result.cost_usd > 0
    assert result.usage.output_tokens > 0 and result.model == "claude-haiku-5-5"
    request = server.messages_requests[-1]
    assert request.body["model"] == "claude-haiku-5-5"
    assert request.api_key == KEY
    assert "You judge." in json.dumps(request.body["system"])
    builtin = {"Bash", "Read", "Write", "Edit", "WebFetch", "WebSearch", "Glob", "Grep"}
    assert not builtin & set(request.tool_names)
    assert KEY not in json.dumps(result.transcript)


@pytest.mark.subprocess
async def test_agent_works_only_through_the_sandbox(
    server: FakeAnthropic, tmp_path: Path, roots: dict[str, Path]
) -> None:
    episode = roots["scripts"] / "01.fountain"

    def script(r: Recorded) -> Reply:
        if not OURS & set(r.tool_names):
            return Reply([text("ok")])
        if not r.tool_results():
            return Reply(
                [
                    tool_use("mcp__files__view", {"path": str(roots["work"] / "human" / "01.fountain")}),
                    tool_use("mcp__files__view", {"path": str(roots["pool"] / "dialogue" / "subtext.md")}),
                    tool_use("mcp__files__create", {"path": str(episode), "file_text": "INT. ROOM - DAY\n"}),
                ]
            )
        return Reply([text("Episode 1 written.")])

    server.script = script
    sandbox = Sandbox(
        read_roots=[roots["pool"]],
        write_roots=[roots["scripts"]],
        denied=[roots["work"] / "human"],
        traced=roots["pool"],
    )
    seen: list[tuple] = []
    result = await backend(server, tmp_path).agent(
        Request(role="forward", prompt="Write episode 1.", system="You write.", on_tool=lambda *a: seen.append(a)),
        sandbox,
    )

    assert episode.read_text() == "INT. ROOM - DAY\n"
    assert result.text == "Episode 1 written."
    assert sandbox.reads == ["dialogue/subtext.md"]
    assert [(s[0], s[2] is None) for s in seen] == [("view", False), ("view", True), ("create", True)]
    assert "off-limits" in seen[0][2]
    turns = main_turns(server)
    offered = set(turns[0].tool_names)
    assert OURS <= offered and "mcp__files__commit" not in offered
    assert not {"Bash", "Read", "Write", "Edit", "NotebookEdit"} & offered
    refused = turns[1].tool_results()[0]
    assert refused.get("is_error") is True and "off-limits" in json.dumps(refused)
    assert "SECRET TARGET" not in json.dumps([r.body for r in server.requests])
    assert result.cost_usd is not None and result.turns >= 2


@pytest.mark.subprocess
async def test_backward_gets_commit_and_it_reaches_on_commit(
    server: FakeAnthropic, tmp_path: Path, roots: dict[str, Path]
) -> None:
    commits: list[str] = []

    def script(r: Recorded) -> Reply:
        if not OURS & set(r.tool_names):
            return Reply([text("ok")])
        if not r.tool_results():
            edit = {"path": "dialogue/subtext.md", "old_str": "Say less.", "new_str": "Say less, mean more."}
            return Reply(
                [
                    tool_use("mcp__files__str_replace", edit),
                    tool_use("mcp__files__commit", {"message": "subtext: mean more"}),
                ]
            )
        return Reply([text("committed")])

    server.script = script
    sandbox = Sandbox(
        read_roots=[roots["pool"]], write_roots=[roots["pool"]], on_commit=lambda m: commits.append(m) or "commit abc"
    )
    await backend(server, tmp_path).agent(Request(role="backward", prompt="Edit."), sandbox)
    assert commits == ["subtext: mean more"]
    assert "mean more" in (roots["pool"] / "dialogue" / "subtext.md").read_text()
    assert "mcp__files__commit" in main_turns(server)[0].tool_names


@pytest.mark.subprocess
async def test_bad_key_is_fatal_at_the_first_refusal(server: FakeAnthropic, tmp_path: Path) -> None:
    server.key = "sk-ant-test-some-other-key-000"
    b = ClaudeCodeBackend(
        connection=Connection(KEY, server.base_url, max_retries=6),
        env={"CLAUDE_CONFIG_DIR": str(tmp_path), "HOME": str(tmp_path)},
    )
    with pytest.raises(FatalBackendError, match="ANTHROPIC_API_KEY") as info:
        await b.text(Request(role="loss", prompt="x"))
    assert "\n" not in str(info.value) and KEY not in str(info.value)
    # The CLI would retry a 401 six times with backoff (about 35 s); the call stops at once.
    assert len(server.messages_requests) == 1


@pytest.mark.slow
@pytest.mark.subprocess
async def test_only_the_agents_own_requests_reach_the_api(
    server: FakeAnthropic, tmp_path: Path, roots: dict[str, Path]
) -> None:
    strangers: list[str] = []

    def script(r: Recorded) -> Reply:
        if "ONLY-OURS" not in json.dumps(r.body.get("system", "")):
            strangers.append(f"{r.path}: {json.dumps(r.body)[:200]}")
            return Reply([text("not yours")])
        if OURS & set(r.tool_names) and not r.tool_results():
            return Reply([tool_use("mcp__files__view", {"path": str(roots["pool"] / "dialogue" / "subtext.md")})])
        return Reply([text("done")])

    server.script = script
    b = backend(server, tmp_path)
    judged = await b.text(Request(role="loss", prompt="Judge the episodes. SECRET TARGET", system="ONLY-OURS judge"))
    sandbox = Sandbox(read_roots=[roots["pool"]], write_roots=[roots["scripts"]])
    wrote = await b.agent(Request(role="forward", prompt="Write.", system="ONLY-OURS writer"), sandbox)
    assert strangers == []
    assert all(r.path.split("?")[0] == "/v1/messages" for r in server.requests), [r.path for r in server.requests]
    # turns are model requests, as in every backend; tokens are what the server billed.
    assert judged.turns == 1 and wrote.turns == 2 and len(server.messages_requests) == 3
    billed = [server.usage_by_request[i] for i in sorted(server.usage_by_request)]
    assert judged.usage.input_tokens == billed[0]["input_tokens"]
    assert wrote.usage.output_tokens == billed[1]["output_tokens"] + billed[2]["output_tokens"]
    # A one-shot answer is sent with no cache mark: nothing would read it back.
    assert "cache_control" not in json.dumps(server.messages_requests[0].body)
    assert not list(tmp_path.glob("claude-config/**/telemetry/*"))


@pytest.mark.subprocess
async def test_unknown_model_404_is_fatal(server: FakeAnthropic, tmp_path: Path) -> None:
    server.script = lambda r: Error(404, message="model: claude-nope")
    with pytest.raises(FatalBackendError, match="claude-nope"):
        await backend(server, tmp_path, "claude-nope").text(Request(role="loss", prompt="x"))


@pytest.mark.subprocess
async def test_server_errors_cost_the_work_not_the_run(server: FakeAnthropic, tmp_path: Path) -> None:
    server.script = lambda r: Error(500, message="boom")
    with pytest.raises(BackendError) as info:
        await backend(server, tmp_path).text(Request(role="loss", prompt="x"))
    assert not isinstance(info.value, FatalBackendError)
    assert "boom" in str(info.value)
    assert info.value.partial.transcript[-1]["event"] == "error"


@pytest.mark.subprocess
async def test_unknown_model_reports_tokens_without_a_guessed_price(server: FakeAnthropic, tmp_path: Path) -> None:
    server.script = lambda r: Reply([text("fine")])
    result = await backend(server, tmp_path, "claude-someday-9").text(Request(role="loss", prompt="x"))
    assert result.cost_usd is None
    assert result.usage.total > 0


def test_permission_rules_are_scoped_to_the_roots(tmp_path: Path) -> None:
    read, write, denied = tmp_path / "pool", tmp_path / "scripts", tmp_path / "work" / "human"
    for p in (read, write, denied):
        p.mkdir(parents=True)
    rules = permissions([read], [write], [denied])["permissions"]
    assert f"Read(/{read}/**)" in rules["allow"] and f"Edit(/{write}/**)" in rules["allow"]
    assert all("(" in r for r in rules["allow"])  # never an unscoped Read, Write or Edit
    assert not any(r.startswith(("Edit", "Write")) and str(read) in r for r in rules["allow"])
    assert f"Read(/{denied}/**)" in rules["deny"] and "Bash" in rules["deny"]


def test_missing_extra_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "claude_agent_sdk", None)
    with pytest.raises(UsageError, match=r"pip install 'skilltui\[claude-code\]'"):
        ClaudeCodeBackend()


@pytest.mark.subprocess
async def test_a_429_throttles_and_the_lead_reaches_the_prompt(server: FakeAnthropic, tmp_path: Path) -> None:
    answers = iter([Error(429, retry_after=0.2)])
    server.script = lambda r: next(answers, None) or Reply([text("judged")])
    b = backend(server, tmp_path)
    b.throttle.hold = 0.0
    changes: list[dict] = []
    b.throttle.on_change = lambda **facts: changes.append(facts)
    result = await b.text(Request(role="loss", prompt="Judge.", lead="# The human episodes\n\nHUMAN LINE"))
    assert result.text == "judged"
    assert "HUMAN LINE" in server.messages_requests[-1].all_text
    assert changes[0]["throttled"] is True and changes[0]["reason"] == "retry-after (429)"
    assert changes[-1]["throttled"] is False and b.throttle.limit is None
