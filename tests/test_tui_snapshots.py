"""Snapshots of the main screen and the review screen (pytest-textual-snapshot).

The content is made deterministic rather than masked: the run trains real generated works
through the offline engine with a fixed run id, git's commit dates are pinned (so commit
hashes repeat), and the app's clock is frozen (so elapsed time reads 00:00:00).
Update with `pytest tests/test_tui_snapshots.py --snapshot-update` after a deliberate change.
"""

from __future__ import annotations

import pytest

from skilltui.apps.shared.screens.help import HelpScreen
from skilltui.apps.train.screens.side_by_side import SideBySideScreen
from tests.support.tui import make_app, tab_label, wait_for, wait_for_review

SNAPSHOT_SIZE = (120, 36)
SMALLEST = (80, 24)  # the smallest supported size (docs/app.md, "Sizes")
LARGE = (160, 45)
FIXED_DATE = "2026-01-01T12:00:00+00:00"


@pytest.fixture
def pinned_git(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, FIXED_DATE)


def frozen_app(open_training):
    opened = open_training(("harbour", "quarry"), run_id="snapshot")
    return make_app(opened, clock=lambda: 0.0)


async def settle_on_review(pilot) -> None:
    app = pilot.app
    await wait_for_review(pilot, app)
    # The Pool and Commits tabs are hidden here: their labels say the pool has been read.
    await wait_for(pilot, lambda: tab_label(app, "commits") == "Commits · 2")
    await pilot.pause()


async def settle_on_main(pilot) -> None:
    await settle_on_review(pilot)
    await pilot.press("escape")
    await wait_for(pilot, lambda: len(pilot.app.screen_stack) == 1)
    await pilot.pause()


async def settle_on_help(pilot) -> None:
    await settle_on_main(pilot)
    await pilot.press("question_mark")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
    await pilot.pause()


async def settle_on_side_by_side(pilot) -> None:
    await settle_on_main(pilot)
    # The second work: its first episode has a written scene that plays two human scenes and
    # a human scene nothing plays, so the picture shows a pair, a merge and a gap.
    await pilot.press("down", "s")
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, SideBySideScreen) and app.screen.pair is not None)
    await pilot.pause()


def test_review_screen(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=SNAPSHOT_SIZE, run_before=settle_on_review)


def test_main_screen(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=SNAPSHOT_SIZE, run_before=settle_on_main)


def test_review_screen_in_the_light_theme(snap_compare, open_training, pinned_git, config_home):
    (config_home / "skilltui").mkdir(parents=True, exist_ok=True)
    (config_home / "skilltui" / "tui.json").write_text('{"theme": "skilltui-light"}')
    assert snap_compare(frozen_app(open_training), terminal_size=SNAPSHOT_SIZE, run_before=settle_on_review)


def test_main_screen_at_the_smallest_supported_size(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=SMALLEST, run_before=settle_on_main)


def test_review_screen_at_the_smallest_supported_size(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=SMALLEST, run_before=settle_on_review)


def test_help_at_the_smallest_supported_size(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=SMALLEST, run_before=settle_on_help)


def test_main_screen_on_a_large_terminal(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=LARGE, run_before=settle_on_main)


def test_review_screen_on_a_large_terminal(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=LARGE, run_before=settle_on_review)


def test_help_on_a_large_terminal(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=LARGE, run_before=settle_on_help)


def test_side_by_side_at_the_smallest_supported_size(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=SMALLEST, run_before=settle_on_side_by_side)


def test_side_by_side_on_a_large_terminal(snap_compare, open_training, pinned_git):
    assert snap_compare(frozen_app(open_training), terminal_size=LARGE, run_before=settle_on_side_by_side)
