"""A stop signal in the app is said once: the command's last line, not also the summary's first."""

from __future__ import annotations

import signal

from tests.support.tui import wait_for


def test_sigterm_in_the_app_says_the_stop_reason_once(open_training, monkeypatch, capsys):
    from textual.app import App

    from skilltui.agents.offline import OfflineBackend
    from skilltui.apps.train.app import TrainingApp, run_app

    async def stop_while_training(pilot) -> None:
        await wait_for(pilot, lambda: pilot.app.training and pilot.app.main.view.current is not None)
        pilot.app._on_stop_signal(signal.SIGTERM)

    monkeypatch.setattr(TrainingApp, "run", lambda self: App.run(self, headless=True, auto_pilot=stop_while_training))
    opened = open_training()
    assert run_app(opened, OfflineBackend(latency=0.5), secrets=[], hint=False) == 143
    said = capsys.readouterr()
    assert (said.out + said.err).count("SIGTERM") == 1, said.out + said.err
    assert said.err.strip().splitlines()[-1] == "skilltui: run stopped by SIGTERM; run the same command to resume"
    assert said.out.splitlines()[0].startswith("train loss")  # the rest of the summary is still there
