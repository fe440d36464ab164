"""Written next to human: an episode the writer wrote beside the human one, scene by scene as the loss matched them.

This is where a person sees what a note changed: the human scene on the left, the written
scene the loss paired with it on the right, and between them how alike the loss found the
pair (above chance, as `scores` credits it). A scene with no partner says so on the other
side; a pair the `scenes` part did not count, because it plays out of the human order, is
marked `↕`. The pairs are `runs.episode_pair`'s, which are the loss's own groups, so what
is shown and the number cannot disagree.

Opened with `s` from the main screen (the selected work's latest scored step, or the step
its report pane shows) and from the review screen (the work whose evidence is shown).
`[` `]` go through the step's episodes; `e` opens a copy of the written episode in
$VISUAL / $EDITOR, and what is saved is paired and scored here in its place (the run keeps
what the writer wrote: the loss that trained was computed from it).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import work
from textual.app import App, ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from ....engine.loss.scores import Scene
from ....runs.episode_pair import EpisodePair, Row, episode_pair, scored_episodes
from ...shared import keymap
from ...shared.editor import edit_or_say_why
from ..widgets.key_bar import KeyBar

SCENE_LINES = 6  # lines of a scene shown under its heading; the rest is counted
PARTS = ("scenes", "order", "dialogue", "speakers", "length", "format")


def sim_style(sim: float) -> str:
    """A pair the loss credits whole reads green, a faint one red (`scene_match.PLAYED` is 0.5)."""
    return "$text-success bold" if sim >= 0.5 else "$text-warning bold" if sim >= 0.2 else "$text-error bold"


def scene_text(scene: Scene, number: int, lines: int = SCENE_LINES) -> Content:
    """A scene as a cell shows it: its number and heading, then its first lines."""
    body = [line for line in scene.text.splitlines() if line.strip()]
    if scene.heading and body and body[0].strip() == scene.heading:
        body = body[1:]
    heading = scene.heading or "(before the first heading)"
    shown = [Content.assemble((f"{number} ", "$foreground-muted"), (heading, "bold"))]
    shown += [Content(line) for line in body[:lines]]
    if len(body) > lines:
        shown.append(Content.styled(f"… {len(body) - lines} more line{'s' if len(body) - lines > 1 else ''}", "dim"))
    return Content("\n").join(shown)


def side_text(pair: EpisodePair, side: str, indexes: tuple[int, ...]) -> Content:
    if not indexes:
        missing = "no written scene plays it" if side == "written" else "no human scene: the writer added it"
        return Content.styled(f"— {missing}", "$foreground-muted italic")
    return Content("\n\n").join(scene_text(pair.scene(side, i), i + 1) for i in indexes)


def sim_text(row: Row) -> Content:
    if row.sim is None:
        return Content.styled("—", "$foreground-muted")
    if not row.in_order:
        return Content.assemble((f"{row.sim:.2f}", sim_style(row.sim)), ("\n↕ order", "$text-warning"))
    return Content.styled(f"{row.sim:.2f}", sim_style(row.sim))


def title_of(pair: EpisodePair, episodes: list[int]) -> str:
    where = f"{episodes.index(pair.episode) + 1} of {len(episodes)}" if pair.episode in episodes else ""
    return (
        f"Written next to human · {pair.work} · epoch {pair.epoch} step {pair.step} · "
        f"episode {pair.episode} ({where})  [ ]"
    )


def facts_of(pair: EpisodePair) -> Content:
    """The episode's loss and the scene counts the rows below add up to, then the loss's six parts."""
    matched = sum(1 for row in pair.rows if row.matched)
    lacking = sum(1 for row in pair.rows if row.human and not row.written)
    added = sum(1 for row in pair.rows if row.written and not row.human)
    shuffled = sum(1 for row in pair.rows if row.matched and not row.in_order)
    pairs = f"{matched} pair{'s' if matched != 1 else ''}"
    counts = (
        f"{len(pair.human.scenes)} human scenes, {len(pair.written.scenes)} written: {pairs}"
        f", {lacking} not written, {added} added" + (f", {shuffled} out of order ↕" if shuffled else "")
    )
    parts: list[tuple[str, str] | str] = []
    for name in PARTS:  # single spaces: the six fit 80 columns, the colours keep them apart
        parts += [(f"{name} ", "$foreground-muted"), (f"{pair.parts[name]:.2f} ", "bold")]
    edited = ("  your edited copy (not in the run)", "$text-warning bold") if pair.edited else ""
    return Content.assemble(
        ("loss ", "$foreground-muted"),
        (f"{pair.loss:.3f}", "bold"),
        ("  │  ", "$foreground-muted"),
        counts,
        edited,
        "\n",
        *parts,
    )


class SideBySideScreen(Screen[None]):
    """One work-step's episodes, one at a time, written next to human."""

    DEFAULT_CSS = """
    SideBySideScreen { layout: vertical; }
    SideBySideScreen #pair-title {
        height: 1;
        background: $accent 30%;
        color: $foreground;
        text-style: bold;
        padding: 0 1;
    }
    SideBySideScreen #pair-facts { height: auto; padding: 0 1; background: $panel; }
    SideBySideScreen .pair-row { height: auto; border-bottom: hkey $panel-lighten-2; }
    SideBySideScreen #pair-head { height: 1; border-bottom: none; background: $panel; text-style: bold; }
    SideBySideScreen .human, SideBySideScreen .written { width: 1fr; padding: 0 1; }
    SideBySideScreen .sim { width: 8; content-align: center top; text-align: center; }
    SideBySideScreen #pair-rows { height: 1fr; scrollbar-size-vertical: 1; }
    SideBySideScreen #pair-empty { padding: 1 2; color: $foreground-muted; }
    """

    BINDINGS = keymap.bindings("side")

    def __init__(self, run_dir: Path, work: str, epoch: int, step: int, episodes: list[int]) -> None:
        super().__init__()
        self.run_dir = Path(run_dir)
        self.work = work
        self.epoch, self.step = epoch, step
        self.episodes = episodes
        self.episode = episodes[0]
        self.pair: EpisodePair | None = None
        self.edits: dict[int, str] = {}  # episode -> the person's edited copy, paired in its place

    def compose(self) -> ComposeResult:
        yield Static(f"Written next to human · {self.work}", id="pair-title", markup=False)
        yield Static(id="pair-facts")
        with Horizontal(id="pair-head", classes="pair-row"):
            yield Static("human", classes="human")
            yield Static("alike", classes="sim")
            yield Static("written", classes="written")
        yield VerticalScroll(id="pair-rows")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#pair-rows").focus()
        self.load()

    @work(exclusive=True, group="pair")
    async def load(self) -> None:
        """Pair the episode in a thread: parsing and matching a long script takes a while."""
        args = (self.run_dir, self.work, self.epoch, self.step, self.episode)
        try:
            pair = await asyncio.to_thread(episode_pair, *args, written_text=self.edits.get(self.episode))
        except LookupError as exc:
            await self._show_problem(str(exc))
            return
        await self.show(pair)

    async def _show_problem(self, problem: str) -> None:
        self.pair = None
        self.query_one("#pair-title", Static).update(f"Written next to human · {self.work} · episode {self.episode}")
        self.query_one("#pair-facts", Static).update("")
        rows = self.query_one("#pair-rows", VerticalScroll)
        await rows.remove_children()
        await rows.mount(Static(problem, id="pair-empty", markup=False))

    async def show(self, pair: EpisodePair) -> None:
        self.pair = pair
        self.query_one("#pair-title", Static).update(title_of(pair, self.episodes))
        self.query_one("#pair-facts", Static).update(facts_of(pair))
        rows = self.query_one("#pair-rows", VerticalScroll)
        await rows.remove_children()
        await rows.mount_all(
            Horizontal(
                Static(side_text(pair, "human", row.human), classes="human"),
                Static(sim_text(row), classes="sim"),
                Static(side_text(pair, "written", row.written), classes="written"),
                classes="pair-row",
            )
            for row in pair.rows
        )
        rows.scroll_home(animate=False)

    def action_episode(self, delta: int) -> None:
        """`[` `]`: the step's previous or next episode."""
        index = self.episodes.index(self.episode) + delta
        if not 0 <= index < len(self.episodes):
            edge = "first" if delta < 0 else "last"
            self.notify(f"Episode {self.episode} is the {edge} episode of this step.", timeout=2)
            return
        self.episode = self.episodes[index]
        self.load()

    def action_scroll(self, delta: int) -> None:
        rows = self.query_one("#pair-rows", VerticalScroll)
        rows.scroll_relative(y=delta, animate=False)

    def action_edit(self) -> None:
        """`e`: the written episode in the person's editor, on a copy; what they save is paired here."""
        pair = self.pair
        if pair is None:
            self.notify("There is no written episode here to open.", severity="warning", timeout=3)
            return
        name = pair.written_path.name
        text = self.edits.get(self.episode)
        if text is None:
            text = pair.written_path.read_text(encoding="utf-8", errors="replace")
        edited = edit_or_say_why(self.app, name, text)
        if edited is None:
            return
        if edited == text:
            self.notify("Nothing changed in the editor.", timeout=3)
            return
        self.edits[self.episode] = edited
        self.notify(
            f"Your copy of episode {self.episode}, paired and scored in place of the writer's; "
            "the run keeps what the writer wrote",
            timeout=6,
        )
        self.load()

    def action_close(self) -> None:
        self.dismiss(None)


def open_side_by_side(app: App, run_dir: Path, work: str | None, key: tuple[int, int] | None) -> None:
    """Open the screen on `work`'s episodes of step `key`, or say why there is nothing to pair yet."""
    episodes = scored_episodes(run_dir, work, *key) if work and key else []
    if work is None or key is None or not episodes:
        app.notify(f"No episode of {work or 'this work'} has been scored yet: nothing to put beside the human one.")
        return
    app.push_screen(SideBySideScreen(run_dir, work, key[0], key[1], episodes))
