"""The review screen: one backward micro-step, judged by a person before the next builds on it.

It shows what the engine's `ReviewRequest` carries and nothing else: the commit's diff,
the evidence the backward pass acted on (the commonality report, or the one loss report,
and each work's report), lint status and the notes added, changed and removed. It
answers with a `Decision` made `by="human"`; the engine records it and acts on it.

With `--candidates K` the request carries every candidate, best first; one row each lists
its validation delta, interval, advice, edits and reads side by side, `c` shows the next
one's diff, approve keeps the one shown, and rerun and roll back apply to all of them.

The screen dismisses with None when the person wants to look at the main screen first;
the micro-step keeps waiting and `v` brings the screen back. The app installs one review
screen and refills it (`show()`) for every micro-step.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static, Tab, Tabs

from ....model.commits import parse_body
from ....model.review import Decision, ReviewRequest, delta_text, landing
from ...shared import keymap
from ...shared.screens.confirm import ConfirmScreen
from ...shared.widgets.diff_view import DiffView
from ...shared.widgets.report_view import ReportView
from ..widgets.key_bar import KeyBar
from .candidates import CandidatesScreen, candidates_lines
from .rerun_note import RerunNoteScreen
from .side_by_side import open_side_by_side


def facts(request: ReviewRequest) -> Content:
    """The lines above the diff: what changed, what lint recorded, where the pool goes on roll back.

    The notes an update touched always pass the linter (a micro-step that fails its checks is
    never reviewed), so the lint shown is the pool's as the engine recorded it when the
    backward pass began: problems elsewhere that this update left, or fixed.
    """
    problems = request.lint_problems
    lint = (
        ("lint ✓ pool clean", "$text-success bold")
        if request.lint_ok
        else (f"lint ✗ {len(problems)} in the pool before", "$text-error bold")
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
            (landing(request, "approve")[:7], "$text-accent"),  # the commit approving keeps, as history shows it
        ),
    ]
    for sign, paths, style in (
        ("+", request.added, "$text-success"),
        ("~", request.changed, "$text-warning"),
        ("-", request.removed, "$text-error"),
    ):
        for path in paths:
            lines.append(Content.styled(f"  {sign} {path}", style))
    for problem in problems[:2]:
        lines.append(Content.styled(f"  ✗ {problem}", "$text-error"))
    if len(problems) > 2:
        lines.append(Content.styled(f"  … and {len(problems) - 2} more in lint_report.txt", "$text-error"))
    if not (request.added or request.changed or request.removed):
        empty = "  (an empty commit: the backward pass found nothing worth changing)"
        lines.append(Content.styled(empty, "$foreground-muted"))
    gate = gate_line(request)
    if gate is not None:
        lines.insert(2, gate)
    lines[2:2] = candidates_lines(request)
    for note in request.reviewer_notes[-2:]:
        # A rerun: what the reviewer asked for, beside what the new attempt did about it.
        lines.append(Content.assemble(("your note ", "$foreground-muted"), (note, "$text-accent")))
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
    if g.delta is not None:  # the interval rule: the paired delta and how sure it is
        figures = f" ({delta_text(g.delta, g.low, g.high, g.level, g.n)})"
    else:  # a verdict recorded before the interval rule
        figures = f" ({g.after - g.before:+.3f}; {g.works} work{'s' if g.works != 1 else ''})"
    return Content.assemble(
        ("validation ", "$foreground-muted"),
        (f"{g.before:.3f} → {g.after:.3f}", "bold"),
        figures,
        ("  │  ", "$foreground-muted"),
        advice,
        cost,
    )


def title_of(request: ReviewRequest) -> str:
    # The works are named on the evidence tabs; the title must fit 80 columns.
    works = f"{len(request.works)} works" if len(request.works) != 1 else f"work {request.works[0]}"
    shown = next((c for c in request.candidates if c.attempt == request.attempt), None)
    which = f" · candidate {shown.number} of {len(request.candidates)}" if shown else ""
    return f"Review {request.label} · attempt {request.attempt}{which} · {works}"


def evidence_of(request: ReviewRequest) -> list[tuple[str, str, str]]:
    """(tab id, tab label, markdown): the commonality report first when there is one, then each work's."""
    evidence = []
    if len(request.works) > 1:
        evidence.append(("evidence-summary", "summary", request.evidence))
    for index, work in enumerate(request.works):
        evidence.append((f"evidence-{index}", work, request.reports.get(work, "")))
    return evidence or [("evidence-summary", "evidence", request.evidence)]


def keys_line() -> Content:
    """The decision keys, then how to read the evidence: fits 80 columns."""
    return Content.assemble(
        (" a ", "$text-success bold reverse"),
        " approve  ",
        (" r ", "$text-warning bold reverse"),
        " rerun…  ",
        (" u ", "$text-error bold reverse"),
        " roll back…  ",
        (" esc ", "$foreground-muted reverse"),
        " later  ",
        ("[ ]", "$text-accent bold"),
        " evidence  ",
        ("↑↓", "$text-accent bold"),
        " scroll",
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
        border: round $primary 80%;
        border-title-color: $text-primary;
    }
    ReviewScreen #review-evidence {
        width: 2fr;
        border: round $secondary 80%;
        border-title-color: $text-secondary;
    }
    ReviewScreen #evidence-view { height: 1fr; }
    ReviewScreen Tab { color: $foreground-muted; }
    ReviewScreen Tab.-active, ReviewScreen Tab:hover { color: $foreground; }
    ReviewScreen Underline > .underline--bar { color: $text-primary; background: $panel-lighten-2; }
    """

    BINDINGS = keymap.bindings("review")

    def __init__(self, request: ReviewRequest) -> None:
        super().__init__()
        self.request = request
        self.shown = request  # the request with the candidate in front that approve would keep
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
                evidence.border_title = self._evidence_title(0)
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
        self._show_candidate(request)
        tabs = self.query_one(Tabs)
        shown = [tab.id for tab in tabs.query(Tab)]
        if shown == [pane for pane, _, _ in self._evidence]:
            # The same evidence tabs as last time (the usual case): relabel what changed, since
            # taking the tabs down and mounting them again lays the whole screen out twice.
            for pane, label, _ in self._evidence:
                tab = tabs.query_one(f"#{pane}", Tab)
                if tab.label.plain != label:
                    tab.label = label
        else:
            await tabs.clear()
            for pane, label, _ in self._evidence:
                await tabs.add_tab(Tab(label, id=pane))
        first = self._evidence[0][0]
        if tabs.active != first:
            tabs.active = first
        self.query_one(ReportView).show(self._evidence[0][2])
        self.query_one("#review-evidence").border_title = self._evidence_title(0)

    def _show_candidate(self, shown: ReviewRequest) -> None:
        self.shown = shown
        self.query_one("#review-title", Static).update(title_of(shown))
        self.query_one("#review-facts", Static).update(facts(shown))
        self.query_one(DiffView).patch = shown.patch
        self.query_one(DiffView).scroll_home(animate=False)

    def action_candidate(self) -> None:
        """`c`: the next candidate of several (`--candidates`), in the order the gate ranked them."""
        attempts = [c.attempt for c in self.request.candidates]
        if len(attempts) < 2:
            self.notify("This micro-step has one candidate.", timeout=2)
            return
        index = attempts.index(self.shown.attempt) if self.shown.attempt in attempts else -1
        self._show_candidate(self.request.showing(attempts[(index + 1) % len(attempts)]))

    def action_all_candidates(self) -> None:
        """`C`: every candidate's diff in its own column, with its figures above it."""
        if len(self.request.candidates) < 2:
            self.notify("This micro-step has one candidate.", timeout=2)
            return
        self.app.push_screen(CandidatesScreen(self.request, self.shown.attempt))

    def _evidence_title(self, index: int) -> str:
        # On a narrow screen the last tabs scroll out of sight: the count says they are there.
        count = len(self._evidence)
        return "what it acted on" if count == 1 else f"evidence {index + 1} of {count}  [ ]"

    @on(Tabs.TabActivated, "#evidence-tabs")
    def _show_evidence(self, event: Tabs.TabActivated) -> None:
        event.stop()
        for index, (pane, _, text) in enumerate(self._evidence):
            if event.tab is not None and pane == event.tab.id:
                self.query_one(ReportView).show(text)
                self.query_one("#review-evidence").border_title = self._evidence_title(index)

    def on_mount(self) -> None:
        self.query_one(DiffView).focus()

    def on_screen_resume(self) -> None:
        self.query_one(DiffView).focus()

    def action_evidence(self, delta: int) -> None:
        """`[` `]`: the previous or next evidence tab (the summary, then each work's report)."""
        tabs = self.query_one(Tabs)
        ids = [pane for pane, _, _ in self._evidence]
        index = ids.index(tabs.active) if tabs.active in ids else 0
        target = index + delta
        if not 0 <= target < len(ids):
            self.notify(f"This is the {'first' if delta < 0 else 'last'} piece of evidence.", timeout=2)
            return
        tabs.active = ids[target]

    def action_side_by_side(self) -> None:
        """`s`: the episodes of the work whose loss report is shown (the first work's on the summary)."""
        r = self.request
        shown = (self.query_one(Tabs).active or "").removeprefix("evidence-")
        index = int(shown) if shown.isdigit() and int(shown) < len(r.works) else 0
        open_side_by_side(self.app, r.run_dir, r.works[index] if r.works else None, (r.epoch, r.step))

    def action_switch_pane(self) -> None:
        """`tab`: the arrows and page keys scroll the diff, or the evidence beside it."""
        evidence = self.query_one(ReportView)
        (self.query_one(DiffView) if evidence.has_focus else evidence).focus()

    def action_approve(self) -> None:
        # With several candidates, the one shown is the one kept.
        self.dismiss(Decision("approve", "human", attempt=self.shown.attempt if self.request.candidates else None))

    def action_rerun(self) -> None:
        def asked(note: str | None) -> None:
            if note is not None:
                self.dismiss(Decision("rerun", "human", note))

        self.app.push_screen(RerunNoteScreen(self.request.label), asked)

    def action_rollback(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.dismiss(Decision("rollback", "human"))

        several = len(self.request.candidates)
        kept = (
            f"all {several} candidates are" if several > 1 else f"the commit {landing(self.request, 'rollback')[:7]} is"
        )
        self.app.push_screen(
            ConfirmScreen(
                f"Roll back {self.request.label}?",
                f"The pool goes back to {self.request.before[:7]}; {kept} kept "
                "aside under refs/skilltui, and training goes on without it.",
                yes="y  roll back",
            ),
            answered,
        )

    def action_later(self) -> None:
        self.dismiss(None)
