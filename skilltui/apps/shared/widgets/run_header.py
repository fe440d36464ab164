"""The run header both apps put on top: which run, where in it, how far, how long, how much.

A person glancing at the live app asks "where is it, how far along, is it waiting for me,
what has it cost"; one line answers all of it without moving the eyes off the works: the
status, epoch and step, a bar of the stages done in the step, the steps done of the run,
an ETA, the time since the app started, tokens, dollars (and, in full, per kept update) and
the run id. In `skilltui
review` the same widget says which run is open, its state, HEAD and the commits shown, and
how to read the loss column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from ....core.words import tokens_text

if TYPE_CHECKING:
    from ....runs.records import History

BAR_CELLS = 8

STATUS_STYLES = {
    "starting": "$foreground-muted",
    "running": "$text-success bold",
    "paused": "$text-warning bold",
    "review": "$text-accent bold reverse",
    "finished": "$text-success bold",
    "stopped": "$text-warning bold",
    "failed": "$text-error bold",
}


@dataclass(frozen=True)
class HeaderFacts:
    run_id: str = ""
    epoch: int | None = None
    step: int | None = None
    first: int | None = None
    last: int | None = None
    elapsed: float = 0.0
    tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    status: str = "starting"
    paused: bool = False
    throttled: bool = False  # the API rate-limited the key; fewer calls in flight for a while
    batch: str = ""  # a pending Message Batch's state (--batch)
    stages_done: int = 0  # of the current step
    stages_total: int = 0
    steps_done: int = 0  # of the run
    steps_total: int | None = None  # None: the run did not record its plan
    eta: str = ""  # "ETA 2m10s" or ""
    kept: int = 0  # micro-steps kept so far: the cost per kept update is what an update costs
    test: str = ""  # the latest paired test delta with its interval (--test-work), or ""


def bar_text(done: int, total: int, cells: int = BAR_CELLS) -> str:
    """`▰▰▰▱▱▱▱▱ 3/8`: a bar of `cells` cells filled in proportion."""
    filled = 0 if total <= 0 else round(cells * min(done, total) / total)
    return "▰" * filled + "▱" * (cells - filled) + f" {done}/{total}"


def elapsed_text(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class RunHeader(Widget):
    """Run facts on top of a screen: set `facts` (the live app) or call `show` (the review app)."""

    DEFAULT_CSS = """
    RunHeader {
        height: 1;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    """

    facts: reactive[HeaderFacts] = reactive(HeaderFacts, layout=False)
    history_lines: reactive[Content | None] = reactive(None)

    def render(self) -> Content:
        if self.history_lines is not None:
            return self.history_lines
        width = self.content_size.width
        # The full line where it fits; short forms on a narrow terminal, so the run id,
        # tokens and cost stay in sight at 80 columns; the tightest drops the clock (the
        # terminal's own) and says the ETA in one token, which an 80-column line needs
        # once the ETA shows.
        for level in (0, 1, 2):
            tail = self._facts(level)
            if width - tail.cell_length >= min(12, len(self.facts.run_id)):
                break
        # The run id is the one fact that can be long (derived ids name the works), so it
        # gets whatever width the others leave, cut with an ellipsis.
        room = max(8, width - tail.cell_length)
        run_id = Content.styled(self.facts.run_id, "bold").truncate(room, ellipsis=True)
        return Content.assemble(tail, run_id)

    def _facts(self, level: int) -> Content:
        """The facts before the run id: level 0 in full, 1 in short forms, 2 in the shortest."""
        f = self.facts
        compact = level > 0
        where = (
            "not started"
            if f.epoch is None
            else (f"e{f.epoch} s{f.step}" if compact else f"epoch {f.epoch} step {f.step}")
        )
        cost = f"${f.cost:.4f}" + ("" if f.cost_known else "+")
        if f.kept and level == 0:
            cost += f" (${f.cost / f.kept:.4f}/kept update)"
        status = f.status
        if f.paused and status in ("running", "starting"):
            status = "paused"
        label = {"review": "review" if compact else "waiting for review"}.get(status, status)
        if f.paused and status == "review":
            label += " · paused"
        sep = ("│" if compact else " │ ", "$foreground-muted")
        facts: list[str | tuple[str, str]] = [(f" {label} ", STATUS_STYLES.get(status, "")), sep, where]
        if f.first is not None and not compact:
            facts += [sep, f"episodes {f.first}..{f.last}"]
        if f.stages_total:
            cells = (BAR_CELLS, 4, 0)[level]
            bar = bar_text(f.stages_done, f.stages_total, cells).strip()
            facts += [sep, (bar, "$text-primary")]
        steps = f"{f.steps_done}/{f.steps_total}" if f.steps_total else f"{f.steps_done}"
        facts += [sep, f"step{'' if compact else 's'} {steps}"]
        if f.eta:
            facts += [sep, f.eta.replace(" · run ", "/") if level == 2 else f.eta]
        if f.throttled:
            facts += [sep, ("throttled", STATUS_STYLES["paused"])]
        if f.batch:
            facts += [sep, (f.batch, "$text-accent")]
        if f.test:  # the one figure a person may quote: kept at every width, shorter when narrow
            facts += [sep, ("test Δ " + (f.test.split(" [")[0] if level == 2 else f.test), "$text-accent")]
        if level < 2:
            facts += [sep, elapsed_text(f.elapsed)]
        facts += [sep, f"{tokens_text(f.tokens)} tok", sep, cost, sep]
        return Content.assemble(*facts)

    def show(self, history: History, shown: int, query: str | None, all_commits: bool) -> None:
        """The review app's two lines: the run, its state, HEAD and the commits shown; how to read the loss."""
        self.styles.height = 2
        s = history.status
        state_style = (
            "$text-success bold" if s.running else ("$text-success" if s.state == "finished" else "$text-warning")
        )
        parts: list[str | tuple[str, str]] = [(f"run {s.id}", "bold"), "  ", (s.state, state_style)]
        if s.running:
            parts.append((" (read-only while it trains: u and R are refused)", "$text-warning"))
        parts.append(f"  HEAD {history.head[:7]}")
        if history.dirty:
            parts.append(("  uncommitted changes in the pool", "$text-error bold"))
        total = len(history.commits) if all_commits else len(history.in_history)
        what = "commits incl. dropped" if all_commits else "commits"
        parts.append(f"  {shown}/{total} {what}" if query else f"  {total} {what}")
        if query:
            parts.append((f"  search: {query!r} (esc clears)", "$text-accent bold"))
        parts.append("\n")
        parts.append(
            (
                # Fits 80 columns: docs/history.md says the rest (lower is better; what undone and → mean).
                "loss a→b: mean of the step it learned from → of the next, on works both scored",
                "$foreground-muted",
            )
        )
        self.history_lines = Content.assemble(*parts)
