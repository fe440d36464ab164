"""Several candidates of one micro-step (`--candidates K`), compared on the same evidence.

The review screen lists them one row each (`candidates_lines`): the gate's paired delta
against the parent, its interval and advice, the edits and the notes its agent read. `C`
opens `CandidatesScreen`, every candidate's diff in its own column under the same figures,
so a person sees what each one would change before picking one with `c` and `a`.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from ....model.review import CandidateView, GateVerdict, ReviewRequest, interval_text
from ...shared import keymap
from ...shared.widgets.diff_view import DiffView


def candidates_lines(request: ReviewRequest) -> list[Content]:
    """One row per candidate, best first: delta, interval, advice, edits, what it read; ▸ marks the one shown."""
    return [candidate_row(c, shown=c.attempt == request.attempt) for c in request.candidates]


def candidate_row(c: CandidateView, *, shown: bool = False) -> Content:
    return Content.assemble(
        ("▸ " if shown else "  ", "$text-accent bold"),
        (f"{c.number} ", "bold" if shown else ""),
        figures(c.gate),
        ("  │  ", "$foreground-muted"),
        f"+{len(c.added)} ~{len(c.changed)} -{len(c.removed)}",
        ("  │  read ", "$foreground-muted"),
        ", ".join(c.reads) if c.reads else "no note",
    )


def figures(g: GateVerdict | None) -> Content:
    """`Δ -0.041 [-0.060, -0.022] at 98.6% keep`, or `not measured` when the candidate had no verdict.

    The interval is labelled by `interval_text`, the one label every view uses, so it says the
    level it was computed at (each look's, Bonferroni over the candidates), not the decision's.
    """
    if g is None or g.before is None or g.after is None or g.advice == "none":
        return Content.styled("not measured", "$foreground-muted")
    delta = g.delta if g.delta is not None else g.after - g.before
    style = "$text-success" if g.advice == "keep" else "$text-error"
    return Content.assemble(f"Δ {delta:+.3f} {interval_text(g.low, g.high, g.level)} ", (g.advice, style))


class CandidatesScreen(ModalScreen[None]):
    """Every candidate's diff side by side; `esc` or `C` goes back to the review, which decides."""

    DEFAULT_CSS = """
    CandidatesScreen { background: $background; }
    CandidatesScreen #candidates-title { height: 1; background: $accent 30%; text-style: bold; padding: 0 1; }
    CandidatesScreen .candidate { width: 1fr; border: round $panel-lighten-2; }
    CandidatesScreen .candidate.-shown { border: round $primary; }
    CandidatesScreen .candidate-head { height: auto; padding: 0 1; background: $panel; }
    CandidatesScreen .candidate DiffView { height: 1fr; }
    """

    BINDINGS = keymap.bindings("candidates")

    def __init__(self, request: ReviewRequest, shown: int) -> None:
        super().__init__()
        self.request = request
        self.shown = shown

    def compose(self) -> ComposeResult:
        r = self.request
        yield Static(f"{len(r.candidates)} candidates of {r.label}, best first · esc back", id="candidates-title")
        with Horizontal():
            for c in r.candidates:
                with Vertical(classes="candidate -shown" if c.attempt == self.shown else "candidate") as column:
                    column.border_title = f"candidate {c.number}: {c.subject}"
                    head = Content("\n").join([figures(c.gate), Content(", ".join(c.reads) or "read no note")])
                    yield Static(head, classes="candidate-head")
                    yield DiffView(c.patch, empty_text="(an empty commit: nothing changed)")

    def action_close(self) -> None:
        self.dismiss(None)
