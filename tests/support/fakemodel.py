"""A model that plays every role over the fake Messages API (support/fakeapi.py) from the prompt alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

from skilltui.pool.notes import render_note
from tests.support.fakeapi import Recorded, Reply, text, thinking, tool_use

KEY = "sk-ant-test-XXXX-training-5a5a5a5a5a5a"
EDITOR = "str_replace_based_edit_tool"
NOTE = render_note(
    "Keep every line of dialogue short and said by someone present.",
    "Write dialogue as character cues with short lines. Cut speeches in half.",
)


def role_of(r: Recorded) -> str:
    system = json.dumps(r.body.get("system", ""))
    if "# Retell episode" in r.last_user_text and not r.body.get("tools"):
        return "diffuse"
    for role in ("forward", "loss", "reduce", "backward"):
        if f"You are the {role} agent" in system:
            return role
    return "other"


def call(r: Recorded, command: str, **args: object) -> dict:
    """A file-tool call in whichever dialect the client offers: the text editor tool or MCP tools."""
    if EDITOR in r.tool_names:
        return tool_use(EDITOR, {"command": command, **args})
    return tool_use(f"mcp__files__{command}", dict(args))


def assistant_turns(r: Recorded) -> int:
    return sum(1 for m in r.body.get("messages", []) if m.get("role") == "assistant")


class FakeModel:
    """Plays every role from the prompt alone, the way a model would have to."""

    def __init__(self, works_dir: Path) -> None:
        self.works_dir = works_dir
        self.refused: list[str] = []

    def __call__(self, r: Recorded) -> Reply:
        role = role_of(r)
        if role == "forward":
            return self.writer(r)
        if role == "backward":
            return self.optimizer(r)
        if role == "loss":
            # A judge that echoes a key it saw somewhere: the report on disk must not carry it.
            return Reply([text(f"## What went wrong\n\nThe writer turned dialogue into action ({KEY}).")])
        if role == "reduce":
            return Reply([text("## Common to every work\n\nDialogue is flattened into action lines.")])
        return Reply([text("ok")])

    def writer(self, r: Recorded) -> Reply:
        prompt = r.body["messages"][0]["content"]
        prompt = prompt if isinstance(prompt, str) else " ".join(b.get("text", "") for b in prompt)
        first, last = map(int, re.search(r"# Write episodes (\d+) to (\d+)", prompt).groups())
        title = re.search(r"of `([^`]+)`", prompt).group(1).lower()
        story = re.search(r"The story: `([^`]+)`", prompt).group(1)
        scripts = re.search(r"Write each episode to `([^`]+)/NN\.fountain`", prompt).group(1)
        turn = assistant_turns(r)
        if turn == 0:
            human = self.works_dir / title / "human" / f"{first:02d}.fountain"
            return Reply(
                [
                    thinking("Read the story first; try the originals too."),
                    call(r, "view", path=story),
                    call(r, "view", path=str(human)),
                ]
            )
        if turn == 1:
            for result in r.tool_results():
                if result.get("is_error"):
                    self.refused.append(json.dumps(result.get("content")))
            return Reply(
                [
                    call(
                        r,
                        "create",
                        path=f"{scripts}/{n:02d}.fountain",
                        file_text=f"INT. ROOM - DAY\n\nEpisode {n} begins.\n\nADA\nHello.\n",
                    )
                    for n in range(first, last + 1)
                ]
            )
        return Reply([text(f"I wrote episodes {first} to {last}.")])

    def optimizer(self, r: Recorded) -> Reply:
        turn = assistant_turns(r)
        if turn == 0:
            return Reply([call(r, "create", path="dialogue/keep-lines-short.md", file_text=NOTE)])
        if turn == 1:
            return Reply(
                [
                    tool_use(
                        "commit" if EDITOR in r.tool_names else "mcp__files__commit",
                        {"message": "Add a dialogue note: every work flattened its dialogue."},
                    )
                ]
            )
        return Reply([text("Committed one note.")])
