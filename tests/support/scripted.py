"""Test doubles for validation and the gate: the offline backend, scripted and recorded.

`ScriptedBackend` plays every role like the offline backend, except that its backward
pass follows a script ("remove a note", "add the note that teaches a move"), so a test
knows in advance whether a micro-step makes the writer better or worse on any work. It
can also charge a fixed price per call, so cost accounting is checked with real numbers,
and it records every call with the sandbox it was given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from skilltui.agents.base import CallResult, Request
from skilltui.agents.offline import MOVES, OfflineBackend
from skilltui.agents.tools import Sandbox
from skilltui.pool.notes import render_note


@dataclass
class Recorded:
    role: str
    request: Request
    sandbox: Sandbox | None


@dataclass
class ScriptedBackend(OfflineBackend):
    """script: one (action, target) per backward call, in order: ("remove", path), ("add", move name)
    or ("neutral", path): a note at `path` that teaches the writer nothing (an update with no effect).
    `noise` is --offline-noise for its writer."""

    script: list[tuple[str, str]] = field(default_factory=list)
    # With --candidates K: candidate k's backward calls follow by_candidate[k] instead of the
    # script, since K candidates call at once, in no fixed order.
    by_candidate: dict[int, tuple[str, str]] = field(default_factory=dict)
    cost_per_call: float = 0.0
    calls: list[Recorded] = field(default_factory=list)
    noise: float = 0.0

    def __post_init__(self) -> None:
        OfflineBackend.__init__(self, noise=self.noise)
        self._script = list(self.script)

    async def text(self, request: Request) -> CallResult:
        self.calls.append(Recorded(request.role, request, None))
        return await super().text(request)

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        self.calls.append(Recorded(request.role, request, sandbox))
        number = request.context.get("candidate")
        if request.role == "backward" and number in self.by_candidate:
            action, target = self.by_candidate[number]
        elif request.role != "backward" or not self._script:
            return await super().agent(request, sandbox)
        else:
            action, target = self._script.pop(0)
        pool = Path(request.context["pool"])
        transcript: list[dict] = []
        if action == "remove":
            self._tool(request, sandbox, transcript, "delete", path=str(pool / target))
        elif action == "neutral":
            text = render_note(NEUTRAL_DESCRIPTION, NEUTRAL_BODY)
            self._tool(request, sandbox, transcript, "create", path=str(pool / target), file_text=text)
        else:
            move = next(m for m in MOVES if m.name == target)
            text = render_note(move.description, move.body)
            self._tool(request, sandbox, transcript, "create", path=str(pool / move.path), file_text=text)
        self._tool(request, sandbox, transcript, "commit", message=f"scripted: {action} {target}")
        return self._result(request, f"{action} {target}\n", transcript)

    def _result(self, request: Request, text: str, transcript: list[dict] | None = None) -> CallResult:
        result = super()._result(request, text, transcript)
        result.cost_usd = self.cost_per_call
        return result


# Read by the writer (it names scenes) but teaching no move: an update whose effect is exactly zero.
NEUTRAL_DESCRIPTION = "Keep a scene's mood steady from its first line to its last."
NEUTRAL_BODY = "A scene that starts tense stays tense until something in it changes the mood."


def seed_pool(folder: Path, *moves: str) -> Path:
    """A folder of notes for --init-pool, teaching the named offline moves."""
    for name in moves:
        move = next(m for m in MOVES if m.name == name)
        path = folder / move.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_note(move.description, move.body), encoding="utf-8")
    return folder
