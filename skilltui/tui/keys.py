"""The key map, in one place: the help screen and the README's key tables are both made from it.

Bindings themselves live beside the screens that own them; this table is what a person
reads, and a test checks that every key listed here is bound where it says.
"""

from __future__ import annotations

# (screen, keys, what it does)
KEYMAP: tuple[tuple[str, str, str], ...] = (
    ("main", "up / down", "choose a work: the output, report and curve follow it"),
    ("main", "1 2 3 4", "show Output, Report, Pool, Commits"),
    ("main", "[ ]", "previous / next step of the selected work's loss report (its tab says which)"),
    ("main", "/", "search the output; n / N next / previous match, esc ends the search"),
    ("main", "tab", "move between the works, the panes and the lists in them"),
    ("main", "p", "pause before the next stage starts (calls in flight finish); again to resume"),
    ("main", "v", "open the micro-step that waits for review"),
    ("main", "t", "switch between the dark and the light theme"),
    ("main", "ctrl+p", "command palette: pause, resume, theme, jump to a work, copy the run folder path"),
    ("main", "?", "this help"),
    ("main", "q", "quit; while training it asks first, and the same command resumes the run"),
    ("review", "a", "approve: the commit stands and training goes on"),
    ("review", "r", "rerun: asks for an optional note for the next attempt's prompt"),
    ("review", "u", "roll back: asks to confirm with y; the pool goes back to the commit before"),
    ("review", "esc", "look at the main screen first; v brings the review back"),
    ("review", "[ ]", "previous / next evidence: the summary, then each work's loss report"),
    ("review", "pgup / pgdn", "scroll the diff (up / down a line); tab moves these keys to the evidence and back"),
    ("review", "?", "this help"),
)


def keymap_markdown() -> str:
    """The key map as markdown tables, one per screen."""
    out: list[str] = []
    for screen, title in (("main", "Main screen"), ("review", "Review screen")):
        out += [f"**{title}**", "", "| key | what it does |", "|---|---|"]
        out += [f"| `{keys}` | {what} |" for where, keys, what in KEYMAP if where == screen]
        out.append("")
    return "\n".join(out)
