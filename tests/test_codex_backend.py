"""The `codex` backend: the real Codex CLI (`@openai/codex`) against the fake Responses API.

The CLI is pointed at tests/support/fakeresponses.py through the provider the backend defines
(`OPENAI_BASE_URL`). The fake model uses a model name the CLI has no metadata for, so the
CLI offers its MCP tools directly (with its own models it defers them behind a search
tool, which a model loads itself). Skipped, with the reason, when no `codex` is found
(`npm install --prefix DIR @openai/codex` and put DIR/node_modules/.bin on PATH, or set
SKILLTUI_CODEX).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from skilltui.agents.base import Request
from skilltui.agents.tools import Sandbox
from skilltui.cli import main
from skilltui.pool.repo import open_repo
from tests.support.fakemodel import NOTE
from tests.support.fakeresponses import FakeResponses, Recorded, function_call, message
from tests.support.recorded import recorded

CODEX = os.environ.get("SKILLTUI_CODEX") or shutil.which("codex")
needs_cli = pytest.mark.skipif(CODEX is None, reason="the Codex CLI is not installed (npm install @openai/codex)")

KEY = "sk-test-codex-0123456789abcdef"
MODEL = "fake-writer-1"  # a name the CLI has no metadata for: its MCP tools are offered directly
OWN = {
    "exec_command",
    "write_stdin",
    "apply_patch",
    "web_search",
    "view_image",
    "shell",
    "update_plan",
    "request_user_input",
}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    with FakeResponses() as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        if CODEX:
            monkeypatch.setenv("SKILLTUI_CODEX", CODEX)
        yield server
    assert server.failures == [], server.failures


def files(name: str, **args: Any) -> dict[str, Any]:
    """A call of one of the project's tools, as the CLI names them (its MCP server's namespace)."""
    return {**function_call(name, args), "namespace": "mcp__files"}


def instructions(r: Recorded) -> str:
    return " ".join(
        c.get("text", "") for i in r.body.get("input", []) if i.get("role") == "developer" for c in i["content"]
    )


def prompt(r: Recorded) -> str:
    users = [i for i in r.body.get("input", []) if i.get("role") == "user"]
    return users[-1]["content"][0]["text"]


def namespace_tools(r: Recorded) -> set[str]:
    return {t["name"] for n in r.body.get("tools", []) if n.get("type") == "namespace" for t in n["tools"]}


def backend():
    from skilltui.agents.codex import CodexBackend

    return CodexBackend(MODEL)


@pytest.mark.subprocess
@needs_cli
async def test_the_agent_works_only_through_the_sandbox(fake: FakeResponses, roots: dict[str, Path]) -> None:
    secret = roots["work"] / "human" / "01.fountain"

    def script(r: Recorded) -> list[dict[str, Any]]:
        done = len(r.outputs())
        if done == 0:
            return [files("view", path="dialogue/subtext.md")]
        if done == 1:
            return [files("view", path=str(secret))]
        if done == 2:
            return [files("create", path=str(roots["scripts"] / "01.fountain"), file_text="INT. DOCK - DAY\n")]
        return [message("wrote episode 1")]

    fake.script = script
    sandbox = Sandbox(
        read_roots=[roots["pool"], roots["work"]],
        write_roots=[roots["scripts"]],
        denied=[roots["work"] / "human"],
        traced=roots["pool"],
        base=roots["pool"],
    )
    tools: list[tuple[str, str, str | None]] = []
    deltas: list[str] = []
    request = Request(role="forward", prompt="Write episode 1.", system="You are the writer.", on_delta=deltas.append)
    request.on_tool = lambda *a: tools.append(a)
    result = await backend().agent(request, sandbox)
    assert result.text == "wrote episode 1" and "".join(deltas) == result.text
    assert (roots["scripts"] / "01.fountain").read_text() == "INT. DOCK - DAY\n"
    assert [(t, e is None) for t, _, e in tools] == [("view", True), ("view", False), ("create", True)]
    assert "off-limits" in str(tools[1][2])
    assert sandbox.reads == ["dialogue/subtext.md"]
    # What reached the model: our system text in place of the CLI's, our tools, none of its own.
    first = fake.responses[0]
    assert first.body["model"] == MODEL and first.headers.get("authorization") == f"Bearer {KEY}"
    assert "You are the writer." in instructions(first) and "You are Codex" not in instructions(first)
    assert prompt(first) == "Write episode 1."
    assert namespace_tools(first) == {"view", "create", "str_replace", "insert", "delete"}
    assert not OWN & set(first.tool_names)
    refused = json.dumps(fake.responses[2].outputs())
    assert "off-limits" in refused and "SECRET TARGET" not in refused
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.cost_usd is None  # a model the price table does not know has no price
    assert KEY not in json.dumps(result.transcript)
    # Every setting the backend passes is one this CLI knows (it would say it ignores the others).
    notices = [e["item"]["message"] for e in result.transcript if e.get("item", {}).get("type") == "error"]
    assert not [n for n in notices if "unrecognized" in n or "ignored" in n], notices


@pytest.mark.subprocess
@needs_cli
async def test_a_text_call_has_no_tools(fake: FakeResponses, tmp_path: Path) -> None:
    fake.script = lambda r: [message("## What went wrong\n\nDialogue flattened.")]
    result = await backend().text(Request(role="loss", prompt="Judge it.", system="You judge."))
    assert result.text.startswith("## What went wrong")
    (only,) = fake.responses
    assert not namespace_tools(only) and not OWN & set(only.tool_names)


class CodexModel:
    """Plays every training role through the project's tools, from the prompt alone."""

    def __call__(self, r: Recorded) -> list[dict[str, Any]]:
        system, done = instructions(r), len(r.outputs())
        if "You are the forward agent" in system:
            text = prompt(r)
            first, last = map(int, re.search(r"# Write episodes (\d+) to (\d+)", text).groups())
            scripts = re.search(r"Write each episode to `([^`]+)/NN\.fountain`", text).group(1)
            if done == 0:
                script = "INT. ROOM - DAY\n\nADA\nHello.\n"
                return [
                    files("create", path=f"{scripts}/{n:02d}.fountain", file_text=script)
                    for n in range(first, last + 1)
                ]  # noqa: E501
            return [message(f"I wrote episodes {first} to {last}.")]
        if "You are the backward agent" in system:
            if done == 0:
                return [files("create", path="dialogue/keep-lines-short.md", file_text=NOTE)]
            if done == 1:
                return [files("commit", message="Add a dialogue note: every work flattened its dialogue.")]
            return [message("Committed one note.")]
        return [message("## What went wrong\n\nDialogue is flattened into action lines.")]


@pytest.mark.subprocess
@needs_cli
def test_training_with_codex_puts_only_the_agents_notes_in_the_pool(fake: FakeResponses, make_work, tmp_path) -> None:
    fake.script = CodexModel()
    works = [make_work("kestrel", 4)]
    runs = tmp_path / "runs"
    argv = ["train", "--auto", "--backend", "codex", "--model", MODEL, "--runs-dir", str(runs), "--run-id", "r"]
    argv += ["--steps", "1", "--no-consolidate", "--work", str(works[0])]
    assert main(argv) == 0
    pool = runs / "r" / "memory"
    repo = open_repo(pool)
    assert [c.summary for c in repo.iter_commits()][0].startswith("train epoch 0 step 0")
    tracked = sorted(e.path for e in repo.head.commit.tree.traverse() if e.type == "blob")
    assert tracked == ["dialogue/keep-lines-short.md"]
    on_disk = sorted(str(p.relative_to(pool)) for p in pool.rglob("*") if ".git" not in p.parts)
    assert on_disk == ["dialogue", "dialogue/keep-lines-short.md"]
    # The CLI's own files (config, state databases, logs, skills) are nowhere in the run.
    names = {p.name for p in (runs / "r").rglob("*")}
    assert not names & {"config.toml", "installation_id", "skills", "log", "sessions"}
    assert not [p for p in (runs / "r").rglob("*.sqlite")]
    calls = [e for e in recorded(runs / "r" / "events.jsonl") if e["kind"] == "call"]
    assert {c["role"] for c in calls} == {"forward", "loss", "backward"}  # one work: no reduce
    for c in calls:  # each call's transcript is kept under the run: the CLI's own event stream
        kept = json.loads(Path(c["transcript"]).read_text())["transcript"]
        assert Path(c["transcript"]).is_relative_to(runs / "r") or not Path(c["transcript"]).is_absolute()
        assert any(e.get("type") == "thread.started" for e in kept) and c["input_tokens"] > 0
    for path in (runs / "r").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), f"the key leaked into {path}"


def test_estimate_with_codex_names_its_model(make_work, tmp_path, capsys) -> None:
    work = make_work("alpha")
    argv = ["train", "--estimate", "--backend", "codex", "--steps", "2", "--runs-dir", str(tmp_path / "runs")]
    assert main([*argv, "--work", str(work)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^forward\s+gpt-5\.5-codex\s+2 ", out, re.MULTILINE)
    assert "not in the price table" in out and not (tmp_path / "runs").exists()


@pytest.mark.subprocess
@needs_cli
async def test_the_clis_own_patch_tool_cannot_write(fake: FakeResponses, roots: dict[str, Path]) -> None:
    """With a model it knows, the CLI brings its patch tool: its read-only sandbox refuses every patch."""
    target = roots["pool"] / "leak.md"
    patch = f"*** Begin Patch\n*** Add File: {target}\n+written around the sandbox\n*** End Patch\n"

    def script(r: Recorded) -> list[dict[str, Any]]:
        answered = [i for i in r.body.get("input", []) if i.get("type") == "custom_tool_call_output"]
        if not answered:
            return [
                {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_p", "name": "apply_patch", "input": patch}
            ]
        return [message("patched: " + answered[0]["output"])]

    fake.script = script
    from skilltui.agents.codex import CodexBackend

    sandbox = Sandbox(read_roots=[roots["pool"]], write_roots=[roots["pool"]], base=roots["pool"])
    result = await CodexBackend("gpt-5.5-codex").agent(Request(role="backward", prompt="Edit."), sandbox)
    assert "apply_patch" in fake.responses[0].tool_names  # the test would prove nothing without it
    assert "rejected" in result.text and not target.exists()


@pytest.mark.subprocess
@needs_cli
async def test_a_call_that_outlasts_its_timeout_is_killed(fake: FakeResponses) -> None:
    import threading
    import time

    from skilltui.agents.base import BackendError

    release = threading.Event()

    def script(r: Recorded) -> list[dict[str, Any]]:
        release.wait(60)  # the model never answers while the call waits
        return [message("too late")]

    fake.script = script
    started = time.monotonic()
    try:
        with pytest.raises(BackendError, match="took longer than 3s"):
            await backend().text(Request(role="loss", prompt="Judge.", timeout=3))
    finally:
        release.set()
    assert time.monotonic() - started < 30


def test_codex_without_the_cli_or_a_key_is_refused_in_one_line(make_work, tmp_path, capsys, monkeypatch) -> None:
    work = make_work("alpha")
    runs = tmp_path / "runs"
    argv = ["train", "--auto", "--backend", "codex", "--runs-dir", str(runs), "--work", str(work)]
    monkeypatch.setenv("SKILLTUI_CODEX", str(tmp_path / "no-codex-here"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(argv) == 2
    monkeypatch.setenv("SKILLTUI_CODEX", CODEX or "/bin/true")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "npm install -g @openai/codex" in err[0] and "OPENAI_API_KEY" in err[1]
    assert not runs.exists()


@pytest.mark.slow
@pytest.mark.subprocess
@needs_cli
async def test_a_refused_key_stops_the_run(fake: FakeResponses) -> None:
    from skilltui.agents.base import FatalBackendError

    fake.refuse = 401
    with pytest.raises(FatalBackendError, match="401") as caught:
        await backend().text(Request(role="loss", prompt="Judge."))
    assert KEY not in json.dumps(caught.value.partial.transcript)
