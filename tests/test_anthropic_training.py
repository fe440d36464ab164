"""Training through the real SDKs: `skilltui diffuse` and `skilltui train` against the fake Messages API.

These tests type the commands a user types (`--backend anthropic`, `--model`,
`--max-cost`) with `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` pointing at
`tests/support/fakeapi.py` on 127.0.0.1. The fake model plays every role from the prompts it is
sent: the writer views the story and creates episode files with the text editor tool, the
judge and the reducer answer in prose, the backward agent writes a note and commits.
Nothing is mocked between the engine and the socket.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.pool.notes import Pool
from tests.support.fakeapi import Error, FakeAnthropic, Recorded, Reply, text
from tests.support.fakemodel import EDITOR, KEY, NOTE, FakeModel, role_of
from tests.support.recorded import recorded


@pytest.fixture
def server(server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    """The fake API (conftest.py), reached through the environment as the command line reaches it."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    return server


def train(runs: Path, works: list[Path], *extra: str) -> int:
    argv = ["train", "--auto", "--backend", "anthropic", "--runs-dir", str(runs), "--run-id", "r"]
    argv.append("--no-consolidate")  # the fake model plays the steps' roles; consolidation: test_consolidation
    for work in works:
        argv += ["--work", str(work)]
    return main(argv + list(extra))


def assert_no_key_anywhere(*roots: Path) -> None:
    checked = 0
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file():
                checked += 1
                assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"
    assert checked


def transcript_costs(path: str) -> float:
    record = json.loads(Path(path).read_text())
    return sum(e.get("cost_usd") or 0.0 for e in record["transcript"] if e.get("event") == "response")


def test_a_training_step_through_the_sdk_writes_episodes_commits_and_resumes(
    server: FakeAnthropic, make_work, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    model = FakeModel(tmp_path / "works")
    server.script = model
    runs = tmp_path / "runs"

    assert (
        train(
            runs,
            works,
            "--steps",
            "1",
            "--group-size",
            "2",
            "--model",
            "claude-sonnet-5-5",
            "--role-model",
            "loss=claude-haiku-5-5",
        )
        == 0
    )
    run = runs / "r"
    events = recorded(run / "events.jsonl")

    # The writer wrote its episodes with the editor tool and was refused the originals.
    for name in ("kestrel", "lantern"):
        for n in (1, 2):
            assert (run / "epoch0" / "step0" / "works" / name / "scripts" / f"{n:02d}.fountain").exists()
    assert len(model.refused) == 2 and all("off-limits" in m for m in model.refused)
    written = [e for e in events if e["kind"] == "episode_written"]
    assert sorted((e["work"], e["episode"]) for e in written) == [
        ("kestrel", 1),
        ("kestrel", 2),
        ("lantern", 1),
        ("lantern", 2),
    ]

    # Each role got its model and its tools.
    by_role: dict[str, list[Recorded]] = {}
    for r in server.messages_requests:
        by_role.setdefault(role_of(r), []).append(r)
    assert {r.body["model"] for r in by_role["loss"]} == {"claude-haiku-5-5"}
    assert {r.body["model"] for r in by_role["forward"] + by_role["backward"]} == {"claude-sonnet-5-5"}
    assert all(r.tool_names == [EDITOR, "delete_file"] for r in by_role["forward"])
    assert all(r.tool_names == [EDITOR, "delete_file", "commit", "pool_log", "pool_show"] for r in by_role["backward"])
    assert len(by_role["reduce"]) == 1 and not any(r.body.get("tools") for r in by_role["loss"])
    assert server.altered_thinking == []

    # The backward pass made exactly one commit holding the note.
    pool = Pool(run / "memory")
    assert pool.git("log", "-1", "--format=%s").startswith("train ")
    assert (run / "memory" / "dialogue" / "keep-lines-short.md").read_text() == NOTE
    assert pool.lint() == []

    # Costs add up: each call event matches its transcript, and the run total is their sum.
    calls = [e for e in events if e["kind"] == "call"]
    assert {e["role"] for e in calls} == {"forward", "loss", "reduce", "backward"}
    assert all(e["backend"] == "anthropic" and e["cost_usd"] is not None for e in calls)
    # turns are model requests, counted as the claude-code backend counts them.
    assert {(e["role"], e["turns"]) for e in calls} == {("forward", 3), ("loss", 1), ("reduce", 1), ("backward", 3)}
    for e in calls:
        assert e["cost_usd"] == pytest.approx(transcript_costs(e["transcript"]))
    finished = [e for e in events if e["kind"] == "run_finished"][-1]
    assert finished["status"] == "finished"
    assert finished["cost_usd"] == pytest.approx(sum(e["cost_usd"] for e in calls), abs=1e-6)
    # The stable prefix was read from the cache on later turns.
    assert any(e["cache_read_tokens"] > 0 for e in calls if e["role"] == "forward")

    # Running the same command again calls nobody and commits nothing.
    requests, head = len(server.requests), pool.head()
    assert (
        train(
            runs,
            works,
            "--steps",
            "1",
            "--group-size",
            "2",
            "--model",
            "claude-sonnet-5-5",
            "--role-model",
            "loss=claude-haiku-5-5",
        )
        == 0
    )
    assert len(server.requests) == requests and pool.head() == head

    assert {r.api_key for r in server.requests} == {KEY}
    assert "[REDACTED]" in (run / "epoch0" / "step0" / "loss" / "kestrel.md").read_text()
    assert_no_key_anywhere(runs, tmp_path / "works")
    assert KEY not in capsys.readouterr().err


def test_max_cost_stops_cleanly_before_a_stage_and_the_run_resumes(
    server: FakeAnthropic, make_work, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    works = [make_work("quarry", 4)]
    server.script = FakeModel(tmp_path / "works")
    runs = tmp_path / "runs"
    assert train(runs, works, "--steps", "1", "--max-cost", "0.000001") == 0
    assert "--max-cost" in capsys.readouterr().err
    events = recorded(runs / "r" / "events.jsonl")
    assert events[-1]["kind"] == "run_finished" and events[-1]["status"] == "stopped"
    stopped_calls = [e for e in events if e["kind"] == "call"]
    assert [e["role"] for e in stopped_calls] == ["forward"]

    assert train(runs, works, "--steps", "1") == 0
    events = recorded(runs / "r" / "events.jsonl")
    calls = [e for e in events if e["kind"] == "call"]
    assert [e["role"] for e in calls] == ["forward", "loss", "backward"]  # forward was not paid twice
    assert events[-1]["status"] == "finished"
    assert events[-1]["cost_usd"] == pytest.approx(sum(e["cost_usd"] for e in calls), abs=1e-6)
    assert_no_key_anywhere(runs, tmp_path / "works")


def test_a_text_only_model_diffuses_but_a_run_without_episodes_fails_clearly(
    server: FakeAnthropic, make_work, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A model that only ever answers with text: diffuse retries its overloaded answers and works; a
    run, whose writer then writes no episode, fails in one line with no traceback."""
    answers = iter([Error(529, retry_after=0), Error(529, retry_after=0)])
    server.script = lambda r: next(answers, None) or Reply([text(f"PROSE RETELLING, key {KEY}")])
    work = make_work("orchard", 2, story=False)

    assert main(["diffuse", "--work", str(work), "--backend", "anthropic", "--model", "claude-opus-5-5"]) == 0
    assert "diffuse: model claude-opus-5-5 (anthropic)" in capsys.readouterr().err
    story = (work / "story.md").read_text()
    assert "## Episode 1" in story and "## Episode 2" in story and "PROSE RETELLING" in story
    diffuse = server.messages_requests
    assert len(diffuse) == 4  # two overloaded answers, then one call per episode
    assert {r.body["model"] for r in diffuse} == {"claude-opus-5-5"}
    capsys.readouterr()

    runs = tmp_path / "runs"
    code = train(runs, [work], "--steps", "1", "--model", "claude-opus-5-5")
    err = capsys.readouterr().err
    assert code != 0
    assert "Traceback" not in err and "every work failed" in err
    agents = [r for r in server.messages_requests if role_of(r) == "forward"]
    assert agents and all(EDITOR in r.tool_names for r in agents)
    assert {r.body["model"] for r in agents} == {"claude-opus-5-5"}
    stage = [e for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "stage" and e["status"] == "failed"]
    assert stage and "did not write episode" in stage[0]["error"]
    assert_no_key_anywhere(runs, work)


@pytest.mark.slow
@pytest.mark.subprocess
def test_claude_code_backend_trains_a_step_against_the_same_server(
    server: FakeAnthropic, make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("claude_agent_sdk")
    config = tmp_path / "claude-config"
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))  # the backend itself keeps its traffic to the agent
    works = [make_work("willow", 2)]
    model = FakeModel(tmp_path / "works")
    server.script = model
    runs = tmp_path / "runs"
    argv = [
        "train",
        "--auto",
        "--backend",
        "claude-code",
        "--runs-dir",
        str(runs),
        "--run-id",
        "r",
        "--work",
        str(works[0]),
        "--steps",
        "1",
        "--no-consolidate",
    ]
    assert main(argv) == 0
    run = runs / "r"
    assert (run / "epoch0" / "step0" / "works" / "willow" / "scripts" / "02.fountain").exists()
    assert len(model.refused) == 1
    assert (run / "memory" / "dialogue" / "keep-lines-short.md").read_text() == NOTE
    calls = [e for e in recorded(run / "events.jsonl") if e["kind"] == "call"]
    assert [e["role"] for e in calls] == ["forward", "loss", "backward"]
    assert all(e["backend"] == "claude-code" and e["cost_usd"] for e in calls)
    # turns are model requests: the writer views, writes, then answers; the judge answers once.
    assert [e["turns"] for e in calls] == [3, 1, 3]
    # Every request that reached the API was one of the agents' own (no title generation, no probes).
    assert [role_of(r) for r in server.messages_requests] == ["forward"] * 3 + ["loss"] + ["backward"] * 3
    assert_no_key_anywhere(runs, tmp_path / "works")


def test_one_works_failing_call_costs_only_that_work(
    server: FakeAnthropic, make_work, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    works = [make_work("kestrel", 2), make_work("lantern", 2)]
    model = FakeModel(tmp_path / "works")

    def script(r: Recorded) -> Reply | Error:
        if role_of(r) == "forward" and "of `Kestrel`" in r.all_text:
            return Error(400, message="prompt is too long")
        return model(r)

    server.script = script
    runs = tmp_path / "runs"
    assert train(runs, works, "--steps", "1", "--group-size", "2") == 0
    events = recorded(runs / "r" / "events.jsonl")
    failed = [e for e in events if e["kind"] == "stage" and e["status"] == "failed"]
    assert [(e["stage"], e["work"]) for e in failed] == [("forward", "kestrel")]
    assert "prompt is too long" in failed[0]["error"]
    assert (runs / "r" / "epoch0" / "step0" / "loss" / "lantern.md").exists()
    assert Pool(runs / "r" / "memory").git("log", "-1", "--format=%s").startswith("train ")
    assert events[-1]["status"] == "finished"


def test_a_rejected_key_stops_the_run_with_one_clear_line(
    server: FakeAnthropic, make_work, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    server.key = "sk-ant-test-not-the-one-you-sent-000"
    code = train(tmp_path / "runs", [make_work("birch", 2)], "--steps", "1")
    err = capsys.readouterr().err
    assert code != 0
    assert "the API rejected the key (401): check ANTHROPIC_API_KEY" in err
    assert "Traceback" not in err and KEY not in err
    assert len(server.messages_requests) == 1  # stopped at once: no retries, no other work started


def test_no_key_exits_2_with_how_to_set_it(
    make_work, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    work = make_work("cedar", 2, story=False)
    assert main(["diffuse", "--work", str(work), "--backend", "anthropic"]) == 2
    err = capsys.readouterr().err.strip()
    assert "export ANTHROPIC_API_KEY" in err and len(err.splitlines()) == 1
    assert not (work / "story.md").exists()


def test_diffuse_with_a_rejected_key_ends_with_one_line(
    server: FakeAnthropic, make_work, capsys: pytest.CaptureFixture
) -> None:
    server.key = "sk-ant-test-not-the-one-you-sent-000"
    work = make_work("aspen", 2, story=False)
    assert main(["diffuse", "--work", str(work), "--backend", "anthropic"]) != 0
    err = capsys.readouterr().err
    assert "ANTHROPIC_API_KEY" in err and "Traceback" not in err
    assert not (work / "story.md").exists()
