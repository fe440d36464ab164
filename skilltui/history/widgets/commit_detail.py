"""The selected commit in full: message, micro-step, decision, loss, notes, and where it stands."""

from __future__ import annotations

import datetime as _dt

from rich.text import Text
from textual.widgets import Static

from ..records import DECISION_WORDS, Commit

STATUS_WORDS = {"A": "added", "M": "changed", "D": "removed"}


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

    def show(self, commit: Commit | None, head: str) -> None:
        self.update(describe(commit, head) if commit else Text("no commit selected", style="dim"))


def describe(commit: Commit, head: str) -> Text:
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
            word = DECISION_WORDS.get(earlier.decision or "", "awaiting review")
            note = f" (note: {earlier.note})" if earlier.note else ""
            text.append(f"attempt {earlier.attempt} made this same commit: {word} by {earlier.by}{note}\n", style="dim")
        before = f"{commit.loss_before:.3f}" if commit.loss_before is not None else "?"
        after = f"{commit.loss_after:.3f}" if commit.loss_after is not None else "none yet"
        text.append(f"loss {before} → {after}", style="bold")
        text.append(": mean loss of the step whose reports it acted on → mean loss of the next step\n", style="dim")
    elif commit.decision:
        text.append(f"{commit.decision}\n", style="bold")
    if commit.files:
        text.append("notes: ")
        text.append("; ".join(f"{STATUS_WORDS.get(s, s)} {p}" for s, p in commit.files))
    else:
        text.append("notes: none changed (an empty commit)", style="dim")
    return text
