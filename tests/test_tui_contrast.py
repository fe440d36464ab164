"""Every colour pair the apps draw is readable, in every shipped theme (WCAG 2.1 AA).

Rather than listing the theme variables a test author thought of, these tests drive the
real apps through their screens and read every cell the compositor produced: its
character, its resolved foreground and background. Text must reach 4.5:1 against what it
is drawn on; borders, box lines and the curve's graph marks (non-text) 3:1. A colour pair
that any widget uses, in any state the tour reaches (a highlighted row, a focused pane, an
open dialog, a search), is checked from the colours the theme resolved to.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.color import Color as RichColor
from rich.style import Style
from textual.app import App
from textual.command import CommandPalette
from textual.containers import Vertical
from textual.geometry import Region
from textual.widgets import TabbedContent

from skilltui.apps.history.app import HistoryApp
from skilltui.apps.history.screens.evidence import EvidenceScreen
from skilltui.apps.shared.screens.confirm import ConfirmScreen
from skilltui.apps.shared.screens.diff import DiffScreen
from skilltui.apps.shared.screens.help import HelpScreen
from skilltui.apps.shared.themes import DEFAULT_THEME, LIGHT_THEME, SETTINGS_FILE
from skilltui.apps.shared.widgets.commit_detail import CommitDetail
from skilltui.apps.shared.widgets.commit_list import CommitList
from skilltui.apps.train.widgets.live_output import LiveOutput
from skilltui.model.commits import Commit, Mark
from tests.support.history import Scripted, screen_of, settle, status, train
from tests.support.tui import make_app, tab_label, wait_for, wait_for_review
from tests.support.widgets import Harness

TEXT, NON_TEXT = 4.5, 3.0
DIM_FACTOR = 0.5  # how far a terminal's faint (`dim`) text goes toward the background, as Textual's DimFilter


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def is_graphic(char: str) -> bool:
    """Box drawing, block elements and braille: borders, scrollbars, rules and the curve's marks."""
    code = ord(char)
    return 0x2500 <= code <= 0x259F or 0x2800 <= code <= 0x28FF or char in "◆◇○●△▲•·…"


@dataclass(frozen=True)
class Finding:
    where: str
    text: str
    fg: tuple[int, int, int]
    bg: tuple[int, int, int]
    ratio: float
    needed: float

    def __str__(self) -> str:
        hexes = "#{:02X}{:02X}{:02X}"
        return (
            f"{self.where}: {self.text!r} {hexes.format(*self.fg)} on {hexes.format(*self.bg)} "
            f"is {self.ratio:.2f}:1, needs {self.needed}"
        )


def colours(style: Style, default_fg: RichColor, default_bg: RichColor) -> tuple[tuple, tuple]:
    fg = (style.color or default_fg).get_truecolor()
    bg = (style.bgcolor or default_bg).get_truecolor()
    if style.reverse:
        fg, bg = bg, fg
    if style.dim:
        fg = tuple(round(b + (f - b) * DIM_FACTOR) for f, b in zip(fg, bg, strict=True))
    return tuple(fg), tuple(bg)


def scan(app: App, where: str, region: Region | None = None) -> list[Finding]:
    """Every drawn character of the screen as it is now (or of `region`), checked against its background.

    A dialog's `region` leaves out the screen dimmed behind it: that backdrop says "not now".
    """
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    default_fg = RichColor.parse(app.current_theme.foreground or "#FFFFFF")
    default_bg = RichColor.parse(app.current_theme.background or "#000000")
    findings: dict[tuple, Finding] = {}
    for y, row in enumerate(update.strips):
        x = 0
        for strip in row:
            for segment in strip:
                text, style, _ = segment
                start, x = x, x + segment.cell_length
                if region is not None:
                    if not region.y <= y < region.bottom:
                        continue
                    text = text[max(0, region.x - start) : max(0, region.right - start)]
                if style is None or not text.strip():
                    continue
                fg, bg = colours(style, default_fg, default_bg)
                ratio = contrast(fg, bg)
                for char in set(text.strip()) - {" "}:
                    needed = NON_TEXT if is_graphic(char) else TEXT
                    if ratio < needed:
                        findings.setdefault(
                            (fg, bg, needed), Finding(where, text.strip()[:30], fg, bg, round(ratio, 2), needed)
                        )
    return list(findings.values())


def choose_theme(config: Path, theme: str) -> None:
    (config / "skilltui").mkdir(parents=True, exist_ok=True)
    (config / "skilltui" / SETTINGS_FILE).write_text(f'{{"theme": "{theme}"}}')


def pane_shown(app: App, pane: str) -> bool:
    """`pane` is the open tab and what it reads from disk (the report, the pool, a note, a diff) is in."""
    loading = [w for w in app.workers if w.group in ("report", "pool", "note", "diff") and not w.is_finished]
    return app.screen.query_one(TabbedContent).active == pane and not loading


@pytest.mark.slow
@pytest.mark.parametrize("theme", [DEFAULT_THEME, LIGHT_THEME])
async def test_every_colour_pair_of_the_live_app_is_readable(theme, open_training, config_home):
    choose_theme(config_home, theme)
    app = make_app(open_training(("harbour", "quarry")))
    findings: list[Finding] = []
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for_review(pilot, app)
        await wait_for(pilot, lambda: tab_label(app, "commits") == "Commits · 2")
        assert app.current_theme.name == theme
        findings += scan(app, "review screen")
        await pilot.press("right_square_bracket")  # the evidence's second tab
        findings += scan(app, "review screen, second evidence tab")
        await pilot.press("r")
        await pilot.pause()
        findings += scan(app, "rerun note", app.screen.children[0].region)
        await pilot.press("escape", "u")
        await pilot.pause()
        findings += scan(app, "roll back dialog", app.screen.children[0].region)
        await pilot.press("n")
        await pilot.press("escape")
        await pilot.pause()
        findings += scan(app, "main screen, output")
        for key, pane in (("2", "report"), ("3", "pool"), ("4", "commits")):
            await pilot.press(key)
            await wait_for(pilot, lambda pane=pane: pane_shown(app, pane))
            if pane == "commits":
                await wait_for(pilot, lambda: len(app.query_one(CommitList).commits) == 2)
            findings += scan(app, f"main screen, {pane}")
        await pilot.press("1", "slash")
        await pilot.pause()
        findings += scan(app, "search prompt")
        await pilot.press("e", "enter")
        await wait_for(pilot, lambda: bool(app.query_one(LiveOutput).status))
        findings += scan(app, "output with a search")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        findings += scan(app, "help", app.screen.children[0].region)
        await pilot.press("escape", "q")
        await pilot.pause()
        findings += scan(app, "quit dialog", app.screen.children[0].region)
        await pilot.press("n", "ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette) and bool(app.screen.query("CommandInput")))
        await pilot.wait_for_scheduled_animations()
        findings += scan(app, "command palette", app.screen.query_one("CommandInput").parent.parent.region)
    assert not findings, "\n".join(map(str, findings))


@pytest.mark.slow
@pytest.mark.parametrize("theme", [DEFAULT_THEME, LIGHT_THEME])
async def test_every_colour_pair_of_the_history_app_is_readable(theme, make_work, tmp_path, config_home):
    """`skilltui review` through its screens, on a run with every decision a commit can get."""
    choose_theme(config_home, theme)
    works = [make_work("moth-ferry"), make_work("glass-choir")]
    run = await asyncio.to_thread(train, tmp_path / "runs", works, Scripted("rerun", "rollback"))
    app = HistoryApp(run, poll=None)
    findings: list[Finding] = []

    def dialog() -> Region:
        return app.screen.children[0].region

    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.current_theme.name == theme
        screen = screen_of(app)
        table = screen.query_one(CommitList)
        findings += scan(app, "history")
        await pilot.press("a")  # the rerun and the rolled back commit, dropped from the history
        await wait_for(pilot, lambda: any(not c.in_history for c in table.shown))
        decisions = {c.mark.decision for c in table.shown if c.mark}
        assert {"approve", "rollback"} <= decisions
        table.move_cursor(row=next(i for i, c in enumerate(table.shown) if not c.in_history))
        await pilot.press("space")  # marked
        await pilot.pause()
        findings += scan(app, "history, a dropped commit marked")
        table.move_cursor(row=0)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        findings += scan(app, "diff")
        await pilot.press("escape", "e")
        await wait_for(pilot, lambda: isinstance(app.screen, EvidenceScreen))
        await pilot.pause()
        findings += scan(app, "evidence")
        await pilot.press("escape", "question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        findings += scan(app, "help", dialog())
        await pilot.press("escape", "slash")
        await pilot.pause()
        findings += scan(app, "search box")
        await pilot.press(*"train", "enter")
        await wait_for(pilot, lambda: " is in " in str(status(app).message))
        findings += scan(app, "search results")
        await pilot.press("escape", "R")  # reset to HEAD: refused, on the status line
        await wait_for(pilot, lambda: status(app).has_class("-error"))
        findings += scan(app, "a refusal")
        await pilot.press("down", "R")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        findings += scan(app, "reset dialog", dialog())
        await pilot.press("n", "up", "u")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        findings += scan(app, "revert dialog", dialog())
        head = screen.history.head
        await pilot.press("y")
        await wait_for(pilot, lambda: screen.history.head != head and table.selected is not None)
        await settle(pilot)
        table.move_cursor(row=1)  # the reverted commit: "reverted by"
        await pilot.pause()
        findings += scan(app, "a reverted commit")
        await pilot.press("t")  # the other theme, switched while the app runs
        await wait_for(pilot, lambda: app.current_theme.name != theme)
        await pilot.pause()
        findings += scan(app, "after switching the theme")
    assert not findings, "\n".join(map(str, findings))


@pytest.mark.parametrize("detailed", [True, False], ids=["history list", "live list"])
@pytest.mark.parametrize("theme", [DEFAULT_THEME, LIGHT_THEME])
async def test_every_decision_reads_in_the_commit_list_under_the_cursor_and_off_it(theme, detailed):
    """The tones no tour reaches in one run (a rerun kept, a review still waiting), each highlighted in turn."""
    commits = []
    for n, decision in enumerate(("pending", "approve", "rerun", "rollback", "")):
        commit = Commit(f"{n}" * 40, f"train epoch 0 step {n} micro 1/1\n\n- body", ["f" * 40])
        commit.mark = Mark(decision, "human") if decision else None
        commit.decision, commit.files = f"{decision} by human" if decision else "seed", [("M", "scene/a.md")]
        commit.reverted_by = "e" * 40 if decision == "approve" else None
        commits.append(commit)
    commits[-1].in_history, commits[-1].kept_as = False, ["reset/1"]
    table, detail = CommitList(detailed=detailed), CommitDetail()
    findings: list[Finding] = []
    async with Harness(Vertical(table, detail), theme).run_test(size=(120 if detailed else 70, 20)) as pilot:
        table.show(commits, head=commits[0].sha, marked=commits[1].sha)
        table.focus()
        for row, commit in enumerate(commits):
            table.move_cursor(row=row)
            detail.show(commit, commits[0].sha)
            await pilot.pause()
            findings += scan(pilot.app, f"row {row} ({commit.mark.decision if commit.mark else 'no mark'})")
    assert not findings, "\n".join(map(str, findings))
