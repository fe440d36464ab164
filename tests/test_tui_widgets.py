"""The panes on their own, fed with data: diff, commits, pool tree, loss curve, works; themes and keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color
from textual.containers import VerticalScroll
from textual.widget import Widget

from skilltui.apps.shared import keymap
from skilltui.apps.shared.themes import (
    DEFAULT_THEME,
    LIGHT_THEME,
    ThemeFileError,
    load_theme_file,
    load_themes,
    remember_theme,
    remembered_theme,
    shipped_dir,
)
from skilltui.apps.shared.widgets.commit_list import CommitList
from skilltui.apps.shared.widgets.diff_view import DiffView
from skilltui.apps.train.app import TrainingApp
from skilltui.apps.train.screens.main import MainScreen
from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.apps.train.screens.side_by_side import SideBySideScreen
from skilltui.apps.train.state import Commit, Mark, OutputBuffer
from skilltui.apps.train.widgets.key_bar import KeyBar
from skilltui.apps.train.widgets.live_output import LiveOutput
from skilltui.apps.train.widgets.loss_curve import LossCurve
from skilltui.apps.train.widgets.pool_tree import PoolTree
from skilltui.apps.train.widgets.works_table import WorksTable
from skilltui.model.figures import Mean
from skilltui.pool.notes import Pool, render_note
from skilltui.pool.repo import split_patch
from tests.support.widgets import Harness

ROOT = Path(__file__).resolve().parent.parent


def pool_with_three_kinds_of_change(root: Path) -> tuple[Pool, str]:
    pool = Pool(root)
    pool.init()
    for rel in ("scene/keep.md", "scene/gone.md"):
        (root / "scene").mkdir(exist_ok=True)
        (root / rel).write_text(render_note(f"note {rel}", "Body line one.\nBody line two."))
    pool.commit_all("seed")
    (root / "scene" / "keep.md").write_text(render_note("note kept", "Body line one.\nA new line two."))
    (root / "scene" / "gone.md").unlink()
    (root / "dialogue").mkdir()
    (root / "dialogue" / "new.md").write_text(render_note("a new note", "Say it as dialogue."))
    after = pool.commit_all("train: three changes")
    return pool, after


def test_split_patch_splits_a_real_pool_commit_file_by_file(tmp_path: Path):
    pool, after = pool_with_three_kinds_of_change(tmp_path / "pool")
    files = {f.path: f for f in split_patch(pool.patch(f"{after}~1", after))}
    assert {path: f.status for path, f in files.items()} == {
        "dialogue/new.md": "added",
        "scene/gone.md": "removed",
        "scene/keep.md": "changed",
    }
    keep = files["scene/keep.md"]
    assert (keep.added, keep.removed) == (2, 2)
    assert "+A new line two." in keep.lines and "-Body line two." in keep.lines
    assert not any(line.startswith(("index ", "--- ", "+++ ")) for line in keep.lines)


@pytest.mark.parametrize("theme", [DEFAULT_THEME, LIGHT_THEME])
async def test_diff_view_draws_one_titled_block_per_file_with_added_and_removed_lines_apart(tmp_path: Path, theme):
    pool, after = pool_with_three_kinds_of_change(tmp_path / "pool")
    view = DiffView(pool.patch(f"{after}~1", after))
    app = Harness(view, theme)
    async with app.run_test(size=(100, 60)) as pilot:
        await pilot.pause()
        blocks = list(view.query(".diff-file"))
        new = len((tmp_path / "pool" / "dialogue" / "new.md").read_text().splitlines())
        gone = len(render_note("note scene/gone.md", "Body line one.\nBody line two.").splitlines())
        assert [str(b.border_title) for b in blocks] == [
            f"+ dialogue/new.md (added, +{new} -0)",
            f"- scene/gone.md (removed, +0 -{gone})",
            "~ scene/keep.md (changed, +2 -2)",
        ]
        text = blocks[2].render()
        added = next(s for s in text.spans if text.plain[s.start : s.end] == "+A new line two.")
        removed = next(s for s in text.spans if text.plain[s.start : s.end] == "-Body line two.")
        assert "$text-success" in str(added.style) and "$text-error" in str(removed.style)


async def test_a_wrapped_diff_line_goes_on_under_its_text_not_in_the_signs_column():
    """At 80x24 a long added line wrapped at column 0: a continuation beginning `- ` read as a removed line."""
    patch = (
        "diff --git a/scene/list.md b/scene/list.md\nnew file mode 100644\n--- /dev/null\n+++ b/scene/list.md\n"
        "@@ -0,0 +1 @@\n+Open on the place and the hour, then cut to what matters most in the scene - never "
        "- a long establishing shot that tells nothing\n"
    )
    view = DiffView(patch)
    async with Harness(view).run_test(size=(40, 20)) as pilot:
        await pilot.pause()
        rows = str(view.query_one(".diff-file").render()).splitlines()
        added = [row for row in rows if not row.startswith("@@")]
        assert len(added) > 2 and added[0].startswith("+Open on")  # wrapped at the block's width
        assert all(row.startswith(" ") for row in added[1:]), rows  # never a sign of its own
        assert " ".join(row.strip().removeprefix("+") for row in added) == patch.splitlines()[-1][1:]


async def test_diff_view_says_so_for_an_empty_commit():
    view = DiffView("", empty_text="(an empty commit: nothing changed)")
    async with Harness(view).run_test() as pilot:
        await pilot.pause()
        assert "empty commit" in str(view.query_one(".diff-empty").render())


def contrast(a: Color, b: Color) -> float:
    def luminance(c: Color) -> float:
        def channel(v: int) -> float:
            s = v / 255
            return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("theme", [DEFAULT_THEME, LIGHT_THEME])
async def test_diff_and_curve_colours_are_readable_in_every_shipped_theme(theme):
    app = Harness(Widget(), theme)
    async with app.run_test() as pilot:
        await pilot.pause()
        v = {k: Color.parse(app.theme_variables[k]) for k in ("surface", "success-muted", "error-muted")}
        v |= {k: Color.parse(app.theme_variables[k]) for k in ("text-success", "text-error")}
        v |= {k: Color.parse(app.theme_variables[k]) for k in ("text-primary", "text-accent")}
        surface = v["surface"]
        # Diff lines: text on a 40% tint of the muted colour over the pane's surface (WCAG AA: 4.5).
        assert contrast(v["text-success"], surface.blend(v["success-muted"], 0.4)) >= 4.5
        assert contrast(v["text-error"], surface.blend(v["error-muted"], 0.4)) >= 4.5
        # Curve: the mean and the selected work on the surface.
        assert contrast(v["text-primary"], surface) >= 4.5
        assert contrast(v["text-accent"], surface) >= 4.5
        # Added and removed must not look alike: green against red, well apart in hue.
        hue_gap = abs(v["text-success"].hsl.h - v["text-error"].hsl.h) * 360
        assert min(hue_gap, 360 - hue_gap) > 60


async def test_commit_list_follows_new_commits_until_a_person_picks_an_older_one():
    commits = CommitList()
    async with Harness(commits).run_test() as pilot:
        commits.show([Commit("b" * 40, "second"), Commit("a" * 40, "first")])
        await pilot.pause()
        assert commits.chosen.sha == "b" * 40
        commits.show([Commit("c" * 40, "third", mark=Mark("approve", "human")), *commits.commits])
        await pilot.pause()
        assert commits.chosen.sha == "c" * 40  # was on the newest: follows
        commits.move_cursor(row=2)  # the person goes back to "first"
        commits.show([Commit("d" * 40, "fourth"), *commits.commits])
        await pilot.pause()
        assert commits.chosen.sha == "a" * 40  # stays where the person is
        assert "✓ human" in " ".join(map(str, commits.get_row_at(1)))


async def test_pool_tree_keeps_the_chosen_note_when_the_pool_changes():
    tree = PoolTree()
    async with Harness(tree).run_test() as pilot:
        tree.show([("scene/a.md", "A"), ("scene/b.md", "B")])
        await pilot.pause()
        tree.move_cursor(tree.root.children[0].children[1])
        await pilot.pause()
        assert tree.cursor_node.data == "scene/b.md"
        tree.show([("dialogue/c.md", "C"), ("scene/a.md", "A"), ("scene/b.md", "B")])
        await pilot.pause()
        await pilot.pause()
        assert tree.cursor_node.data == "scene/b.md"
        assert [n.data for n in tree.root.children] == ["dialogue/", "scene/"]


async def test_pool_tree_shows_each_notes_attribution_in_a_column():
    tree = PoolTree()
    async with Harness(tree).run_test() as pilot:
        notes = [("scene/a.md", "A"), ("scene/longer-name.md", "B")]
        tree.show(notes)
        await pilot.pause()
        assert str(tree.root.children[0].children[0].label) == "a.md"
        stats = {"scene/a.md": {"passes": 3, "with": 0.4125, "without": 0.455, "with_n": 6, "without_n": 2}}
        tree.show(notes, stats)  # same notes, new numbers: the tree redraws
        await pilot.pause()
        first, second = (str(n.label) for n in tree.root.children[0].children)
        assert first == "a.md".ljust(len("longer-name.md") + 2) + "3 reads · 0.412 vs 0.455"
        assert second == "longer-name.md"


async def test_loss_curve_draws_the_mean_and_the_selected_work_on_a_fixed_scale():
    curve = LossCurve()
    async with Harness(curve).run_test(size=(60, 14)) as pilot:
        steps = [(0, 0), (0, 1), (0, 2)]
        series = {"a": {(0, 0): 0.9, (0, 1): 0.5, (0, 2): 0.1}, "b": {(0, 0): 0.7}}
        curve.show(steps, series, {(0, 0): Mean(0.8, 2, 2), (0, 1): Mean(0.5, 1, 1)})
        curve.selected = "a"
        await pilot.pause()
        lines = curve.render().plain.splitlines()
        assert lines[0].startswith("━● mean 0.500") and "─◆ a 0.100" in lines[0]
        plot = lines[1:-1]
        assert plot[0].startswith("1.0 ┤") and plot[-1].startswith("0.0 ┤")
        # The selected work's last point sits near the bottom, its first near the top.
        rows_with = [i for i, line in enumerate(plot) if "◆" in line]
        assert rows_with[0] <= 2 and rows_with[-1] >= len(plot) - 3
        assert any("●" in line for line in plot) and any("•" in line for line in plot)
        assert lines[-1].strip().startswith("e0·s0") and lines[-1].strip().endswith("e0·s2")


def test_the_shipped_folder_holds_a_dark_and_a_light_theme():
    names = {t.name: t.dark for t in load_themes([shipped_dir()]).themes}
    assert names == {DEFAULT_THEME: True, LIGHT_THEME: False}
    assert shipped_dir() == ROOT / "themes"


def test_a_theme_file_with_a_bad_colour_or_key_is_refused_with_its_path(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\nprimary = "#12345G"\n')
    with pytest.raises(ThemeFileError, match="bad.toml: primary"):
        load_theme_file(bad)
    bad.write_text('name = "bad"\nprimary = "#123456"\nshiny = true\n')
    with pytest.raises(ThemeFileError, match="unknown key"):
        load_theme_file(bad)


def test_the_remembered_theme_lives_in_the_xdg_config_folder(config_home: Path):
    assert remembered_theme() is None
    remember_theme(LIGHT_THEME)
    assert remembered_theme() == LIGHT_THEME
    assert (config_home / "skilltui" / "tui.json").is_file()


def bound_keys(bindings) -> set[str]:
    return {key.strip() for b in bindings for key in b.key.split(",")}


# How the key map writes a key, and Textual's name for it.
KEY_NAMES = {"?": "question_mark", "[": "left_square_bracket", "]": "right_square_bracket", "esc": "escape"}
KEY_NAMES |= {"pgup": "pageup", "pgdn": "pagedown", "/": "slash"}


def shown_keys(keys: str) -> list[str]:
    """The keys a row shows, by Textual's names: "a / b" lists alternatives, a "/" alone is the slash key."""
    if keys == "/":
        return ["slash"]
    words = keys.replace(",", " ").split()
    return [KEY_NAMES.get(k, k) for k in words if k not in ("/", "then", "arrows")]


def mentioned_keys(text: str) -> set[str]:
    """Every key a row's text names, by Textual's names (its keys and the keys its words mention)."""
    words = {w.strip(",;:()") for w in text.split()}
    return words | {KEY_NAMES.get(w, w) for w in words}


# Who binds each owner's rows, and the keys a widget or Textual binds on that screen.
LIVE_OWNERS = {"train": TrainingApp, "main screen": MainScreen, "review": ReviewScreen, "side": SideBySideScreen}


def test_every_row_of_the_key_map_is_bound_by_its_owner_and_names_every_key_it_binds():
    from skilltui.apps.history.app import HistoryApp
    from skilltui.apps.history.screens.history import HistoryScreen
    from skilltui.apps.train.screens.candidates import CandidatesScreen

    owners = LIVE_OWNERS | {"history": HistoryScreen, "review app": HistoryApp, "candidates": CandidatesScreen}
    for row in keymap.KEYMAP:
        if row.binds:
            assert all(b in owners[row.owner].BINDINGS for b in row.binds), row
        # A hidden binding still has a row that says what it does.
        for key in bound_keys(row.binds):
            assert key in mentioned_keys(f"{row.keys} {row.what}"), (row.keys, key)
    assert sum(len(r.binds) for r in keymap.KEYMAP) == sum(len(keymap.bindings(o)) for o in owners)


def test_every_key_in_the_key_map_is_bound_where_it_says():
    from skilltui.apps.history.app import HistoryApp
    from skilltui.apps.history.screens.history import HistoryScreen
    from skilltui.apps.shared.widgets.commit_list import CommitList as List

    # The works table and Textual bind the arrows, tab and the palette; the diff keeps the
    # scrolling keys of the scroll view it is; the commit list binds its own moves.
    bound = {
        "main": bound_keys([*TrainingApp.BINDINGS, *MainScreen.BINDINGS, *WorksTable.BINDINGS, *PoolTree.BINDINGS])
        | {"ctrl+p", "tab", "up", "down"},
        "review": bound_keys([*ReviewScreen.BINDINGS, *DiffView.BINDINGS]),
        # The scenes scroll as a scroll view does: it binds the arrows and the page keys.
        "side": bound_keys([*SideBySideScreen.BINDINGS, *VerticalScroll.BINDINGS]),
        "history": bound_keys([*HistoryApp.BINDINGS, *HistoryScreen.BINDINGS, *List.BINDINGS]),
    }
    for row in keymap.KEYMAP:
        for key in shown_keys(row.keys):
            assert key in bound[row.screen], (row.screen, key)
    assert {"1", "2", "3", "4"} <= bound["main"]


def test_the_docs_carry_the_key_map_and_the_screenshots():
    keys = (ROOT / "docs" / "reference" / "keys.md").read_text(encoding="utf-8")
    assert keymap.keymap_markdown() in keys
    assert keymap.key_table("history") in keys
    # The README shows the review screen's keys, the ones a first run needs.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert keymap.key_table("review") in readme
    assert "docs/app.svg" in readme and (ROOT / "docs/app.svg").is_file()
    app = (ROOT / "docs" / "app.md").read_text(encoding="utf-8")
    for picture in ("app.svg", "review.svg", "side-by-side.svg"):
        assert f"]({picture})" in app and (ROOT / "docs" / picture).is_file()


async def test_live_output_loads_a_whole_buffer_and_goes_on_with_the_stream():
    live = LiveOutput()
    async with Harness(live).run_test() as pilot:
        buffer = OutputBuffer(limit=10_000)
        buffer.write("first line\n\nthird line after a blank\nhalf a")
        live.follow("w", buffer)
        await pilot.pause()
        assert [line.rstrip() for line in live.lines] == ["first line", "", "third line after a blank", "half a"]
        buffer.write(" line\nnext")
        live.catch_up()
        assert live.lines[-2:] == ["half a line", "next"]
        for n in range(2000):  # far more than the buffer keeps: the log reloads what it keeps
            buffer.write(f"row {n}\n")
        live.catch_up()
        assert "\n".join(live.lines).rstrip() == buffer.text().rstrip()


class BoundHarness(Harness):
    BINDINGS = [("x", "ring", "Ring"), ("y", "ring_twice", "Ring twice"), ("z", "hidden", "Hidden")]
    rang = 0

    def action_ring(self) -> None:
        self.rang += 1

    def action_ring_twice(self) -> None:
        self.rang += 2

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "hidden"


async def test_key_bar_shows_the_active_bindings_and_a_click_presses_one():
    bar = KeyBar()
    app = BoundHarness(bar)
    async with app.run_test(size=(80, 5)) as pilot:
        await pilot.pause()
        text = bar.render().plain
        assert " x Ring " in text and " y Ring twice " in text
        assert "Hidden" not in text  # an action its screen disables is not offered
        assert text.rstrip().endswith("^p palette")
        start = text.index(" y Ring twice")
        await pilot.click(KeyBar, offset=(start + 2, 0))
        await pilot.pause()
        assert app.rang == 2


async def test_key_bar_repaints_when_its_keys_change_and_not_when_the_signal_brings_the_same(monkeypatch):
    """Each repaint is a frame of its own, and a key pressed just after waits for Textual's next."""
    bar = KeyBar()
    app = BoundHarness(bar)
    async with app.run_test(size=(80, 5)) as pilot:
        await pilot.pause()
        asked: list[bool] = []
        refresh = bar.refresh
        bar.refresh = lambda *a, **k: asked.append(True) or refresh(*a, **k)
        app.screen.refresh_bindings()  # same keys: as every focus change and screen resume says
        await pilot.pause()
        assert asked == []
        monkeypatch.setattr(BoundHarness, "check_action", lambda self, action, params: action not in ("hidden", "ring"))
        app.screen.refresh_bindings()
        await pilot.pause()
        assert asked and " x Ring " not in bar.render().plain


def test_the_loss_axis_names_the_value_each_labelled_row_holds():
    from skilltui.apps.train.widgets.loss_curve import axis_label

    assert axis_label(4, 10) == "0.56┤"  # on 10 rows the middle row holds 0.556, not 0.6
    assert axis_label(5, 11) == "0.5 ┤"
    assert (axis_label(0, 10), axis_label(9, 10), axis_label(3, 10)) == ("1.0 ┤", "0.0 ┤", "    │")
    for height in range(5, 41):
        for y in range(height):
            label = axis_label(y, height)
            assert len(label) == 5
            if label.strip() != "│":
                assert abs(float(label[:-1]) - (1 - y / (height - 1))) < 0.005, (height, y, label)


def test_the_key_bar_tightens_then_leaves_out_whole_keys_never_half_a_key():
    keys = [("a", "Approve", "a", True), ("r", "Rerun…", "r", True), ("p", "Pause", "p", True)]
    roomy, _ = KeyBar._fit(keys, 80)
    assert roomy.plain == " a Approve  r Rerun…  p Pause "
    assert KeyBar._fit(keys, 27)[0].plain == "a Approve r Rerun… p Pause "  # tighter, all three
    tight, spans = KeyBar._fit(keys, 26)  # one column short: p goes whole, not as "p Pa…"
    assert tight.plain == "a Approve r Rerun… "
    assert [key for *_, key in spans] == ["a", "r"]


def test_a_curve_row_is_one_styled_run_per_change_of_mark_not_per_gap():
    """Every run is a segment Textual styles on each frame that draws the curve: gaps join a run."""
    from skilltui.apps.train.widgets.loss_curve import _Canvas

    canvas = _Canvas(12, 1)
    for x in (1, 4, 7):
        canvas.put(x, 0, "•", "$foreground-muted", 1)
    canvas.put(10, 0, "◆", "$text-accent bold", 5)
    row = canvas.row(0)
    assert row.plain == " •  •  •  ◆ "
    assert [span.style for span in row.spans] == ["$foreground-muted", "$text-accent bold"]
