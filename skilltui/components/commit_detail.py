"""The selected commit in full: message, micro-step, decision, loss, notes, and where it stands."""

from __future__ import annotations

import datetime as _dt
from typing import Protocol

from rich.text import Text
from textual.widgets import Static

from ..commits import Commit, decision_words
from ..pool_git import STATUS_WORDS


class NoteStats(Protocol):
    """What the detail shows of a note's attribution (`engine.attribution.NoteStats` has it)."""

    @property
    def short(self) -> str: ...


class CommitDetail(Static):
    """Everything the list row had to cut short, for the commit under the cursor."""

    DEFAULT_CSS = """
    CommitDetail {
        height: 10;
        padding: 0 1;
        border: round $secondary 50%;
        overflow-y: auto;
    }
    """

    def show(self, commit: Commit | None, head: str, attribution: dict[str, NoteStats] | None = None) -> None:
        self.update(describe(commit, head, attribution) if commit else Text("no commit selected", style="dim"))


def outcome(commit: Commit) -> Text:
    """The prediction the commit made, and beside it what the loss parts then did."""
    text = Text()
    text.append("predicted: ", style="bold")
    text.append((commit.prediction or "(no prediction in the commit message)") + "\n")
    text.append("then:      ", style="bold")
    if not commit.parts_after:
        text.append("not measured yet (no later step has finished)\n", style="dim")
        return text
    said = commit.prediction.lower()
    pieces = []
    for name, after in commit.parts_after.items():
        before = commit.parts_before.get(name)
        move = "" if before is None else f" ({after - before:+.3f})"
        piece = Text(f"{name} {'?' if before is None else f'{before:.3f}'}→{after:.3f}{move}")
        if name.lower() in said:
            piece.stylize("bold")  # the part the prediction named
        pieces.append(piece)
    text.append(Text(", ").join(pieces))
    text.append("  (similarity, higher is better)\n", style="dim")
    return text


def led_to(commit: Commit) -> Text:
    """What the decision about the commit led to: the loss it was kept through, or what replaced it."""
    before = f"{commit.loss_before:.3f}" if commit.loss_before is not None else "?"
    after = f"{commit.loss_after:.3f}" if commit.loss_after is not None else "none yet"
    decision = commit.mark.decision if commit.mark else ""
    text = Text()
    if decision == "pending":
        text.append("awaiting review: ", style="bold")
        text.append(f"the step it acted on had loss {before}; nothing builds on it until it is decided\n", style="dim")
    elif decision == "rollback":
        parent = commit.parents[0][:7] if commit.parents else "the commit before"
        text.append(f"rolled back: the pool went back to {parent}", style="bold")
        text.append(f"; loss {before} was the step it acted on, and the next step ran without it ({after})\n")
    elif decision == "rerun":
        again = f"made {commit.rerun_as[:7]} instead" if commit.rerun_as else "has not committed yet"
        text.append(f"rerun: the micro-step ran again and {again}", style="bold")
        text.append(f"; loss {before} was the step it acted on\n")
    else:
        text.append(f"loss {before} → {after}", style="bold")
        text.append(": mean loss of the step whose reports it acted on → mean loss of the next step\n", style="dim")
    return text


def describe(commit: Commit, head: str, attribution: dict[str, NoteStats] | None = None) -> Text:
    text = Text()
    stamp = _dt.datetime.fromtimestamp(commit.time).strftime("%Y-%m-%d %H:%M:%S")
    text.append(commit.sha[:12], style="bold yellow")
    text.append(f"  {stamp}")
    if commit.sha == head:
        text.append("  HEAD", style="bold green")
    if not commit.in_history:
        kept = ", ".join(f"refs/skilltui/{r}" for r in commit.kept_as) or "no ref"
        text.append(f"  not in the pool: dropped, kept as {kept}", style="bold red")
    if commit.reverted_by:
        text.append(f"  reverted by {commit.reverted_by[:7]}", style="magenta")
    text.append("\n")
    subject, _, body = commit.message.partition("\n")
    text.append(subject, style="bold")
    text.append("\n")
    for line in body.strip("\n").splitlines():
        text.append(f"  {line}\n", style="italic")
    micro = commit.micro
    if micro is not None:
        text.append(f"micro-step {micro.label}, attempt {micro.attempt}; works {', '.join(micro.works) or '-'}; ")
        text.append(commit.decision or "awaiting review", style="bold")
        if micro.note:
            text.append(f" (note: {micro.note})")
        text.append("\n")
        for earlier in commit.earlier:
            word = decision_words(earlier.decision, earlier.by)
            note = f" (note: {earlier.note})" if earlier.note else ""
            text.append(f"attempt {earlier.attempt} made this same commit: {word}{note}\n", style="dim")
        text.append(led_to(commit))
        text.append(outcome(commit))
    elif commit.decision:
        text.append(f"{commit.decision}\n", style="bold")
    if commit.files:
        text.append("notes: ")
        text.append("; ".join(f"{STATUS_WORDS.get(s, s)} {p}" for s, p in commit.files))
        for _, path in commit.files:
            stats = (attribution or {}).get(path)
            if stats is not None:
                text.append(f"\n  {path}: {stats.short}", style="dim")
                text.append(" (forward passes that read it · mean loss with it vs without it)", style="dim")
    else:
        text.append("notes: none changed (an empty commit)", style="dim")
    return text
