"""The offline backend's backward pass: a small deterministic optimizer that uses the same evidence a model gets.

It does what the backward prompt asks of a model, through the same tools:

- reads the commonality report (or the loss reports) and takes the weakest part;
- reads the per-episode read traces, to tell a note the writer never opened from one it
  opened and still failed with;
- reads the pool's history with `pool_log`, and does not add back a note a reviewer
  rolled back;
- honours a reviewer's rerun note, visibly: a note that names a craft move or a part of
  the loss decides what it targets; a note that names none makes it move on from what it
  tried before, so a rerun differs;
- writes the note with invented examples, and when the commit tool refuses it (a leak of
  a training work's names, say) swaps in another invented example and commits again;
- commits with a structured body (Observed / Changed / Prediction).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..core.formats import render_note
from ..core.json_read import loads
from ..core.words import counted
from .base import Request
from .offline_moves import MOVES, MOVES_FOR_SCORE, report_scores
from .tools import Sandbox, ToolCode, ToolError

# Invented stand-ins for the examples in the notes, tried in order when a commit is refused.
EXAMPLE_SETS: tuple[dict[str, str], ...] = (
    {},
    {"MARA": "TOVE", "KITCHEN": "LIGHTHOUSE", "HARBOUR": "ORCHARD"},
    {"MARA": "ISOLDE", "KITCHEN": "OBSERVATORY", "HARBOUR": "SALT FLATS"},
)
# Words in a reviewer's note that point at a move (checked in this order).
MOVE_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("transition", ("transition", "cut to", "cuts")),
    ("parenthetical", ("parenthetical", "manner", "how a line")),
    ("economy", ("economy", "action line", "meanwhile", "wording", "chrf")),
    ("scene", ("scene heading", "heading", "slug", "scenes")),
    ("dialogue", ("dialogue", "speech", "speaker", "cue")),
)

Tool = Callable[..., str]


def backward(request: Request, sandbox: Sandbox, tool: Tool, read: Callable[[str], str]) -> str:
    """One offline backward attempt. `tool(command, **args)` runs a traced tool; `read(path)` reads a file whole."""
    ctx: dict[str, Any] = request.context
    evidence = [ctx["summary"]] if ctx.get("summary") else list(ctx["reports"])
    totals: dict[str, list[float]] = {}
    for path in evidence:
        for name, value in report_scores(read(path)).items():
            totals.setdefault(name, []).append(value)
    mean = {name: sum(v) / len(v) for name, v in totals.items()}
    opened = _opened(ctx.get("reads", []), read)
    history = tool("pool_log", limit=5) if sandbox.history is not None else ""
    last = _last_update(history)
    present = {rel for rel, _ in ctx["headers"]}
    notes: list[str] = list(ctx.get("notes") or [])

    order = sorted(mean, key=mean.__getitem__)
    candidates = [m for part in order for m in MOVES if m.name in MOVES_FOR_SCORE.get(part, ())]
    candidates = list(dict.fromkeys(candidates))  # keep the first (weakest part) place of each move
    asked = _asked_move(notes[-1]) if notes else None
    steer = ""
    if asked is not None:
        move = next(m for m in MOVES if m.name == asked)
        candidates = [move] + [m for m in candidates if m is not move]
        steer = f'The reviewer asked: "{notes[-1]}", so this attempt targets {move.name}.'
    elif notes:
        # A rerun that names no move rejects what was tried: the first choice and every move
        # an earlier note asked for go to the back, so this attempt tries something new.
        tried = {candidates[0].name} | {named for note in notes[:-1] if (named := _asked_move(note))}
        candidates = [m for m in candidates if m.name not in tried] + [m for m in candidates if m.name in tried]
        steer = f'The reviewer asked: "{notes[-1]}"; it names no move, so this attempt tries one not tried yet.'

    refused: list[str] = []
    for move in candidates:
        if move.path in present:
            continue
        part = next((p for p in order if move.name in MOVES_FOR_SCORE.get(p, ())), move.helps)
        read_notes = sorted(opened)
        observed = (
            f"{part} is at {mean.get(part, 0.0):.3f} (weakest parts first: "
            + ", ".join(f"{p} {mean[p]:.3f}" for p in order)
            + f"); the writer opened {counted(len(read_notes), 'note')} before writing"
            + (f" ({', '.join(read_notes)})" if read_notes else "")
            + ", none of which teaches "
            + move.name
            + "."
        )
        if last:
            observed += f" The last update (pool_log): {last}."
        if steer:
            observed += " " + steer
        message = (
            f"{move.path}: teach {move.name}\n\n"
            f"Observed: {observed}\n"
            f"Changed: added {move.path}, which teaches {move.name}.\n"
            f"Prediction: the {part} part should rise, so the loss of these works should fall."
        )
        committed = False
        for examples in EXAMPLE_SETS:
            text = render_note(_swap(move.description, examples), _swap(move.body, examples))
            tool("create", path=move.path, file_text=text)
            try:
                tool("commit", message=message)
            except ToolError as exc:
                if exc.code is ToolCode.LEAK:
                    continue  # a leak: the same note with other invented examples
                break  # too big for the edit budget, or another rule: no note for this move
            committed = True
            break
        if committed:
            return f"{observed}\nAdded {move.path}.\n"
        refused.append(move.path)
        tool("delete", path=move.path)
    reason = "every move behind the weak parts is already taught"
    if refused:
        reason = f"the commit tool refused every note it could add ({', '.join(refused)})"
    tool(
        "commit",
        message=f"no change\n\nObserved: {reason}.\nChanged: nothing.\nPrediction: the loss should hold.",
    )
    return f"Nothing worth changing: {reason}.\n"


def _opened(paths: list[str], read: Callable[[str], str]) -> set[str]:
    """Every note the writers of this group opened, from their read traces."""
    opened: set[str] = set()
    for path in paths:
        try:
            trace = loads(read(path))
        except (ToolError, ValueError):
            continue
        opened.update(trace.get("notes", []) if isinstance(trace, dict) else [])  # older lists: store/migrations
    return opened


def _last_update(log: str) -> str:
    """What the run recorded about the newest training commit, from `pool_log`'s first annotation."""
    lines = log.splitlines()
    if len(lines) > 1 and lines[1].startswith(" "):
        return lines[1].strip()
    return ""


def _asked_move(note: str) -> str | None:
    lowered = note.lower()
    for name, words in MOVE_WORDS:
        if any(word in lowered for word in words):
            return name
    return None


def _swap(text: str, examples: dict[str, str]) -> str:
    for old, new in examples.items():
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
        text = re.sub(rf"\b{re.escape(old.title())}\b", new.title(), text)
    return text


def consolidate(request: Request, sandbox: Sandbox, tool: Tool, read: Callable[[str], str]) -> str:
    """The offline consolidation, deterministic: merge notes whose descriptions match, drop notes nobody read.

    Of two notes whose descriptions match (the engine lists the pairs with their score), the
    one read more this epoch is kept (a tie: the first by path) and gains every line of the
    other's guidance it lacks, then the other is removed; a merge that would break the
    linter's length bounds is left undone. A note no writer read this epoch is removed.
    Nothing new is written: every line of the result was already in the pool.
    """
    from ..core.formats import MAX_BODY_CHARS, MAX_LINES, parse_note

    ctx: dict[str, Any] = request.context
    reads: dict[str, int] = ctx["reads"]
    pool = ctx["pool"]
    gone: set[str] = set()
    merged: list[str] = []
    for pair in ctx["pairs"]:
        a, b = pair["a"], pair["b"]
        if pair["what"] != "description" or pair["score"] < ctx["match"] or {a, b} & gone:
            continue
        keep, drop = sorted((a, b), key=lambda p: (-reads.get(p, 0), p))
        kept_meta, kept_body, _ = parse_note(read(f"{pool}/{keep}"))
        _, drop_body, _ = parse_note(read(f"{pool}/{drop}"))
        have = {line.strip() for line in kept_body.splitlines()}
        extra = [line for line in drop_body.splitlines() if line.strip() and line.strip() not in have]
        guidance = kept_body.strip().removeprefix("## Guidance").strip()
        body = "\n".join([guidance, *extra]) if extra else guidance
        text = render_note(str((kept_meta or {}).get("description", "")), body)
        if len(body) > MAX_BODY_CHARS or text.count("\n") > MAX_LINES:
            continue  # too long to hold both: the pair stays for a person or a model to shorten
        if extra:
            tool("create", path=keep, file_text=text)
        tool("delete", path=drop)
        gone.add(drop)
        merged.append(f"{drop} into {keep}" + (f" ({counted(len(extra), 'line')} of its own)" if extra else ""))
    unread = [p for p in ctx["unread"] if p not in gone]
    for path in unread:
        tool("delete", path=path)
        gone.add(path)
    changed = []
    if merged:
        changed.append("merged " + "; ".join(merged))
    if unread:
        changed.append("removed " + ", ".join(unread) + " (read by no writer this epoch)")
    observed = (
        f"the pool holds {ctx['pool_tokens']:,} tokens of {ctx['pool_budget']:,.0f}; "
        f"{counted(len(ctx['pairs']), 'pair')} of near-duplicate notes, {counted(len(ctx['unread']), 'note')} unread"
    )
    message = (
        f"{'consolidate' if changed else 'no change'}\n\nObserved: {observed}.\n"
        f"Changed: {'; '.join(changed) or 'nothing'}.\n"
        "Prediction: the loss should hold while the pool shrinks."
    )
    tool("commit", message=message)
    return f"{'; '.join(changed) or 'Nothing to consolidate'}.\n"
