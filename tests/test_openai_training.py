"""Training through the real `openai` SDK: `skilltui train --backend openai` against the fake chat-completions server.

These tests type the commands a user types, with `OPENAI_API_KEY` and `OPENAI_BASE_URL`
pointing at `tests/support/fakeopenai.py` on 127.0.0.1. The fake model plays every role from the
prompts it is sent, as `test_anthropic_training.py`'s does over the Messages API: the
writer views the story and creates the episodes with the `create` function, the judge and
the reducer answer in prose, the backward agent writes a note and commits. The demo's
works trained this way make the same kinds of events, commits and reports as trained
with `--backend anthropic` against the fake Messages API.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from tests.support.recorded import recorded

pytest.importorskip("openai", reason="the openai extra is not installed (pip install -e '.[openai]')")

from skilltui.cli import main  # noqa: E402
from skilltui.engine.data.diffuse import noise_work  # noqa: E402
from skilltui.engine.data.works import load_work  # noqa: E402
from skilltui.pool.notes import Pool, render_note  # noqa: E402
from tests.support.fakeapi import FakeAnthropic  # noqa: E402
from tests.support.fakemodel import FakeModel as AnthropicModel  # noqa: E402
from tests.support.fakeopenai import FakeOpenAI, Recorded, Reply, call  # noqa: E402
from tests.support.validation import run_texts  # noqa: E402

KEY = "sk-proj-training-0123456789abcdefABCDEF"
MODEL = "gpt-4.1-mini"
NOTE = render_note(
    "Keep every line of dialogue short and said by someone present.",
    "Write dialogue as character cues with short lines. Cut speeches in half.",
)


def role_of(r: Recorded) -> str:
    if "Call the tool ready" in r.first_user_text or "one word: ready" in r.first_user_text:
        return "preflight"
    for role in ("forward", "loss", "reduce", "backward", "consolidate"):
        if f"You are the {role} agent" in r.system:
            return role
    return "other"


class FakeModel:
    """Plays every role from the prompt alone, over chat completions with function calls."""

    def __init__(self) -> None:
        self.refused: list[str] = []

    def __call__(self, r: Recorded) -> Reply:
        role = role_of(r)
        if role == "preflight":
            return Reply("", [call("ready", {})]) if r.tool_names else Reply("ready")
        if role == "forward":
            return self.writer(r)
        if role == "backward":
            return self.optimizer(r)
        if role == "loss":
            return Reply(f"## What went wrong\n\nThe writer turned dialogue into action ({KEY}).")
        if role == "reduce":
            return Reply("## Common to every work\n\nDialogue is flattened into action lines.")
        return Reply("ok")

    def writer(self, r: Recorded) -> Reply:
        prompt = r.first_user_text
        first, last = map(int, re.search(r"# Write episodes (\d+) to (\d+)", prompt).groups())
        story = re.search(r"The story: `([^`]+)`", prompt).group(1)
        scripts = re.search(r"Write each episode to `([^`]+)/NN\.fountain`", prompt).group(1)
        turn = r.assistant_turns()
        if turn == 0:
            human = Path(story).parent / "human" / f"{first:02d}.fountain"
            return Reply("Reading the story.", [call("view", {"path": story}), call("view", {"path": str(human)})])
        if turn == 1:
            self.refused += [t for t in r.tool_results() if "off-limits" in t]
            text = "INT. ROOM - DAY\n\nEpisode {n} begins.\n\nADA\nHello.\n"
            files = [
                call("create", {"path": f"{scripts}/{n:02d}.fountain", "file_text": text.format(n=n)})
                for n in range(first, last + 1)
            ]
            return Reply("", files)
        return Reply(f"I wrote episodes {first} to {last}.")

    def optimizer(self, r: Recorded) -> Reply:
        turn = r.assistant_turns()
        if turn == 0:
            return Reply("", [call("create", {"path": "dialogue/keep-lines-short.md", "file_text": NOTE})])
        if turn == 1:
            return Reply("", [call("commit", {"message": "Add a dialogue note: every work flattened its dialogue."})])
        return Reply("Committed one note.")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(FakeModel(), key=KEY) as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server
    assert server.failures == [], server.failures


def demo_works(root: Path) -> list[Path]:
    """The demo's bundled works with their stories, as `skilltui demo` prepares them."""
    works = []
    for source in sorted(Path(str(resources.files("skilltui") / "examples")).iterdir()):
        if (source / "human").is_dir():
            copy = root / source.name
            shutil.copytree(source, copy)
            (copy / "story.md").write_text(noise_work(load_work(copy), seed=0, noise=0.3))
            works.append(copy)
    return works


def train_argv(backend: str, runs: Path, works: list[Path], *extra: str) -> list[str]:
    argv = ["train", "--auto", "--backend", backend, "--runs-dir", str(runs), "--run-id", "r", "--no-consolidate"]
    for work in works:
        argv += ["--work", str(work)]
    return argv + list(extra)


def kinds(run: Path) -> set[str]:
    return {e["kind"] for e in recorded(run / "events.jsonl")}


def files_of(run: Path) -> set[str]:
    """The run's records by kind of file, named without the backend's own words."""
    skip = {"memory", "transcripts"}
    return {
        str(p.relative_to(run))
        for p in run.rglob("*")
        if p.is_file() and not set(p.relative_to(run).parts) & skip and ".git" not in p.parts
    }


def assert_no_key_anywhere(root: Path) -> None:
    texts = list(run_texts(root))  # the git repos' objects read decompressed, not as zlib bytes
    assert texts and not [where for where, text in texts if KEY in text]


@pytest.mark.slow
def test_the_demo_works_train_with_openai_as_they_do_with_anthropic(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    works = demo_works(tmp_path / "works")
    settings = ["--steps", "2", "--group-size", "2", "--model", MODEL]
    assert main(train_argv("openai", tmp_path / "openai", works, *settings)) == 0
    openai_run = tmp_path / "openai" / "r"

    with FakeAnthropic() as anthropic_server:
        anthropic_server.script = AnthropicModel(tmp_path / "works")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-demo-comparison-000000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
        anthropic_settings = ["--steps", "2", "--group-size", "2", "--model", "claude-sonnet-5-5"]
        assert main(train_argv("anthropic", tmp_path / "anthropic", works, *anthropic_settings)) == 0
    anthropic_run = tmp_path / "anthropic" / "r"

    # The same kinds of events, the same records on disk, the same commits.
    assert kinds(openai_run) == kinds(anthropic_run)
    assert files_of(openai_run) == files_of(anthropic_run)
    pools = [Pool(run / "memory") for run in (openai_run, anthropic_run)]
    subjects = [p.git("log", "--format=%s").splitlines() for p in pools]
    assert len(subjects[0]) == len(subjects[1]) > 1
    assert (openai_run / "memory" / "dialogue" / "keep-lines-short.md").read_text() == NOTE

    # Every call was the openai backend's, priced from the table, and the run's total is their sum.
    events = recorded(openai_run / "events.jsonl")
    calls = [e for e in events if e["kind"] == "call"]
    assert {e["role"] for e in calls} == {"forward", "loss", "reduce", "backward"}
    assert all(e["backend"] == "openai" and e["model"] == MODEL and e["cost_usd"] for e in calls)
    assert events[-1]["status"] == "finished"
    assert events[-1]["cost_usd"] == pytest.approx(sum(e["cost_usd"] for e in calls), abs=1e-6)
    assert any(e["cache_read_tokens"] > 0 for e in calls if e["role"] == "forward")
    # The writers were offered the file functions, the backward agents commit and history too.
    by_role: dict[str, list[Recorded]] = {}
    for r in fake.chat_requests:
        by_role.setdefault(role_of(r), []).append(r)
    assert all(r.tool_names == ["view", "create", "str_replace", "insert", "delete_file"] for r in by_role["forward"])
    assert all("commit" in r.tool_names and "pool_log" in r.tool_names for r in by_role["backward"])
    assert not any(r.tool_names for r in by_role["loss"] + by_role["reduce"])
    assert "[REDACTED]" in next((openai_run / "epoch0" / "step0" / "loss").glob("*.md")).read_text()
    assert_no_key_anywhere(tmp_path / "openai")
    assert KEY not in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_run_killed_mid_call_resumes_without_paying_a_finished_call_twice(tmp_path: Path, make_work) -> None:
    work = make_work("harbour", 2)
    arrived, release = threading.Event(), threading.Event()
    model = FakeModel()

    def script(r: Recorded) -> Reply:
        if role_of(r) == "loss" and not arrived.is_set():
            arrived.set()  # the judge's call is open: the test kills the process now
            release.wait(60)
        return model(r)

    runs = tmp_path / "runs"
    with FakeOpenAI(script, key=KEY) as server:
        env = {**os.environ, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.base_url}
        argv = [sys.executable, "-m", "skilltui", *train_argv("openai", runs, [work], "--steps", "1", "--model", MODEL)]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            assert arrived.wait(120), proc.stderr.read() if proc.poll() is not None else "no loss call came"
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        finally:
            release.set()
        first = [e for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "call"]
        assert [e["role"] for e in first] == ["forward"]

        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        calls = [e for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "call"]
        assert [e["role"] for e in calls] == ["forward", "loss", "backward"]  # the writer was not paid twice
        writers = [r for r in server.chat_requests if role_of(r) == "forward" and r.assistant_turns() == 0]
        assert len(writers) == 1
        judges = [r for r in server.chat_requests if role_of(r) == "loss"]
        assert len(judges) == 2  # the killed call, then the one that finished
        events = recorded(runs / "r" / "events.jsonl")
        assert events[-1]["kind"] == "run_finished" and events[-1]["status"] == "finished"
        assert events[-1]["cost_usd"] == pytest.approx(sum(e["cost_usd"] for e in calls), abs=1e-6)


def one_line_exit_2(code: int, capsys: pytest.CaptureFixture, words: str) -> None:
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert words in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_no_key_and_no_base_url_is_one_line_and_writes_nothing(
    make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code = main(train_argv("openai", tmp_path / "runs", [make_work("cedar", 2)], "--steps", "1"))
    one_line_exit_2(code, capsys, "OPENAI_API_KEY")
    assert not (tmp_path / "runs").exists()


def test_a_base_url_that_refuses_is_one_line_and_writes_nothing(
    make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    argv = train_argv("openai", tmp_path / "runs", [make_work("cedar", 2)], "--steps", "1", "--model", "llama3")
    code = main([*argv, "--base-url", f"http://127.0.0.1:{port}/v1"])
    one_line_exit_2(code, capsys, "connection failed")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("kind", ["refused with a 400", "ignored"])
def test_a_model_without_tool_support_is_one_line_and_writes_nothing(
    fake: FakeOpenAI, kind: str, make_work, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    if kind == "ignored":
        fake.script = lambda r: Reply("Sure! I am ready.")
    else:
        fake.tools_supported = False
    code = main(train_argv("openai", tmp_path / "runs", [make_work("cedar", 2)], "--steps", "1", "--model", "gemma:2b"))
    one_line_exit_2(code, capsys, "choose a model with tool support")
    assert not (tmp_path / "runs").exists()
    assert len(fake.chat_requests) == 1


def test_role_models_write_with_one_backend_and_edit_the_notes_with_another(
    fake: FakeOpenAI, make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    works = [make_work("kestrel", 2)]
    runs = tmp_path / "runs"
    with FakeAnthropic() as anthropic_server:
        anthropic_server.script = AnthropicModel(tmp_path / "works")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-role-models-0000000000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
        roles = ["--role-model", "writer=openai:llama3:8b", "--role-model", "backward=anthropic:claude-haiku-5-5"]
        argv = train_argv("anthropic", runs, works, "--steps", "1", "--model", "claude-sonnet-5-5", *roles)
        assert main(argv) == 0
        assert "openai: llama3:8b" in capsys.readouterr().err  # its tool calls were checked first
        calls = [e for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "call"]
        assert [(e["role"], e["backend"], e["model"]) for e in calls] == [
            ("forward", "openai", "llama3:8b"),
            ("loss", "anthropic", "claude-sonnet-5-5"),
            ("backward", "anthropic", "claude-haiku-5-5"),
        ]
        assert calls[0]["cost_usd"] is None and calls[1]["cost_usd"]  # a local model has no price
        assert {role_of(r) for r in fake.chat_requests} == {"preflight", "forward"}
        assert (runs / "r" / "memory" / "dialogue" / "keep-lines-short.md").read_text() == NOTE
        config = json.loads((runs / "r" / "config.json").read_text())
        assert config["role_backends"] == {"forward": "openai"}  # backward is on the run's own backend

        # A resume with the writer on another backend is another run: refused, nothing changed.
        before = len(fake.requests) + len(anthropic_server.requests)
        other = ["--role-model", "writer=anthropic:llama3:8b", "--role-model", "backward=anthropic:claude-haiku-5-5"]
        code = main(train_argv("anthropic", runs, works, "--steps", "1", "--model", "claude-sonnet-5-5", *other))
        assert code == 2 and "Traceback" not in capsys.readouterr().err
        assert len(fake.requests) + len(anthropic_server.requests) == before


def test_estimate_prices_openai_models_and_says_a_local_one_has_no_price(
    make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # an estimate calls nobody, so needs no key
    works = [make_work("quarry", 4)]
    runs = tmp_path / "runs"
    assert main(train_argv("openai", runs, works, "--steps", "2", "--model", MODEL, "--estimate")) == 0
    out = capsys.readouterr().out
    assert f"forward          {MODEL}" in out
    dollars = next(line for line in out.splitlines() if line.startswith("dollars:"))
    assert re.search(r"\$\d+\.\d\d without caching", dollars) and "--batch" not in dollars
    assert main(train_argv("openai", runs, works, "--steps", "2", "--model", "llama3", "--estimate")) == 0
    out = capsys.readouterr().out
    assert "price unknown: llama3" in out
    assert not runs.exists()


def test_max_cost_stops_an_openai_run_before_a_stage_and_it_resumes(
    fake: FakeOpenAI, make_work, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    works = [make_work("quarry", 2)]
    runs = tmp_path / "runs"
    assert main(train_argv("openai", runs, works, "--steps", "1", "--model", MODEL, "--max-cost", "0.000001")) == 0
    assert "--max-cost" in capsys.readouterr().err
    events = recorded(runs / "r" / "events.jsonl")
    assert events[-1]["status"] == "stopped" and [e["role"] for e in events if e["kind"] == "call"] == ["forward"]
    assert main(train_argv("openai", runs, works, "--steps", "1", "--model", MODEL)) == 0
    events = recorded(runs / "r" / "events.jsonl")
    assert [e["role"] for e in events if e["kind"] == "call"] == ["forward", "loss", "backward"]
    assert events[-1]["status"] == "finished"


def test_max_cost_with_a_model_without_a_price_says_what_it_cannot_count(
    fake: FakeOpenAI, make_work, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    argv = train_argv("openai", tmp_path / "runs", [make_work("quarry", 2)], "--steps", "1", "--model", "llama3")
    assert main([*argv, "--max-cost", "1"]) == 0
    err = capsys.readouterr().err
    assert "--max-cost counts only calls with a price: llama3" in err
    calls = [e for e in recorded(tmp_path / "runs" / "r" / "events.jsonl") if e["kind"] == "call"]
    assert calls and all(e["cost_usd"] is None and e["input_tokens"] > 0 for e in calls)


def test_diffuse_writes_a_story_through_openai(fake: FakeOpenAI, make_work, capsys: pytest.CaptureFixture) -> None:
    fake.script = lambda r: Reply(f"PROSE RETELLING, key {KEY}")
    work = make_work("orchard", 2, story=False)
    assert main(["diffuse", "--work", str(work), "--backend", "openai", "--model", MODEL]) == 0
    assert f"diffuse: model {MODEL} (openai)" in capsys.readouterr().err
    story = (work / "story.md").read_text()
    assert "## Episode 2" in story and "PROSE RETELLING" in story and KEY not in story
    assert {r.body["model"] for r in fake.chat_requests} == {MODEL} and len(fake.chat_requests) == 2


def test_batch_judges_on_anthropic_while_an_openai_model_writes(
    fake: FakeOpenAI, make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    works = [make_work("kestrel", 2), make_work("lantern", 2)]
    runs = tmp_path / "runs"
    with FakeAnthropic() as anthropic_server:
        anthropic_server.script = AnthropicModel(tmp_path / "works")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-batch-roles-000000000000")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.base_url)
        argv = train_argv("anthropic", runs, works, "--steps", "1", "--group-size", "0", "--batch", "--workers", "1")
        assert main([*argv, "--role-model", f"writer=openai:{MODEL}"]) == 0
        assert [len(b.requests) for b in anthropic_server.batches.created] == [2, 1]  # the judges, the reduce
    calls = [e for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "call"]
    assert {(e["role"], e["backend"]) for e in calls} == {
        ("forward", "openai"),
        ("loss", "anthropic"),
        ("reduce", "anthropic"),
        ("backward", "anthropic"),
    }
    # --batch on roles that call another backend is refused before anything is written.
    code = main([*train_argv("anthropic", tmp_path / "other", works, "--batch"), "--role-model", "judge=openai:x"])
    assert code == 2 and not (tmp_path / "other").exists()
