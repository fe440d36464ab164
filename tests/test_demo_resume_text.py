"""Wherever the live app says how to resume, it says the run's own way: a demo's `train` command.

`skilltui demo` run again starts a fresh demo, so "run the same command again" would be untrue
for a demo; the quit dialog and the `?` help both name what `OpenedRun.resume` says.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from skilltui.apps.shared.screens.confirm import ConfirmScreen
from skilltui.apps.shared.screens.help import HelpScreen
from skilltui.commands.demo import train_command
from tests.support.tui import make_app, wait_for


def demo_resume(opened) -> str:
    return f"resume it with: {train_command(opened.settings.runs_dir, [Path('runs/demo-works/dead-air')], 'demo')}"


def shown(screen) -> str:
    return " ".join(str(w.render()) for w in screen.query(Static))


async def test_the_quit_dialog_of_a_demo_names_the_train_command(open_training):
    opened = open_training()
    opened.resume = demo_resume(opened)
    app = make_app(opened, latency=0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.training)
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        text = shown(app.screen)
        assert "Resume it with: skilltui train --work runs/demo-works/dead-air" in text
        assert "same command" not in text
        await pilot.press("n")
        app.stop_training("test over")


async def test_the_help_of_a_demo_names_the_train_command(open_training):
    opened = open_training()
    opened.resume = demo_resume(opened)
    app = make_app(opened, latency=0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen.is_mounted)
        text = shown(app.screen)
        assert "After quitting, resume it with: skilltui train --work runs/demo-works/dead-air" in text
        assert "same command" not in text
        app.stop_training("test over")


async def test_a_train_run_still_says_run_the_same_command(open_training):
    app = make_app(open_training(), latency=0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.training)
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "Run the same command to resume." in shown(app.screen)
        await pilot.press("n")
        app.stop_training("test over")
