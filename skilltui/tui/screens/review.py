"""The review screen: one backward micro-step, judged by a person before the next builds on it.

It shows what the engine's `ReviewRequest` carries and nothing else: the commit's diff,
the evidence the backward pass acted on (the commonality report, or the one loss report,
and each work's report), lint status and the notes added, changed and removed. It
answers with a `Decision` made `by="human"`; the engine records it and acts on it.

The screen dismisses with None when the person wants to look at the main screen first;
the micro-step keeps waiting and `v` brings the screen back. The app installs one review
screen and refills it (`show()`) for every micro-step.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static, Tab, Tabs

from ...commits import parse_body
from ...components.confirm import ConfirmScreen
from ...components.diff_view import DiffView
from ...run_model.review import Decision, ReviewRequest
from ..widgets.key_bar import KeyBar
from ..widgets.report_view import ReportView
from .rerun_note import RerunNoteScreen


def facts(request: ReviewRequest) -> Content:
    """The lines above the diff: what changed, whether it lints, where the pool goes on roll back."""
    lint = (
        ("lint ✓ passed", "$text-success bold")
        if request.lint_ok
        else ("lint ✗ " + "; ".join(request.lint_problems), "$text-error bold")
    )
    counts = f"+{len(request.added)} added  ~{len(request.changed)} changed  -{len(request.removed)} removed"
    lines = [
        Content.assemble(("commit ", "$foreground-muted"), (request.subject, "bold")),
        Content.assemble(
            lint,
            ("  │  ", "$foreground-muted"),
            counts,
            ("  │  ", "$foreground-muted"),
            (request.before[:7], "$text-accent"),
            " → ",
            (request.after[:7], "$text-accent"),
        ),
    ]
    for sign, paths, style in (
        ("+", request.added, "$text-success"),
        ("~", request.changed, "$text-warning"),
        ("-", request.removed, "$text-error"),
    ):
        for path in paths:
            lines.append(Content.styled(f"  {sign} {path}", style))
    if not (request.added or request.changed or request.removed):
        empty = "  (an empty commit: the backward pass found nothing worth changing)"
        lines.append(Content.styled(empty, "$foreground-muted"))
    gate = gate_line(request)
    if gate is not None:
        lines.insert(2, gate)
    prediction = parse_body(f"subject\n{request.message}")["prediction"]
    if prediction:
        # What the update says will happen; `skilltui review` later shows it beside what did.
        lines.append(Content.assemble(("predicts ", "$foreground-muted"), prediction))
    return Content("\n").join(lines)


def gate_line(request: ReviewRequest) -> Content | None:
    """Validation before and after the micro-step (`--gate`) and what the gate advises; the person decides."""
    g = request.gate
    if g is None:
        return None
    cost = f"  │  validation cost ${g.cost_usd:.4f}"
    if g.advice == "none" or g.before is None or g.after is None:
        unmeasured = ("could not be measured: no advice", "bold")
        return Content.assemble(("validation ", "$foreground-muted"), unmeasured, cost)
    advice = (
        ("gate advises roll back", "$text-error bold")
        if g.advice == "rollback"
        else ("gate advises keep", "$text-success bold")
    )
    return Content.assemble(
        ("validation ", "$foreground-muted"),
        (f"{g.before:.3f} → {g.after:.3f}", "bold"),
        f" ({g.after - g.before:+.3f}; tolerance {g.tolerance:.3f}; {g.works} work{'s' if g.works != 1 else ''})",
        ("  │  ", "$foreground-muted"),
        advice,
        cost,
    )


def title_of(request: ReviewRequest) -> str:
    return f"Review {request.label} · attempt {request.attempt} · works {', '.join(request.works)}"


def evidence_of(request: ReviewRequest) -> list[tuple[str, str, str]]:
    """(tab id, tab label, markdown): the commonality report first when there is one, then each work's."""
    evidence = []
    if len(request.works) > 1:
        evidence.append(("evidence-summary", "summary", request.evidence))
    for index, work in enumerate(request.works):
        evidence.append((f"evidence-{index}", work, request.reports.get(work, "")))
    return evidence or [("evidence-summary", "evidence", request.evidence)]


def keys_line() -> Content:
    return Content.assemble(
        (" a ", "$text-success bold reverse"),
        " approve    ",
        (" r ", "$text-warning bold reverse"),
        " rerun with a note    ",
        (" u ", "$text-error bold reverse"),
        " roll back (then y)    ",
        (" esc ", "$foreground-muted reverse"),
        " later (v returns)",
    )


class ReviewScreen(Screen[Decision | None]):
    """Review one micro-step; dismisses with the person's Decision, or None for "later"."""

    DEFAULT_CSS = """
    ReviewScreen { layout: vertical; }
    ReviewScreen #review-title {
        height: 1;
        background: $accent 30%;
        color: $foreground;
        text-style: bold;
        padding: 0 1;
    }
    ReviewScreen #review-facts {
        height: auto;
        max-height: 8;
        padding: 0 1;
        background: $panel;
    }
    ReviewScreen #review-keys {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    ReviewScreen #review-body { height: 1fr; }
    ReviewScreen #review-diff {
        width: 3fr;
        border: round $primary 60%;
        border-title-color: $text-primary;
    }
    ReviewScreen #review-evidence {
        width: 2fr;
        border: round $secondary 60%;
        border-title-color: $text-secondary;
    }
    ReviewScreen #evidence-view { height: 1fr; }
    """

    BINDINGS = [
        Binding("a", "approve", "Approve"),
        Binding("r", "rerun", "Rerun…"),
        Binding("u", "rollback", "Roll back…"),
        Binding("escape", "later", "Later"),
    ]

    def __init__(self, request: ReviewRequest) -> None:
        super().__init__()
        self.request = request
        self._evidence = evidence_of(request)

    def compose(self) -> ComposeResult:
        r = self.request
        yield Static(title_of(r), id="review-title", markup=False)
        yield Static(facts(r), id="review-facts")
        yield Static(keys_line(), id="review-keys")
        with Horizontal(id="review-body"):
            diff = DiffView(r.patch, empty_text="(an empty commit: nothing changed)", id="review-diff")
            diff.border_title = "diff"
            yield diff
            with Vertical(id="review-evidence") as evidence:
                evidence.border_title = "what it acted on"
                yield Tabs(*(Tab(label, id=pane) for pane, label, _ in self._evidence), id="evidence-tabs")
                yield ReportView(self._evidence[0][2], id="evidence-view")
        yield KeyBar()

    async def show(self, request: ReviewRequest) -> None:
        """Review another micro-step on this same screen.

        The app keeps one review screen for the whole run and refills it, because building
        a screen per micro-step and tearing it down after the decision held up the keys
        pressed right after it.
        """
        if request is self.request:
            return
        self.request, self._evidence = request, evidence_of(request)
        self.query_one("#review-title", Static).update(title_of(request))
        self.query_one("#review-facts", Static).update(facts(request))
        self.query_one(DiffView).patch = request.patch
        self.query_one(DiffView).scroll_home(animate=False)
        tabs = self.query_one(Tabs)
        await tabs.clear()
        for pane, label, _ in self._evidence:
            await tabs.add_tab(Tab(label, id=pane))
        tabs.active = self._evidence[0][0]
        self.query_one(ReportView).show(self._evidence[0][2])

    @on(Tabs.TabActivated, "#evidence-tabs")
    def _show_evidence(self, event: Tabs.TabActivated) -> None:
        event.stop()
        for pane, _, text in self._evidence:
            if event.tab is not None and pane == event.tab.id:
                self.query_one(ReportView).show(text)

    def on_mount(self) -> None:
        self.query_one(DiffView).focus()

    def on_screen_resume(self) -> None:
        self.query_one(DiffView).focus()

    def action_approve(self) -> None:
        self.dismiss(Decision("approve", "human"))

    def action_rerun(self) -> None:
        def asked(note: str | None) -> None:
            if note is not None:
                self.dismiss(Decision("rerun", "human", note))

        self.app.push_screen(RerunNoteScreen(self.request.label), asked)

    def action_rollback(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(Decision("rollback", "human"))

        self.app.push_screen(
            ConfirmScreen(
                f"Roll back {self.request.label}?",
                f"The pool goes back to {self.request.before[:7]}; the commit {self.request.after[:7]} is kept "
                "aside under refs/skilltui, and training goes on without it.",
                yes="y  roll back",
            ),
            answered,
        )

    def action_later(self) -> None:
        self.dismiss(None)
