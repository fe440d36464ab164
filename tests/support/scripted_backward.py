"""A scripted offline backward agent, for tests: it misbehaves on cue, the way a real model can.

`ScriptedBackward(plan)` plays the offline backend for every role except backward, where
each call takes the next entry of `plan` (the last one repeats):

- "leak": writes a note naming a character of the first training work and commits; when
  the commit tool refuses it, it rewrites the note with an invented name and commits
  again (a model that reads its tool errors);
- "leak-stubborn": commits the leaking note and gives up when refused;
- "overrun": writes two long notes and commits; when refused, deletes them and ends its turn;
- "forget": writes a good note and ends its turn without committing;
- "commit": writes a good note and commits;
- "crowd": adds a second note beside the pool's; when the commit tool refuses it for the pool
  budget, removes the notes that were there before (making room) and commits again;
- "grow-then-keep": adds a second note beside the pool's; when the commit tool refuses it,
  removes it again and commits no change (an empty commit: "nothing worth changing");
- "offline": the offline backend's own backward pass.

Each backward call's prompt is kept in `prompts`, and every tool error in `errors`.
"""

from __future__ import annotations

from skilltui.agents.base import CallResult, Request
from skilltui.agents.offline import OfflineBackend
from skilltui.agents.tools import Sandbox, ToolCode, ToolError
from skilltui.pool.notes import render_note

GOOD = render_note(
    "Open every scene with a scene heading: INT. or EXT., the place, the time of day.",
    "Write a scene heading where the story moves: INT. SIGNAL BOX - NIGHT, for an invented example.",
)

CUES = render_note(
    "Put a character cue in capitals on its own line above every spoken line.",
    "A cue names who speaks, alone on its line; a parenthetical, if any, goes on the next line.",
)


def leaking(name: str) -> str:
    return render_note(
        "Give every spoken line a character cue in capitals.",
        f"When someone speaks, put the cue on its own line, like {name} above the line.",
    )


class ScriptedBackward(OfflineBackend):
    def __init__(self, *plan: str, leak_name: str = "ADA") -> None:
        super().__init__()
        self.plan = list(plan)
        self.leak_name = leak_name
        self.calls = 0
        self.prompts: list[str] = []
        self.errors: list[str] = []
        self.codes: list[ToolCode] = []  # each error's code, beside its text

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        if request.role != "backward":
            return await super().agent(request, sandbox)
        how = self.plan[min(self.calls, len(self.plan) - 1)]
        self.calls += 1
        # Everything the model is sent, in order: the run-wide rules, the pool listing, the update.
        self.prompts.append("\n".join(part for part in (request.lead, request.prefix, request.prompt) if part))
        if how == "offline":
            return await super().agent(request, sandbox)
        if how == "forget":
            sandbox.create("scene/scene-headings.md", GOOD)
            return CallResult(text="wrote a note (and forgot to commit)")
        if how in ("leak", "leak-stubborn"):
            sandbox.create("dialogue/cues.md", leaking(self.leak_name))
            if self._commit(sandbox, "cues, with an example from the show"):
                return CallResult(text="committed")
            if how == "leak-stubborn":
                return CallResult(text="gave up")
            sandbox.create("dialogue/cues.md", leaking("QUILLON"))
            self._commit(sandbox, "cues, with an invented example")
            return CallResult(text="fixed the note and committed")
        if how == "overrun":
            body = "\n".join(f"Rule {n}: keep it short." for n in range(30))
            sandbox.create("scene/one.md", render_note("Scene rules, part one.", body))
            sandbox.create("scene/two.md", render_note("Scene rules, part two.", body))
            if not self._commit(sandbox, "two long notes"):
                sandbox.delete("scene/one.md")
                sandbox.delete("scene/two.md")
            return CallResult(text="tried to commit two long notes")
        if how == "crowd":
            earlier = [rel for rel in sandbox.run("view", {"path": "."}).split() if rel.endswith(".md")]
            sandbox.create("dialogue/cue-lines.md", CUES)
            if self._commit(sandbox, "cue lines"):
                return CallResult(text="committed")
            for rel in earlier:
                sandbox.delete(rel)
            self._commit(sandbox, "cue lines, in place of the scene headings")
            return CallResult(text="made room and committed")
        if how == "grow-then-keep":
            sandbox.create("dialogue/cue-lines.md", CUES)
            if self._commit(sandbox, "cue lines"):
                return CallResult(text="committed")
            sandbox.delete("dialogue/cue-lines.md")
            self._commit(sandbox, "nothing worth changing")
            return CallResult(text="left the pool as it was")
        if how == "commit":
            sandbox.create("scene/scene-headings.md", GOOD)
            self._commit(sandbox, "scene headings\n\nObserved: x\nChanged: y\nPrediction: scenes should rise.")
            return CallResult(text="committed")
        raise AssertionError(how)

    def _commit(self, sandbox: Sandbox, message: str) -> bool:
        try:
            sandbox.commit(message)
        except ToolError as exc:
            self.errors.append(str(exc))
            self.codes.append(exc.code)
            return False
        return True


class KnownMoves(OfflineBackend):
    """A backward agent whose every update has a known kind (for the gate's tests and bench/bench_gate.py).

    Each backward call takes the next kind of a block of the three in an order drawn from a
    generator seeded by `seed` (so every three calls make one of each):
    - "helpful": writes the note teaching an offline move the pool lacks (the writer uses it);
    - "harmful": deletes a note teaching a move the pool has (the writer loses it);
    - "neutral": writes a note the writer reads but that teaches nothing (no effect at all).
    A kind that is impossible (no move left to add, none to remove) gives way to the other one.
    `menu` names the moves it adds and removes (default: every offline move). `kinds` records
    each call's kind; the writer is the offline one, with `noise` and `call_noise`; `only`
    makes every update that kind.
    """

    def __init__(
        self,
        seed: int = 0,
        *,
        noise: float = 0.0,
        menu: tuple[str, ...] | None = None,
        call_noise: float = 0.0,
        only: str | None = None,
    ) -> None:
        super().__init__(noise=noise, calls=call_noise)
        self.only = only  # every update of this kind (the bench's null updates: "neutral")
        import random

        self.rng = random.Random(seed)
        self.menu = menu
        self.kinds: list[str] = []
        self._block: list[str] = []

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        if request.role != "backward":
            return await super().agent(request, sandbox)
        from pathlib import Path

        from skilltui.agents.offline import MOVES

        pool = Path(request.context["pool"])
        moves = [m for m in MOVES if self.menu is None or m.name in self.menu]
        present = [m for m in moves if (pool / m.path).exists()]
        missing = [m for m in moves if m not in present]
        if not self._block:
            self._block = self.rng.sample(("helpful", "harmful", "neutral"), 3)
        kind = self._block.pop(0) if self.only is None else self.only
        if kind == "helpful" and not missing:
            kind = "harmful"
        elif kind == "harmful" and not present:
            kind = "helpful"
        self.kinds.append(kind)
        if kind == "helpful":
            move = self.rng.choice(missing)
            sandbox.create(move.path, render_note(move.description, move.body))
            subject = f"teach {move.name}"
        elif kind == "harmful":
            move = self.rng.choice(present)
            sandbox.delete(move.path)
            subject = f"drop {move.name}"
        else:
            n = len(self.kinds)
            sandbox.create(f"scene/mood-{n}.md", render_note(NEUTRAL[0], NEUTRAL[1]))
            subject = f"mood note {n}"
        sandbox.commit(f"{kind}: {subject}")
        return CallResult(text=f"{kind}: {subject}")


# Read by the offline writer (its description names scenes) but teaching no move.
NEUTRAL = (
    "Keep a scene's mood steady from its first line to its last.",
    "A scene that starts tense stays tense until something in it changes the mood.",
)
