"""Cache marks go only where a later request reads them, and the fake API bills them by the API's rules.

Every test drives the real `anthropic` SDK against `tests/support/fakeapi.py`, whose prompt cache
(`tests/support/fakecache.py`) applies prefix matching up to a mark, a minimum length and a life.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.agents.anthropic_backend import AnthropicBackend
from skilltui.agents.base import Connection, Request
from skilltui.agents.cache_policy import min_cacheable
from skilltui.agents.tools import Sandbox
from tests.support.fakeapi import FakeAnthropic, Recorded, Reply, text, tool_use

KEY = "sk-ant-test-XXXX-cachepolicy-0123456789"
EDITOR = "str_replace_based_edit_tool"
LONG = "Every scene heading names the place and the time of day. " * 120  # ~2,000 tokens


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def server(clock: Clock):
    with FakeAnthropic(min_cache_tokens=1024, clock=clock) as fake:
        yield fake
    assert fake.failures == [], fake.failures


def backend(server: FakeAnthropic) -> AnthropicBackend:
    return AnthropicBackend("claude-sonnet-5-5", Connection(KEY, server.base_url, max_retries=0))


def marks(r: Recorded) -> list[dict]:
    blocks = list(r.body.get("tools", [])) + list(r.body.get("system", []) or [])
    for m in r.body["messages"]:
        blocks += m["content"] if isinstance(m["content"], list) else []
    return [b["cache_control"] for b in blocks if "cache_control" in b]


async def test_a_one_shot_answer_marks_nothing_and_pays_no_cache_write(server: FakeAnthropic) -> None:
    server.script = lambda r: Reply([text("report")])
    result = await backend(server).text(Request(role="loss", prompt=LONG, system="You judge."))
    assert marks(server.messages_requests[0]) == []
    assert result.usage.cache_write_tokens == 0 and result.usage.input_tokens > 1024


async def test_a_lead_read_again_next_epoch_is_cached_for_an_hour(server: FakeAnthropic, clock: Clock) -> None:
    server.script = lambda r: Reply([text("report")])
    b = backend(server)
    first = await b.text(Request(role="loss", prompt="written A", lead=LONG, lead_ttl="1h"))
    assert marks(server.messages_requests[0]) == [{"type": "ephemeral", "ttl": "1h"}]
    assert first.usage.cache_write_1h_tokens == first.usage.cache_write_tokens > 1024
    clock.now += 20 * 60  # an epoch later: a 5-minute entry would be gone
    second = await b.text(Request(role="loss", prompt="written B", lead=LONG, lead_ttl="1h"))
    assert second.usage.cache_read_tokens == first.usage.cache_write_tokens
    # The 1-hour write is billed at 2x input (Sonnet 5.5: $4 per million), the read at $0.10.
    assert first.cost_usd == pytest.approx(
        (first.usage.input_tokens * 2 + first.usage.output_tokens * 10 + first.usage.cache_write_tokens * 4) / 1e6
    )


async def test_a_lead_nobody_reads_again_gets_no_mark(server: FakeAnthropic) -> None:
    server.script = lambda r: Reply([text("report")])
    await backend(server).text(Request(role="loss", prompt="x", lead=LONG, lead_ttl=None))
    assert marks(server.messages_requests[0]) == []


async def test_fake_cache_expires_after_five_minutes_and_ignores_short_prefixes(
    server: FakeAnthropic, clock: Clock
) -> None:
    server.script = lambda r: Reply([text("ok")])
    b = backend(server)
    await b.text(Request(role="loss", prompt="a", lead=LONG, lead_ttl="5m"))
    clock.now += 4 * 60
    hit = await b.text(Request(role="loss", prompt="b", lead=LONG, lead_ttl="5m"))
    assert hit.usage.cache_read_tokens > 1024  # read, and the read renews the life
    clock.now += 4 * 60
    assert (await b.text(Request(role="loss", prompt="c", lead=LONG, lead_ttl="5m"))).usage.cache_read_tokens > 0
    clock.now += 6 * 60
    gone = await b.text(Request(role="loss", prompt="d", lead=LONG, lead_ttl="5m"))
    assert gone.usage.cache_read_tokens == 0 and gone.usage.cache_write_tokens > 1024
    short = "Short. " * 50
    await b.text(Request(role="loss", prompt="e", lead=short, lead_ttl="5m"))
    again = await b.text(Request(role="loss", prompt="f", lead=short, lead_ttl="5m"))
    assert again.usage.cache_read_tokens == 0 and again.usage.cache_write_tokens == 0


async def test_an_agent_whose_task_is_done_writes_nothing_on_its_last_request(
    server: FakeAnthropic, tmp_path: Path
) -> None:
    out = tmp_path / "scripts"
    out.mkdir()

    def script(r: Recorded) -> Reply:
        done = sum(1 for m in r.body["messages"] if m["role"] == "assistant")
        if done < 2:
            return Reply(
                [tool_use(EDITOR, {"command": "create", "path": str(out / f"0{done + 1}.fountain"), "file_text": LONG})]
            )
        return Reply([text("wrote both")])

    server.script = script
    request = Request(
        role="forward",
        prompt="Write episodes 1 and 2. " + LONG,
        system="You write.",
        finished=lambda: all((out / f"0{n}.fountain").exists() for n in (1, 2)),
    )
    result = await backend(server).agent(request, Sandbox(read_roots=[out], write_roots=[out]))
    turns = [e for e in result.transcript if e["event"] == "response"]
    assert len(turns) == 3
    assert turns[1]["usage"]["cache_read_tokens"] > 0 and turns[1]["usage"]["cache_write_tokens"] > 1024
    # The last request reads what the turn before wrote and writes nothing that nobody would read.
    assert turns[2]["usage"]["cache_read_tokens"] > turns[1]["usage"]["cache_read_tokens"]
    assert turns[2]["usage"]["cache_write_tokens"] == 0
    assert [w for w in server.cache.writes if not w.read] == []


def test_minimum_cacheable_length_follows_the_model() -> None:
    assert min_cacheable("claude-haiku-4-5-20251001") == 4096
    assert min_cacheable("claude-opus-5-5") == 512
    assert min_cacheable("claude-sonnet-5-5[1m]") == 1024


def test_training_marks_the_story_and_the_human_episodes_only_where_a_later_step_reads_them(
    make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from skilltui.cli import main
    from skilltui.engine.data.diffuse import noise_work
    from skilltui.engine.data.works import load_work
    from tests.support.fakemodel import FakeModel, role_of

    works = [make_work("kestrel", 8, story=False), make_work("lantern", 4, story=False)]
    for work in works:  # long enough episodes that a step's human episodes pass the minimum
        for episode in (work / "human").glob("*.fountain"):
            action = "The tide turns under the pier while the gulls argue over scraps. " * 6
            episode.write_text(episode.read_text() + f"\nEXT. PIER - NIGHT\n\n{action}\n")
        (work / "story.md").write_text(noise_work(load_work(work), seed=0, noise=0.3))
    with FakeAnthropic(FakeModel(tmp_path / "works")) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        argv = [
            "train",
            "--auto",
            "--backend",
            "anthropic",
            "--model",
            "claude-opus-5-5",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--run-id",
            "r",
            "--steps",
            "2",
            "--epochs",
            "2",
            "--group-size",
            "0",
            "--episodes-per-step",
            "4",
        ]
        for work in works:
            argv += ["--work", str(work)]
        assert main(argv) == 0
    out = capsys.readouterr().out
    assert "models (anthropic): forward claude-opus-5-5, loss claude-opus-5-5" in out

    def tokens_of(block: dict) -> int:
        return len(block["text"]) // 4

    def opening(r: Recorded) -> list[dict]:
        return r.body["messages"][0]["content"]

    firsts = [r for r in fake.messages_requests if role_of(r) == "forward" and len(r.body["messages"]) == 1]
    # kestrel (8 episodes) runs steps 0 and 1 in both epochs; lantern (4) only step 0.
    assert len(firsts) == 6
    story_marks = {}
    for r in firsts:
        lead = opening(r)[0]
        assert lead["text"].startswith("# The story")
        work = "kestrel" if "Kestrel" in lead["text"] else "lantern"
        story_marks.setdefault(work, []).append("cache_control" in lead)
    # Every forward of a work shares its story with an earlier or a later one: all marked.
    assert story_marks["kestrel"] == [True] * 4 and story_marks["lantern"] == [True] * 2

    judges = [r for r in fake.messages_requests if role_of(r) == "loss"]
    assert len(judges) == 6
    for r in judges:
        lead = opening(r)[0]
        assert lead["text"].startswith("# The human episodes") and "### Human" not in lead["text"]
    epoch0, epoch1 = judges[:3], judges[3:]
    assert all(tokens_of(opening(r)[0]) >= min_cacheable("claude-opus-5-5") for r in epoch0)
    assert all(opening(r)[0].get("cache_control") == {"type": "ephemeral", "ttl": "1h"} for r in epoch0)
    # The last epoch marks them only to read them back: it writes nothing nobody would read.
    assert all(opening(r)[0].get("cache_control") == {"type": "ephemeral"} for r in epoch1)
    billed = [fake.usage_by_request[fake.requests.index(r)] for r in epoch1]
    assert all(
        u["cache_read_input_tokens"] >= tokens_of(opening(r)[0]) - 10 for u, r in zip(billed, epoch1, strict=True)
    )
    assert all(u["cache_creation_input_tokens"] == 0 for u in billed)


def test_every_backward_micro_step_after_the_first_reads_the_run_wide_rules_from_the_cache(
    make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The instructions and note rules lead the backward prompt, the same text in every
    micro-step, so the pool listing (changed by every commit) no longer keeps them out of
    the cache: the first micro-step writes them, every later one reads them."""
    from skilltui.cli import main
    from tests.support.fakemodel import FakeModel, role_of

    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    with FakeAnthropic(FakeModel(tmp_path / "works"), min_cache_tokens=1024) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        argv = ["train", "--auto", "--backend", "anthropic", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r"]
        argv += ["--steps", "2", "--episodes-per-step", "2", "--group-size", "1"]
        for work in works:
            argv += ["--work", str(work)]
        assert main(argv) == 0
    assert fake.failures == [], fake.failures
    firsts = [r for r in fake.messages_requests if role_of(r) == "backward" and len(r.body["messages"]) == 1]
    assert len(firsts) == 4  # two works in groups of one, two steps
    leads = [r.body["messages"][0]["content"][0] for r in firsts]
    assert all(lead["text"] == leads[0]["text"] for lead in leads)
    assert "## Rules" in leads[0]["text"] and "## How a note is written" in leads[0]["text"]
    assert all(lead.get("cache_control") == {"type": "ephemeral"} for lead in leads)
    # The evidence and the commit subject, which differ per micro-step, come after the listing.
    assert all("Update the craft notes: epoch 0 step" in r.body["messages"][0]["content"][-1]["text"] for r in firsts)
    billed = [fake.usage_by_request[fake.requests.index(r)] for r in firsts]
    shared = (len(json.dumps(firsts[0].body["tools"])) + len(leads[0]["text"])) // 4
    assert billed[0]["cache_read_input_tokens"] == 0 and billed[0]["cache_creation_input_tokens"] > shared
    assert all(u["cache_read_input_tokens"] >= shared for u in billed[1:])


@pytest.mark.slow
def test_a_run_with_one_backward_call_leaves_its_rules_unmarked(
    make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skilltui.cli import main
    from tests.support.fakemodel import FakeModel, role_of

    work = make_work("kestrel", 2)
    with FakeAnthropic(FakeModel(tmp_path / "works"), min_cache_tokens=1024) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        argv = ["train", "--auto", "--backend", "anthropic", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r"]
        assert main([*argv, "--steps", "1", "--episodes-per-step", "2", "--work", str(work)]) == 0
    firsts = [r for r in fake.messages_requests if role_of(r) == "backward" and len(r.body["messages"]) == 1]
    assert len(firsts) == 1
    lead = firsts[0].body["messages"][0]["content"][0]
    assert lead["text"].startswith("# How you update the craft notes") and "cache_control" not in lead
