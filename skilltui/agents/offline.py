"""The offline backend: a deterministic stand-in for a model, with no network and no key.

It is a small program that plays every role through the same interface and the same file
tools as a model would, so the whole loop runs for real: the writer reads the story and
the notes and writes Fountain; the judge writes a report from the engine's scores; the
backward pass edits notes and commits.

What makes it a useful stand-in is that the writer's output depends on the notes it
*read*. It knows a handful of craft moves (turning "The scene is inside, at the kitchen,
by night." back into `INT. KITCHEN - NIGHT`, reported speech back into dialogue blocks,
and so on) and uses a move only when a note it opened teaches it. The backward pass
writes the note that teaches the move behind the worst score, so training really lowers
the loss, and rolling a note back really raises it again.

`latency` makes every call take that many seconds and stream its output gradually, so
demos and benchmarks behave like a run against a real model.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path

from ..core.formats import story_episodes
from . import offline_backward
from .base import BackendBase, BackendError, CallResult, Request, Usage
from .offline_moves import MOVES, report_scores
from .offline_noise import call_seed, garble, ignores_notes
from .tools import CUT, Sandbox, ToolError

SCENE = re.compile(r"^The scene is (inside and out|inside|outside), at (.+?)(?:, by (.+?))?\.$")
SAYS = re.compile(r'^(.+?) says, (?:(.+?), )?"(.*)"$')
FILLER = re.compile(r"\b(?:Then|Meanwhile|After a moment), (\w)")
TOPIC_WORDS = ("scene", "dialogue", "speech", "speaker", "parenthetical", "transition", "cut", "action", "cue")
MAX_READS = 20


def moves_taught(text: str) -> set[str]:
    """The moves a note's text teaches, recognised by the words a teaching note must use."""
    lowered = text.lower()
    return {m.name for m in MOVES if all(cue in lowered for cue in m.cues)}


def write_episode(prose: str, moves: set[str]) -> str:
    """The writer: one episode of Fountain from its prose retelling, with only the moves it knows."""
    blocks: list[str] = []
    for paragraph in (p.strip() for p in prose.split("\n\n")):
        if not paragraph:
            continue
        scene, said = SCENE.match(paragraph), SAYS.match(paragraph)
        if scene and "scene" in moves:
            where, place, time = scene.groups()
            prefix = {"inside": "INT.", "outside": "EXT.", "inside and out": "INT./EXT."}[where]
            blocks.append(f"{prefix} {place.upper()}" + (f" - {time.upper()}" if time else ""))
        elif said and "dialogue" in moves:
            name, manner, line = said.groups()
            cue = name.upper()
            if manner and "parenthetical" in moves:
                blocks.append(f"{cue}\n({manner})\n{line}")
            else:
                blocks.append(f"{cue}\n{line}")
        elif paragraph == "The picture cuts away." and "transition" in moves:
            blocks.append("CUT TO:")
        else:
            if "economy" in moves:
                paragraph = FILLER.sub(lambda m: m.group(1).upper(), paragraph)
            # Without the scene move a written scene line would read as a scene heading
            # to a parser only by accident; keep it as plain action, as a novice would.
            blocks.append(paragraph)
    return "\n\n".join(blocks) + "\n"


class OfflineBackend(BackendBase):
    name = "offline"

    def __init__(self, model: str | None = None, *, latency: float = 0, noise: float = 0, calls: float = 0) -> None:
        self.model = model or "offline"
        self.latency = max(0.0, latency)
        self.noise, self.call_noise = noise, calls  # --offline-noise (paragraphs), --offline-noise-call (whole calls)

    @property
    def deterministic(self) -> bool:
        """Without noise the same notes always give the same script: one validation pass is exact."""
        return self.noise <= 0 and self.call_noise <= 0

    # -- the interface -------------------------------------------------------------------

    async def text(self, request: Request) -> CallResult:
        if request.role == "loss":
            text = self._judge(request.context)
        elif request.role == "reduce":
            text = self._reduce(request.context)
        else:
            raise BackendError(f"the offline backend has no text role {request.role!r}")
        await self._stream(request, text)
        return self._result(request, text)

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        transcript: list[dict] = [{"role": "user", "content": request.prompt}]
        roles = {"forward": self._forward, "backward": self._backward, "consolidate": self._backward}
        if request.role not in roles:
            raise BackendError(f"the offline backend has no agent role {request.role!r}")
        # The role works in a thread, as the other backends' tools do: its file writes (each
        # synced to disk) and git commits would otherwise hold the event loop, and with it
        # the app's keys, for tens of milliseconds at a time. Each tool report is handed to
        # the loop in order, so the run's events come where they always came from; once the
        # call is over (or cancelled: the run stopped) a late report is dropped, so nothing
        # is recorded after the run's end.
        loop = asyncio.get_running_loop()
        live = True

        def report(tool: str, path: str, error: str | None) -> None:
            def deliver() -> None:
                if live:
                    request.on_tool(tool, path, error)

            loop.call_soon_threadsafe(deliver)

        try:
            text = await asyncio.to_thread(roles[request.role], replace(request, on_tool=report), sandbox, transcript)
        finally:
            live = False
        await self._stream(request, text)
        transcript.append({"role": "assistant", "content": text})
        return self._result(request, text, transcript)

    # -- roles ---------------------------------------------------------------------------

    def _tool(self, request: Request, sandbox: Sandbox, transcript: list[dict], command: str, **args: object) -> str:
        try:
            out = sandbox.run(command, {"command": command, **args})
            request.on_tool(command, str(args.get("path", "")), None)
            transcript.append({"tool": command, "input": args, "result": out[:2000]})
            return out
        except ToolError as exc:
            error = str(exc) or type(exc).__name__
            request.on_tool(command, str(args.get("path", "")), error)
            transcript.append({"tool": command, "input": args, "error": error})
            raise

    def _read_whole(self, request: Request, sandbox: Sandbox, transcript: list[dict], path: str) -> str:
        """A file through `view`, reading on where a view says it was cut, as a model is told to."""
        lines: list[str] = []
        view_range: list[int] | None = None
        while True:
            args: dict[str, object] = {"path": path} if view_range is None else {"path": path, "view_range": view_range}
            shown = self._tool(request, sandbox, transcript, "view", **args).splitlines()
            cut = CUT.match(shown[-1]) if shown else None
            lines += [line.split("\t", 1)[1] if "\t" in line else "" for line in (shown[:-1] if cut else shown)]
            if cut is None:
                return "\n".join(lines)
            view_range = [int(cut.group(1)), -1]

    def _forward(self, request: Request, sandbox: Sandbox, transcript: list[dict]) -> str:
        ctx = request.context
        episodes = story_episodes(self._read_whole(request, sandbox, transcript, ctx["story"]))
        moves: set[str] = set()
        narration = []
        read = 0
        for path, description in ctx["headers"]:
            if read >= MAX_READS or not any(word in description.lower() for word in TOPIC_WORDS):
                continue
            # By the path it is listed (and reported) under, which the sandbox takes from the pool:
            # a call relayed through a mailbox then reports the same path as a direct one.
            note = sandbox.read_text(path)
            transcript.append({"tool": "view", "input": {"path": path}, "result": note[:2000]})
            request.on_tool("view", path, None)
            read += 1
            learned = moves_taught(note)
            moves |= learned
            narration.append(f"read {path}" + (f": {', '.join(sorted(learned))}" if learned else ""))
        moves = set() if ignores_notes(self.call_noise, call_seed(ctx["out_dir"], 0)) else moves  # a bad call
        for number in range(ctx["first"], ctx["last"] + 1):
            if number not in episodes:
                raise BackendError(f"the story has no '## Episode {number}' section")
            script = garble(write_episode(episodes[number], moves), self.noise, call_seed(ctx["out_dir"], number))
            self._tool(
                request,
                sandbox,
                transcript,
                "create",
                path=str(Path(ctx["out_dir"]) / f"{number:02d}.fountain"),
                file_text=script,
            )
            narration.append(f"\nwrote episode {number}:\n{script}")
        return "\n".join(narration) or "no notes read"

    def _judge(self, ctx: dict) -> str:
        scores: dict = ctx["scores"]
        parts = scores["scores"]
        worst = min(parts, key=parts.get)
        lines = [
            f"# Loss report: {ctx['work']}, episodes {ctx['first']}-{ctx['last']}",
            "",
            f"Loss {scores['loss']:.3f} (lower is better).",
            "",
            "| part | similarity |",
            "|---|---|",
            *[f"| {name} | {value:.3f} |" for name, value in parts.items()],
            "",
            f"## Weakest: {worst}",
            "",
            DIAGNOSES[worst],
            "",
            "## Per episode",
            "",
        ]
        for number, counts in scores["counts"].items():
            lines.append(
                f"- episode {number}: scenes {counts['written_scenes']} written / {counts['human_scenes']} human, "
                f"pairs in order {counts['scene_pairs_in_order']}; "
                f"speakers {', '.join(counts['written_speakers']) or 'none'} written / "
                f"{', '.join(counts['human_speakers'])} human; words {counts['written_words']} written / "
                f"{counts['human_words']} human"
            )
        lines += ["", f"<!-- scores: {json.dumps(parts, sort_keys=True)} -->", ""]
        rubric = judge_rubric(parts, ctx.get("written") or {})
        lines += ["```json", json.dumps(rubric, indent=1), "```"]
        return "\n".join(lines) + "\n"

    def _reduce(self, ctx: dict) -> str:
        reports: dict[str, str] = ctx["reports"]
        totals: dict[str, list[float]] = {}
        for text in reports.values():
            for name, value in report_scores(text).items():
                totals.setdefault(name, []).append(value)
        mean = {name: round(sum(v) / len(v), 4) for name, v in totals.items()}
        order = sorted(mean, key=mean.__getitem__)
        lines = [
            f"# Commonality report: {', '.join(reports)}",
            "",
            "Parts from weakest to strongest, averaged over the group:",
            "",
        ]
        lines += [f"- {name}: {mean[name]:.3f}" for name in order]
        if order:
            lines += ["", f"## Common weakness: {order[0]}", "", DIAGNOSES[order[0]]]
        lines += ["", f"<!-- scores: {json.dumps(mean, sort_keys=True)} -->"]
        return "\n".join(lines) + "\n"

    def _backward(self, request: Request, sandbox: Sandbox, transcript: list[dict]) -> str:
        def tool(command: str, **args: object) -> str:
            return self._tool(request, sandbox, transcript, command, **args)

        def read(path: str) -> str:
            text = sandbox.read_text(path)
            transcript.append({"tool": "view", "input": {"path": path}, "result": text[:2000]})
            request.on_tool("view", path, None)
            return text

        role = offline_backward.consolidate if request.role == "consolidate" else offline_backward.backward
        return role(request, sandbox, tool, read)

    # -- helpers -------------------------------------------------------------------------

    async def _stream(self, request: Request, text: str) -> None:
        """Hand the output over in pieces, spread over `latency` seconds, like a streaming model."""
        if self.latency <= 0:
            request.on_delta(text)
            return
        pieces = 12
        size = max(1, -(-len(text) // pieces))
        chunks = [text[i : i + size] for i in range(0, len(text), size)] or [""]
        for chunk in chunks:
            await asyncio.sleep(self.latency / len(chunks))
            request.on_delta(chunk)

    def _result(self, request: Request, text: str, transcript: list[dict] | None = None) -> CallResult:
        # Offline "tokens" are a rough count of words, so the token columns move in demos.
        usage = Usage(input_tokens=len(f"{request.lead} {request.prompt}".split()), output_tokens=len(text.split()))
        return CallResult(
            text=text,
            usage=usage,
            cost_usd=0.0,
            model=self.model,
            transcript=transcript
            or [{"role": "user", "content": request.prompt}, {"role": "assistant", "content": text}],
        )


DIAGNOSES = {
    "scenes": "The human episodes' scenes are missing from the written ones, or cannot be told apart: "
    "scenes are not opened with headings (INT./EXT., place, time), and the action drifts from what is seen.",
    "order": "The written scenes come in another order than the human ones.",
    "dialogue": "The human episodes give lines to speaking characters under their cues; in the written "
    "ones the speakers are missing or different, and speech is narrated instead of played.",
    "speakers": "Lines that say what the human lines say are given to other characters, or to nobody.",
    "length": "The written episodes are far longer or shorter than the human ones.",
    "format": "Scene headings, character cues and the share of dialogue differ from the human episodes.",
}
FILLER_OPENERS = ("Then, ", "Meanwhile, ", "After a moment, ")


def judge_rubric(parts: dict[str, float], written: dict[int, str]) -> dict[str, dict[str, object]]:
    """The offline judge's rubric: deterministic, from the engine's parts and the written action lines."""
    action = [
        p.strip()
        for text in written.values()
        for p in text.split("\n\n")
        if p.strip() and "\n" not in p.strip() and not p.strip().isupper()
    ]
    narrated = [p for p in action if " says, " in p or p.startswith(FILLER_OPENERS)]
    visual = 1.0 - len(narrated) / len(action) if action else 0.0
    structure = (parts["order"] + parts["format"]) / 2
    return {
        "scene_purpose": {
            "score": round(parts["scenes"], 3),
            "reason": f"the written scenes cover {parts['scenes']:.0%} of the human scenes, in order",
        },
        "voice": {
            "score": round(parts["dialogue"], 3),
            "reason": f"{parts['dialogue']:.0%} of what each character says carries over, speaker by speaker",
        },
        "visual_action": {
            "score": round(visual, 3),
            "reason": f"{len(narrated)} of {len(action)} action paragraphs narrate speech or open with a connective",
        },
        "structure": {
            "score": round(structure, 3),
            "reason": f"scene order {parts['order']:.2f}, headings, cues and dialogue share {parts['format']:.2f}",
        },
    }
