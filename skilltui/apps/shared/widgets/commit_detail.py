"""The selected commit in full: message, micro-step, decision, loss, notes, and where it stands.

It is drawn as Textual `Content` in the theme's text colours ($text-accent, $text-success,
...), never ANSI names, so it stays readable in the dark and the light theme alike.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Protocol

from textual.content import Content
from textual.widgets import Static

from ....model.commits import Commit, decision_words
from ....pool.repo import STATUS_WORDS

MUTED = "$foreground-muted"
Part = str | tuple[str, str] | Content


class NoteStats(Protocol):
    """What the detail shows of a note's attribution (`engine.update.attribution.NoteStats` has it)."""

    @property
    def short(self) -> str: ...


class CommitDetail(Static):
    """Everything the list row had to cut short, for the commit under the cursor."""

    DEFAULT_CSS = """
    CommitDetail {
        height: 10;
        padding: 0 1;
        border: round $secondary;
        overflow-y: auto;
    }
    """

    def show(self, commit: Commit | None, head: str, attribution: Mapping[str, NoteStats] | None = None) -> None:
        self.update(describe(commit, head, attribution) if commit else Content.styled("no commit selected", MUTED))


def outcome(commit: Commit) -> Content:
    """The prediction the commit made, and beside it what the loss parts then did."""
    parts: list[Part] = [("predicted: ", "bold"), (commit.prediction or "(no prediction in the commit message)") + "\n"]
    parts.append(("then:      ", "bold"))
    if not commit.parts_after:
        parts.append(("not measured yet (no later step has finished)\n", MUTED))
        return Content.assemble(*parts)
    said = commit.prediction.lower()
    for index, (name, after) in enumerate(commit.parts_after.items()):
        before = commit.parts_before.get(name)
        move = "" if before is None else f" ({after - before:+.3f})"
        # The part the prediction named is bold.
        piece = f"{name} {'?' if before is None else f'{before:.3f}'}→{after:.3f}{move}"
        parts += [", " if index else "", (piece, "bold" if name.lower() in said else "")]
    parts.append(("  (similarity, higher is better)\n", MUTED))
    return Content.assemble(*parts)


def led_to(commit: Commit) -> Content:
    """What the decision about the commit led to: the loss it was kept through, or what replaced it."""
    before = f"{commit.loss_before:.3f}" if commit.loss_before is not None else "?"
    after = f"{commit.loss_after:.3f}" if commit.loss_after is not None else "none yet"
    decision = commit.mark.decision if commit.mark else ""
    parts: list[Part] = []
    if decision == "pending":
        parts.append(("awaiting review: ", "bold"))
        parts.append((f"the step it acted on had loss {before}; nothing builds on it until it is decided\n", MUTED))
    elif decision == "rollback":
        parent = commit.parents[0][:7] if commit.parents else "the commit before"
        parts.append((f"rolled back: the pool went back to {parent}", "bold"))
        parts.append(f"; loss {before} was the step it acted on, and the next step ran without it ({after})\n")
    elif decision == "rerun":
        again = f"made {commit.rerun_as[:7]} instead" if commit.rerun_as else "has not committed yet"
        parts.append((f"rerun: the micro-step ran again and {again}", "bold"))
        parts.append(f"; loss {before} was the step it acted on\n")
    else:
        parts.append((f"loss {before} → {after}", "bold"))
        scope = f", {commit.loss_scope()}" if commit.loss_scope() else ""
        said = ": mean loss of the step whose reports it acted on → mean loss of the next step"
        parts.append((f"{said}{scope}\n", MUTED))
    return Content.assemble(*parts)


def describe(commit: Commit, head: str, attribution: Mapping[str, NoteStats] | None = None) -> Content:
    parts: list[Part] = []
    stamp = _dt.datetime.fromtimestamp(commit.time).strftime("%Y-%m-%d %H:%M:%S")
    parts.append((commit.sha[:12], "$text-accent bold"))
    parts.append(f"  {stamp}")
    if commit.sha == head:
        parts.append(("  HEAD", "$text-success bold"))
    if not commit.in_history:
        kept = ", ".join(f"refs/skilltui/{r}" for r in commit.kept_as) or "no ref"
        parts.append((f"  not in the pool: dropped, kept as {kept}", "$text-error bold"))
    if commit.reverted_by:
        parts.append((f"  reverted by {commit.reverted_by[:7]}", "$text-secondary"))
    parts.append("\n")
    subject, _, body = commit.message.partition("\n")
    parts.append((subject, "bold"))
    parts.append("\n")
    for line in body.strip("\n").splitlines():
        parts.append((f"  {line}\n", "italic"))
    micro = commit.micro
    if micro is not None:
        parts.append(f"micro-step {micro.label}, attempt {micro.attempt}; works {', '.join(micro.works) or '-'}; ")
        parts.append((commit.decision or "awaiting review", "bold"))
        if micro.note:
            parts.append(f" (note: {micro.note})")
        parts.append("\n")
        for earlier in commit.earlier:
            word = decision_words(earlier.decision, earlier.by)
            note = f" (note: {earlier.note})" if earlier.note else ""
            parts.append((f"attempt {earlier.attempt} made this same commit: {word}{note}\n", MUTED))
        parts += [led_to(commit), outcome(commit)]
    elif commit.decision:
        parts.append((f"{commit.decision}\n", "bold"))
    if commit.files:
        parts.append("notes: ")
        parts.append("; ".join(f"{STATUS_WORDS.get(s, s)} {p}" for s, p in commit.files))
        for _, path in commit.files:
            stats = (attribution or {}).get(path)
            if stats is not None:
                parts.append((f"\n  {path}: {stats.short}", MUTED))
                parts.append((" (forward passes that read it · mean loss with it vs without it)", MUTED))
    else:
        parts.append(("notes: none changed (an empty commit)", MUTED))
    return Content.assemble(*parts)
