"""Snapshots of `skilltui review` at the smallest supported size (80x24) and a large one (160x45).

The run is trained by the offline engine with git's dates pinned, so the commits, their
hashes and the losses repeat; the app does not poll. Update with
`pytest tests/test_history_snapshots.py --snapshot-update` after a deliberate change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltui.apps.history.app import HistoryApp
from tests.support.history import Scripted, settle, train

FIXED_DATE = "2026-01-01T12:00:00+00:00"


@pytest.fixture
def review_app(make_work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HistoryApp:
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, FIXED_DATE)
    run = train(tmp_path / "runs", [make_work("harbour"), make_work("quarry")], Scripted("rollback"), steps=3)
    return HistoryApp(run, poll=None)


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
def test_history_screen(snap_compare, review_app: HistoryApp, size: tuple[int, int]) -> None:
    assert snap_compare(review_app, terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
def test_history_help(snap_compare, review_app: HistoryApp, size: tuple[int, int]) -> None:
    async def open_help(pilot) -> None:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(review_app, terminal_size=size, run_before=open_help)
