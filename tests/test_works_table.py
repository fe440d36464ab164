"""The works table: what it shows, which rows a change repaints, and how its cursor moves."""

from __future__ import annotations

from skilltui.apps.train.state import WorkRow
from skilltui.apps.train.widgets.works_table import WorksBox, WorksTable
from tests.support.widgets import Harness, painted_lines


def drawn(pilot) -> list[str]:
    return [strip.text for strip in pilot.app.screen._compositor.render_strips()]


def highlighted(pilot, rows: int) -> list[int]:
    """The screen lines of the table's rows drawn in another background than most rows: the cursor's."""
    strips = pilot.app.screen._compositor.render_strips()[1 : rows + 1]
    backgrounds = [next(iter(strip)).style.bgcolor for strip in strips]
    usual = max(set(backgrounds), key=backgrounds.count)
    return [line for line, background in enumerate(backgrounds, 1) if background != usual]


class Chosen(Harness):
    """The harness, keeping the works the table said were chosen."""

    def __init__(self, widget: WorksTable) -> None:
        super().__init__(widget)
        self.chosen: list[str] = []

    def on_works_table_work_chosen(self, message: WorksTable.WorkChosen) -> None:
        self.chosen.append(message.work)


async def test_a_changed_cell_repaints_its_row_and_nothing_else():
    table = WorksTable()
    async with Harness(table).run_test(size=(100, 30)) as pilot:
        rows = [WorkRow(f"work-{n:02d}", needed=2) for n in range(16)]
        table.show(rows)
        await pilot.pause()
        before, strips = drawn(pilot), dict(table._strips)
        rows[3].tokens, rows[3].stage, rows[3].episodes = 12_500, "forward", 1
        table.show(rows)
        await pilot.pause()
        after = drawn(pilot)
        # The screen shows the new cells, on that row only (the header is line 0).
        assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [4]
        assert "forward" in after[4] and "12k" in after[4] and "1/2" in after[4] and "work-03" in after[4]
        assert table.get_cell("work-03", "eps") == "1/2" and table.get_cell("work-03", "stage").plain == "forward"
        # Only that row was drawn again: every other line is the strip drawn before.
        redrawn = {key for key, cached in table._strips.items() if strips.get(key) is not cached}
        assert redrawn == {("work-03", False)}


async def test_the_columns_line_up_under_their_labels_and_long_names_are_cut():
    long = "the-lighthouse-keepers-of-the-northern-archipelago"
    table = WorksTable()
    async with Harness(table).run_test(size=(100, 10)) as pilot:
        row = WorkRow(long, needed=3, episodes=2, loss=0.41234, tokens=1500, cost=0.0123)
        table.show([WorkRow("harbour", needed=3), row])
        await pilot.pause()
        lines = drawn(pilot)
        header, cut = lines[0], lines[2]
        for label, text in (("stage", "waiting"), ("eps", "2/3"), ("loss", "0.412"), ("cost", "$0.0123")):
            assert header.index(label) == cut.index(text), (label, header, cut)
        assert "the-lighthouse-keep…" in cut and long not in cut
        assert table.size.width == table.get_content_width(table.size, table.size)


async def test_the_cursor_moves_with_the_keys_and_the_mouse_and_says_which_work():
    table = WorksTable()
    app = Chosen(table)
    async with app.run_test(size=(60, 8)) as pilot:
        table.show([WorkRow(f"work-{n:02d}", needed=2) for n in range(12)])
        table.focus()
        await pilot.pause()
        assert app.chosen == ["work-00"]  # the first row is chosen as soon as it shows
        assert highlighted(pilot, 5) == [1]
        await pilot.press("down", "j")
        assert table.chosen == "work-02" and app.chosen[-1] == "work-02"
        assert highlighted(pilot, 5) == [3]  # the rows it left are drawn as rows again
        await pilot.press("k")
        assert table.chosen == "work-01"
        # Past the bottom of the view, the rows scroll so the cursor stays in sight.
        await pilot.press("end")
        await pilot.pause()
        assert table.chosen == "work-11" and table.scroll_y > 0
        assert any("work-11" in line for line in drawn(pilot)) and "work" in drawn(pilot)[0]
        await pilot.press("home")
        await pilot.pause()
        assert table.chosen == "work-00" and table.scroll_y == 0
        await pilot.click(WorksTable, offset=(3, 3))  # the third row, under the header
        assert table.chosen == "work-02" and app.chosen[-1] == "work-02"
        await pilot.press("up", "up", "up")
        assert table.chosen == "work-00"  # the first row stops it


async def test_compact_drops_tokens_and_cost_and_keeps_the_cursor_on_its_work():
    table = WorksTable()
    async with Harness(table).run_test(size=(100, 10)) as pilot:
        table.show([WorkRow(f"work-{n:02d}", needed=2, tokens=900) for n in range(3)])
        table.move_cursor(row=2)
        await pilot.pause()
        wide = table.size.width
        table.set_compact(True)
        await pilot.pause()
        assert [key for _, key, _ in table.columns_shown] == ["work", "stage", "eps", "loss"]
        assert "tokens" not in drawn(pilot)[0] and table.size.width < wide
        assert table.chosen == "work-02"


async def test_the_table_keeps_one_strip_per_row_however_long_the_run_streams():
    table = WorksTable()
    async with Harness(table).run_test(size=(100, 30)) as pilot:
        rows = [WorkRow(f"work-{n:02d}", needed=2) for n in range(16)]
        for tick in range(150):  # works streaming: a cell changes on every flush
            rows[tick % 16].tokens += 10
            table.move_cursor(row=tick % 16)
            table.show(rows)
            await pilot.pause()
        assert len(table._strips) <= 2 * 16 + 1  # a row, the same row under the cursor, the header


async def test_naming_the_chosen_work_repaints_the_boxs_foot_only():
    box = WorksBox(WorksTable([WorkRow(f"work-{n:02d}", needed=2) for n in range(4)]))
    box.border_title = "works"
    box.styles.border = ("round", "white")  # the main screen's CSS gives it its border
    async with Harness(box).run_test(size=(60, 10)) as pilot:
        box.name_work("work-00")
        await pilot.pause()
        painted = painted_lines(box)
        box.name_work("work-01 · forward 4s · in step 9s")
        await pilot.pause()
        foot = drawn(pilot)[box.region.bottom - 1]
        assert "work-01 · forward 4s · in step 9s" in foot and "work-00" not in foot
        assert painted == [box.outer_size.height - 1]
        assert "works" in drawn(pilot)[box.region.y]  # the top border kept its title
