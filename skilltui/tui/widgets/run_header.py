"""The header line: which run, where in it (epoch, step, episodes), how long, how much.

A person glancing at the app asks "where is it, is it waiting for me, what has it cost";
this line answers all three without moving the eyes off the works.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from .works_table import tokens_text

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


def elapsed_text(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class RunHeader(Widget):
    """One line of run facts; set `facts` to redraw."""

    DEFAULT_CSS = """
    RunHeader {
        height: 1;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    """

    facts: reactive[HeaderFacts] = reactive(HeaderFacts, layout=False)

    def render(self) -> Content:
        f = self.facts
        where = "not started" if f.epoch is None else f"epoch {f.epoch} step {f.step}"
        cost = f"${f.cost:.4f}" + ("" if f.cost_known else "+")
        status = f.status
        if f.paused and status == "running":
            status = "paused"
        label = {"review": "waiting for review"}.get(status, status)
        if f.paused and status == "review":
            label += " · paused"
        sep = (" │ ", "$foreground-muted")
        facts: list[str | tuple[str, str]] = [(f" {label} ", STATUS_STYLES.get(status, "")), sep, where]
        if f.first is not None:
            facts += [sep, f"episodes {f.first}..{f.last}"]
        if f.throttled:
            facts += [sep, ("throttled", STATUS_STYLES["paused"])]
        if f.batch:
            facts += [sep, (f.batch, "$text-accent")]
        facts += [sep, elapsed_text(f.elapsed), sep, f"{tokens_text(f.tokens)} tok", sep, cost, sep]
        tail = Content.assemble(*facts)
        # The run id is the one fact that can be long (derived ids name the works), so it
        # gets whatever width the others leave, cut with an ellipsis.
        room = max(8, self.content_size.width - tail.cell_length)
        run_id = Content.styled(f.run_id, "bold").truncate(room, ellipsis=True)
        return Content.assemble(tail, run_id)
