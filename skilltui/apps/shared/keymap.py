"""Every key of both apps in one table: the bindings, the help screens and the docs are made from it.

A row is what a person reads (the keys, what they do, on which screen) together with the
Textual `Binding`s that make it true, so a key cannot be documented one way and bound
another: each screen's `BINDINGS` is `bindings(owner)`, the `?` help of either app shows
`rows(screen)`, and the docs' key tables are `keymap_markdown()` and
`key_table("history")` (docs/gen_reference.py writes docs/reference/keys.md from them). A row whose keys a
widget or Textual itself binds (the lists' arrows and `j`/`k`, `tab`, `ctrl+p`) carries no
binding; a test checks that every key a row shows is bound somewhere on its screen and
that every binding is named by its row.

`q`, `?` and `t` mean the same in both apps (a person who knows the live app should not
have to learn `skilltui review` again), so both apps bind the same three objects; each
app implements the actions (`help` shows its own screens' rows, `toggle_theme` its themes).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from textual.binding import Binding, BindingType

QUIT = Binding("q", "quit", "Quit")
# Textual's own ctrl+c only says "press ctrl+q"; a person who presses it means quit, so it
# runs the same action as q (which, while training, asks first).
CTRL_C = Binding("ctrl+c", "quit", "Quit", show=False)
HELP = Binding("question_mark", "help", "Help")
THEME = Binding("t", "toggle_theme", "Theme", show=False)

# The screens a row belongs to, as the help screens and the docs title them.
SCREENS = {
    "main": "Main screen",
    "review": "Review screen",
    "side": "Written next to human (s)",
    "history": "skilltui review",
}


@dataclass(frozen=True)
class Row:
    """One line of help: `keys` as a person types them, `what` they do, and the bindings behind them.

    `owner` is what binds them: the screen's name, or an app's (`train` is the live app,
    whose main-screen keys work over its dialogs too; `review app` is `skilltui review`).
    """

    screen: str
    keys: str
    what: str
    binds: tuple[Binding, ...] = ()
    owner: str = ""


def row(screen: str, keys: str, what: str, *binds: Binding, owner: str = "") -> Row:
    return Row(screen, keys, what, binds, owner or screen)


def hidden(key: str, action: str, description: str) -> Binding:
    """A binding the footer leaves out: the help and the docs still list it."""
    return Binding(key, action, description, show=False)


# fmt: off
KEYMAP: tuple[Row, ...] = (
    # Quit comes first on each app's screen, so the footer keeps it in sight on a narrow terminal.
    row("main", "q / ctrl+c", "quit; while training it asks first and says how to resume the run", QUIT, CTRL_C, owner="train"),
    # The works table binds j / k beside its arrows, as the history browser's list does.
    row("main", "up / down, j / k", "choose a work: the output, report and curve follow it"),
    # The live app binds one key per pane, in the tabs' order (`apps/train/app.py`).
    row("main", "1 2 3 4", "show Output, Report, Pool, Commits"),
    row("main", "[ ]", "previous / next step of the selected work's loss report (its tab says which)", hidden("left_square_bracket", "report_step(-1)", "Earlier report"), hidden("right_square_bracket", "report_step(1)", "Later report"), owner="train"),
    # Bound by the main screen, not the app: `/` is not offered over a review or a dialog. The
    # output's search binds n, N and esc while it is open.
    row("main", "/", "search the output; n / N next / previous match, esc ends the search", Binding("slash", "search_output", "Search"), owner="main screen"),
    row("main", "tab", "move between the works, the panes and the lists in them"),
    # The pool tree binds e itself: it acts on the note under its cursor.
    row("main", "e", "in the Pool pane: open the note in $VISUAL / $EDITOR; after the run, saving commits it by hand (linted, on record); refused while training runs"),
    row("main", "s", "written next to human: the selected work's episodes beside the human ones, scene by scene as the loss matched them (the latest scored step, or the one the Report pane shows)", Binding("s", "side_by_side", "Written vs human"), owner="main screen"),
    row("main", "p", "pause before the next stage starts (calls in flight finish); again to resume", Binding("p", "pause", "Pause"), Binding("p", "resume", "Resume"), owner="train"),
    row("main", "z", "fold the end summary to its first line (and unfold it), once the run ended", Binding("z", "fold_summary", "Fold summary"), owner="train"),
    row("main", "v", "open the micro-step that waits for review", Binding("v", "open_review", "Review"), owner="train"),
    row("main", "t", "switch between the dark and the light theme", THEME, owner="train"),
    row("main", "ctrl+p", "command palette: pause, resume, theme, jump to a work, copy the run folder path"),
    row("main", "?", "this help", HELP, owner="train"),
    row("review", "a", "approve: the commit stands and training goes on", Binding("a", "approve", "Approve")),
    row("review", "r", "rerun: asks for an optional note for the next attempt's prompt", Binding("r", "rerun", "Rerun…")),
    row("review", "u", "roll back: asks to confirm with y; the pool goes back to the commit before", Binding("u", "rollback", "Roll back…")),
    row("review", "s", "written next to human for the work whose evidence is shown (the first work on the summary)", hidden("s", "side_by_side", "Written vs human")),
    row("review", "c", "the next candidate (--candidates K): its diff, delta, reads; a keeps the one shown", hidden("c", "candidate", "Next candidate")),
    row("review", "C", "every candidate's diff side by side, its delta, interval and reads above it; esc or C goes back", hidden("C", "all_candidates", "All candidates")),
    row("review", "esc / C", "(all candidates) back to the review, which decides", Binding("escape", "close", "Back"), hidden("C", "close", "Back"), owner="candidates"),
    row("review", "esc", "look at the main screen first; v brings the review back", Binding("escape", "later", "Later")),
    row("review", "[ ]", "previous / next evidence: the summary, then each work's loss report", hidden("left_square_bracket", "evidence(-1)", "Evidence"), hidden("right_square_bracket", "evidence(1)", "Next evidence")),
    # The diff is a scroll view and keeps its own scrolling keys; the screen binds tab.
    row("review", "pgup / pgdn", "scroll the diff a page up / down (the arrows scroll a line); tab gives these keys to the evidence pane, and again back to the diff", hidden("tab", "switch_pane", "Diff/evidence")),
    row("review", "?", "this help", Binding("question_mark", "app.help", "Help")),
    # The written-next-to-human screen; its rows scroll as a scroll view does (the arrows, pgup / pgdn).
    row("side", "esc", "back to the screen it was opened from", Binding("escape", "close", "Back")),
    row("side", "[ ]", "previous / next episode of the step", hidden("left_square_bracket", "episode(-1)", "Episode"), hidden("right_square_bracket", "episode(1)", "Next episode")),
    row("side", "j / k", "scroll the scenes (the arrows and pgup / pgdn too)", hidden("j", "scroll(1)", "Down"), hidden("k", "scroll(-1)", "Up")),
    row("side", "e", "open a copy of the written episode in $VISUAL / $EDITOR; what you save is paired and scored here in its place (the run keeps what the writer wrote)", Binding("e", "edit", "Edit a copy")),
    row("side", "?", "this help", Binding("question_mark", "app.help", "Help")),
    # `skilltui review`. The commit list binds its own moves; typing in the search box never
    # reaches these keys (the box takes its letters first). `t` is the theme here as in the
    # live app, so revert is `u` (undo the commit) and reset is `R`.
    row("history", "q / ctrl+c", "quit", QUIT, CTRL_C, owner="review app"),
    row("history", "j / k, arrows", "move through the commits"),
    row("history", "g g / G", "the newest / the oldest commit (home / end too)"),
    row("history", "enter", "the selected commit's diff; n / N next / previous note, e opens the note in $EDITOR (saving makes a hand commit), b the micro-step behind each of its lines, esc back", Binding("enter", "open_diff", "Diff")),
    row("history", "e", "the evidence the micro-step acted on: its commonality report (or its one loss report), each work's loss report and the notes its writer opened, reviewer notes from reruns, why earlier attempts failed their checks", Binding("e", "evidence", "Evidence")),
    row("history", "space, then d", "mark a commit, select another, diff the two (older to newer)", hidden("space", "mark", "Mark"), hidden("d", "diff_marked", "Diff marked")),
    row("history", "/", "search commit messages and the contents of the notes each commit touched; esc shows everything again", Binding("slash", "search", "Search"), hidden("escape", "clear_search", "Clear search")),
    row("history", "u", "revert (undo) the selected commit with a new inverse commit (asks; y to do it)", Binding("u", "revert", "Revert")),
    row("history", "R", "reset the pool to the selected commit (asks; y to do it)", Binding("R", "reset", "Reset to")),
    row("history", "a", "also show dropped commits (dimmed, marked ×): rerun and rolled-back attempts, commits dropped by a reset", hidden("a", "toggle_all", "Dropped too")),
    row("history", "r", "read the history again now (while the run changes it also reloads by itself)", hidden("r", "reload", "Reload")),
    row("history", "t", "switch between the dark and the light theme, as in the live app", THEME, owner="review app"),
    row("history", "?", "these keys", HELP, owner="review app"),
)
# fmt: on


def rows(screen: str) -> list[Row]:
    return [r for r in KEYMAP if r.screen == screen]


def bindings(owner: str) -> list[BindingType]:
    """What `owner` binds (a screen's name, or `train` / `review app`), in the table's order.

    Typed as Textual's BINDINGS are, so a screen's `BINDINGS = bindings(...)` matches its base class."""
    return [b for r in KEYMAP if r.owner == owner for b in r.binds]


def key_lines(screen: str, keys: int = 16, width: int = 96) -> list[str]:
    """One screen's keys as plain lines (`skilltui review --help`): the keys in a column, what they do wrapped beside."""
    indent = " " * (keys + 3)
    return [
        textwrap.fill(r.what, width, initial_indent=f"  {r.keys:<{keys}} ", subsequent_indent=indent)
        for r in rows(screen)
    ]


def key_table(screen: str) -> str:
    """One screen's keys as a markdown table."""
    lines = ["| key | what it does |", "|---|---|"]
    lines += [f"| `{r.keys}` | {r.what} |" for r in rows(screen)]
    return "\n".join(lines)


def keymap_markdown() -> str:
    """The live app's keys as the docs show them: a titled table per screen."""
    return "".join(f"**{SCREENS[screen]}**\n\n{key_table(screen)}\n\n" for screen in ("main", "review", "side"))
