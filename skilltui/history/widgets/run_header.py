"""The top line of the review app: which run, whether it is training now, and how to read the loss column."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..records import History


class RunHeader(Static):
    """Says which run is open and whether history may change; a running run is read-only here."""

    DEFAULT_CSS = """
    RunHeader {
        height: 2;
        padding: 0 1;
        background: $panel;
    }
    """

    def show(self, history: History, shown: int, query: str | None, all_commits: bool) -> None:
        s = history.status
        text = Text()
        text.append(f"run {s.id}", style="bold")
        state_style = "bold green" if s.running else ("green" if s.state == "finished" else "yellow")
        text.append("  ")
        text.append(s.state, style=state_style)
        if s.running:
            text.append(" (read-only while it trains: u and R are refused)", style="yellow")
        text.append(f"  HEAD {history.head[:7]}")
        if history.dirty:
            text.append("  uncommitted changes in the pool", style="bold red")
        total = len(history.commits) if all_commits else len(history.in_history)
        what = "commits incl. dropped" if all_commits else "commits"
        text.append(f"  {shown}/{total} {what}" if query else f"  {total} {what}")
        if query:
            text.append(f"  search: {query!r} (esc clears)", style="bold magenta")
        text.append("\n")
        text.append(
            "loss a→b: mean loss of the step a micro-step learned from → the next step's mean (lower is better)",
            style="dim",
        )
        self.update(text)
