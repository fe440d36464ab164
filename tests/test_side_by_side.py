"""Written next to human: the episode beside the human one, paired exactly as the loss paired them."""

from __future__ import annotations

import contextlib
import json

import pytest
from textual.app import App

from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.apps.train.screens.side_by_side import SideBySideScreen
from skilltui.engine.loss.scores import compare, parse, score_step
from skilltui.runs.episode_pair import pair_texts, rows_of
from tests.support.tui import SIZE, make_app, screen_text, stub_editor, wait_for, wait_for_review

KITCHEN = "INT. KITCHEN - NIGHT\n\nMara burns the letter over the stove.\n\nMARA\nIt was never yours to keep.\n"
HARBOUR = "EXT. HARBOUR - DAWN\n\nFishing boats knock together in the fog.\n\nTOMAS\nThe tide came in wrong today.\n"
CHURCH = "INT. CHURCH - DAY\n\nCandles gutter. The priest counts the coins.\n\nPRIEST\nSomeone has been stealing.\n"
CLIFF = "EXT. CLIFF PATH - NIGHT\n\nMara climbs with a lantern in the wind.\n\nMARA\nShow me the light again.\n"
CAR = "EXT. MOTORWAY SERVICES - NOON\n\nA trucker eats a sandwich and sings along to the radio.\n"
HARBOUR_REWORDED = (
    "EXT. HARBOUR - DAWN\n\nIn the fog the fishing boats knock against each other.\n\n"
    "TOMAS\nToday the tide came in wrong.\n"
)


def scripted(*scenes: str) -> str:
    return "\n".join(scenes)


def pairs(rows) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return [(row.human, row.written) for row in rows]


def test_a_missing_and_an_added_scene_are_marked_where_they_fall_and_the_rest_pair_in_order():
    human = scripted(KITCHEN, HARBOUR, CHURCH, CLIFF)
    written = scripted(KITCHEN, HARBOUR_REWORDED, CAR, CLIFF)
    w, h, groups, parts = pair_texts(written, human)
    rows = rows_of(groups, len(h.scenes), len(w.scenes))
    # The church is not written: it sits after the harbour it follows; the motorway is the writer's own.
    assert pairs(rows) == [((0,), (0,)), ((1,), (1,)), ((2,), ()), ((), (2,)), ((3,), (3,))]
    assert all(row.in_order for row in rows if row.matched)
    assert [row.sim for row in rows if not row.matched] == [None, None]
    # The same groups and parts the loss computes: the view cannot say other than the number.
    assert (parts, groups) == compare(parse(written), parse(human))
    counts = score_step({1: written}, {1: human})["counts"]["1"]["matched_scenes"]
    assert [[i + 1, j + 1, round(r.sim, 3)] for r in rows if r.matched for i in r.human for j in r.written] == counts


def test_a_scene_played_out_of_the_human_order_is_marked_and_still_paired():
    human = scripted(KITCHEN, HARBOUR, CHURCH, CLIFF)
    written = scripted(HARBOUR, KITCHEN, CHURCH, CLIFF)
    w, h, groups, _ = pair_texts(written, human)
    rows = rows_of(groups, len(h.scenes), len(w.scenes))
    assert sorted(pairs(rows)) == [((0,), (1,)), ((1,), (0,)), ((2,), (2,)), ((3,), (3,))]
    # Kitchen and harbour cannot both be in the human order: exactly one of them earned no `scenes` credit.
    assert [row.human for row in rows if not row.in_order] in ([(0,)], [(1,)])


def recorded_matches(run_dir, work: str, episode: int) -> list[list]:
    scores = json.loads((run_dir / "epoch0" / "step0" / "loss" / f"{work}.json").read_text(encoding="utf-8"))
    return scores["counts"][str(episode)]["matched_scenes"]


def shown_matches(screen: SideBySideScreen) -> list[list]:
    assert screen.pair is not None
    return [[i + 1, j + 1, round(r.sim, 3)] for r in screen.pair.rows if r.matched for i in r.human for j in r.written]


async def on_main_at_the_review(pilot, app) -> None:
    await wait_for_review(pilot, app)
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is app.main)


async def open_pairs(pilot, app) -> SideBySideScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, SideBySideScreen) and app.screen.pair is not None)
    await pilot.pause()
    return app.screen


async def test_s_on_a_work_shows_its_episodes_paired_as_the_loss_recorded_them(open_training):
    opened = open_training(("harbour", "quarry"))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await on_main_at_the_review(pilot, app)
        work = app.selected_work
        await pilot.press("s")
        screen = await open_pairs(pilot, app)
        assert (screen.work, screen.episode, screen.episodes) == (work, 1, [1, 2])
        assert shown_matches(screen) == recorded_matches(opened.run.root, work, 1)
        text = screen_text(app)
        assert f"Written next to human · {work} · epoch 0 step 0 · episode 1 (1 of 2)" in text
        # Every scene of both sides is on a row once.
        pair = screen.pair
        assert sorted(i for r in pair.rows for i in r.human) == list(range(len(pair.human.scenes)))
        assert sorted(j for r in pair.rows for j in r.written) == list(range(len(pair.written.scenes)))
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: screen.pair is not None and screen.pair.episode == 2)
        assert shown_matches(screen) == recorded_matches(opened.run.root, work, 2)
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: any("last episode" in n.message for n in app._notifications))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.main)
        app.stop_training("test over")


async def test_s_on_the_review_screen_pairs_the_work_whose_evidence_is_shown(open_training):
    opened = open_training(("harbour", "quarry"), group_size=2)
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        review = await wait_for_review(pilot, app)
        await pilot.press("right_square_bracket", "right_square_bracket")  # summary, harbour, quarry
        await pilot.pause()
        assert review.request.works == ["harbour", "quarry"]
        await pilot.press("s")
        screen = await open_pairs(pilot, app)
        assert screen.work == "quarry"
        assert shown_matches(screen) == recorded_matches(opened.run.root, "quarry", 1)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen))
        app.stop_training("test over")


@pytest.mark.subprocess
async def test_e_pairs_an_edited_copy_of_the_episode_and_leaves_the_run_as_written(
    open_training, tmp_path, monkeypatch
):
    monkeypatch.setenv("VISUAL", str(stub_editor(tmp_path, "\n" + CAR)))
    # The headless test driver cannot hand the terminal over; the editor runs all the same.
    monkeypatch.setattr(App, "suspend", lambda self: contextlib.nullcontext())
    opened = open_training(("harbour",))
    app = make_app(opened)
    async with app.run_test(size=SIZE) as pilot:
        await on_main_at_the_review(pilot, app)
        await pilot.press("s")
        screen = await open_pairs(pilot, app)
        original = screen.pair
        before = original.written_path.read_text(encoding="utf-8")
        await pilot.press("e")
        await wait_for(pilot, lambda: screen.pair is not None and screen.pair.edited)
        edited = screen.pair
        assert len(edited.written.scenes) == len(original.written.scenes) + 1
        # The motorway has no human scene: its row is the writer's (here the person's) own.
        assert edited.rows[-1].human == () and edited.rows[-1].written == (len(edited.written.scenes) - 1,)
        assert edited.loss > original.loss  # an extra scene costs its share
        await pilot.pause()
        assert "your edited copy (not in the run)" in screen_text(app)
        assert "no human scene: the writer added it" in screen_text(app)
        assert original.written_path.read_text(encoding="utf-8") == before
        app.stop_training("test over")
