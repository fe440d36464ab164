"""Through the real SDKs: a model that opens every path it is given is never refused.

The fake Messages API plays a model that does exactly what its prompts point it at: the
writer and the backward agent open every path their prompt names, note paths exactly as
the pool listing writes them (relative to the pool), and the backward agent reads the
pool's history with `pool_log` and `pool_show`. Run through `skilltui train` with the
anthropic backend and with Claude Code, no read is refused and no tool call fails.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.pool.notes import render_note
from tests.support.fakeapi import FakeAnthropic, Recorded, Reply, _flatten_text, text, tool_use
from tests.support.fakemodel import KEY, assistant_turns, role_of
from tests.support.recorded import recorded

BACKTICKED = re.compile(r"`([^`\s]+)`")
LISTED_NOTE = re.compile(r"^- ([a-z0-9-]+/[a-z0-9-]+\.md): ", re.MULTILINE)
NOTE = render_note("Keep stage business short: one seen action per line.", "Write what is seen, once, briefly.")


def given_paths(prompt: str) -> list[str]:
    """Every path the prompt hands over to be read, exactly as written (the episode files to write aside)."""
    paths = [p for p in BACKTICKED.findall(prompt) if p.startswith("/") and not p.endswith(".fountain")]
    return list(dict.fromkeys(paths + LISTED_NOTE.findall(prompt)))


class PathModel:
    def __init__(self) -> None:
        self.opened: dict[str, list[str]] = {"forward": [], "backward": []}
        self.errors: list[str] = []

    def tool(self, r: Recorded, name: str, **args: object) -> dict:
        if "str_replace_based_edit_tool" in r.tool_names:
            if name in ("view", "create"):
                return tool_use("str_replace_based_edit_tool", {"command": name, **args})
            return tool_use(name, dict(args))
        return tool_use(f"mcp__files__{name}", dict(args))

    def __call__(self, r: Recorded) -> Reply:
        role = role_of(r)
        if role in ("loss", "reduce"):
            return Reply([text("## Loss report\n\nScenes are not marked the way the human episodes mark them.")])
        if role not in ("forward", "backward"):
            return Reply([text("ok")])
        for result in r.tool_results():
            if result.get("is_error"):
                self.errors.append(_flatten_text(result.get("content")))
        prompt = _flatten_text(r.body["messages"][0]["content"])
        turn = assistant_turns(r)
        if turn == 0:
            paths = given_paths(prompt)
            self.opened[role] += paths
            calls = [self.tool(r, "view", path=p) for p in paths]
            if role == "backward":
                calls += [self.tool(r, "pool_log", limit=5), self.tool(r, "pool_show", rev="HEAD", path=".")]
            return Reply(calls)
        if turn == 1 and role == "forward":
            first, last = map(int, re.search(r"# Write episodes (\d+) to (\d+)", prompt).groups())
            scripts = re.search(r"Write each episode to `([^`]+)/NN\.fountain`", prompt).group(1)
            return Reply(
                [
                    self.tool(r, "create", path=f"{scripts}/{n:02d}.fountain", file_text="INT. ROOM - DAY\n\nA beat.\n")
                    for n in range(first, last + 1)
                ]
            )
        if turn == 1 and role == "backward":
            return Reply([self.tool(r, "create", path="action/one-action.md", file_text=NOTE)])
        if turn == 2 and role == "backward":
            subject = re.search(r"The first line of the message is\s+`([^`]+)`", prompt).group(1)
            message = f"{subject}\n\nObserved: x.\nChanged: one action note.\nPrediction: chrf should rise."
            return Reply([self.tool(r, "commit", message=message)])
        return Reply([text("done")])


def donor(tmp_path: Path) -> Path:
    pool = tmp_path / "donor"
    for rel in ("scene/scene-headings.md", "dialogue/cues.md"):
        (pool / rel).parent.mkdir(parents=True, exist_ok=True)
        (pool / rel).write_text(render_note(f"When to read {rel}: always.", "Invented guidance: INT. SIGNAL BOX."))
    return pool


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("backend", ["anthropic", "claude-code"])
def test_a_model_that_opens_every_path_it_is_given_is_never_refused(
    backend: str, make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "claude-code":
        pytest.importorskip("claude_agent_sdk")
        config = tmp_path / "claude-config"
        config.mkdir()
        for name, value in {
            "CLAUDE_CONFIG_DIR": str(config),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }.items():
            monkeypatch.setenv(name, value)
    works = [make_work("plover", 2), make_work("quail", 2)]
    model = PathModel()
    with FakeAnthropic(model) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        runs = tmp_path / "runs"
        argv = ["train", "--auto", "--backend", backend, "--runs-dir", str(runs), "--run-id", "r", "--steps", "1"]
        argv += ["--group-size", "2", "--init-pool", str(donor(tmp_path))]
        for work in works:
            argv += ["--work", str(work)]
        assert main(argv) == 0
    run = runs / "r"
    events = recorded(run / "events.jsonl")
    assert [e for e in events if e["kind"] == "tool" and e["error"] is not None] == []
    assert model.errors == []
    # What was opened: the notes as listed, the story; the group's summary, reports, scores and traces.
    assert "scene/scene-headings.md" in model.opened["forward"]
    assert any(p.endswith("stories/plover.md") for p in model.opened["forward"])
    for name in ("plover", "quail"):
        assert any(p.endswith(f"works/{name}/reads.json") for p in model.opened["backward"])
        assert any(p.endswith(f"loss/{name}.md") for p in model.opened["backward"])
    used = {e["tool"] for e in events if e["kind"] == "tool" and e["role"] == "backward"}
    assert {"pool_log", "pool_show", "commit"} <= used
    assert (run / "memory" / "action" / "one-action.md").read_text() == NOTE
    trace = json.loads((run / "epoch0" / "step0" / "works" / "plover" / "reads.json").read_text())
    # Both notes were opened before episode 1 was written, and the trace says so per episode.
    assert set(trace["episodes"]["1"]) == set(trace["notes"]) == {"dialogue/cues.md", "scene/scene-headings.md"}
