"""Training one opened run: in the live app on a terminal, headless with `--auto`.

`skilltui train` and `skilltui demo` both end here once their settings are checked, so the
rules for who reviews (a person in the app, the `--auto` policy, never nobody), the
forecast kept in the run and the MLflow tracker's lifetime hold for both the same way.
"""

from __future__ import annotations

import sys

from ..core.errors import UsageError
from .unattended import require_reviewer


def train(settings, backend, tracking=None, *, resume: str | None = None) -> int:
    """Open the run and train it, headless (--auto) or in the app; logged to MLflow with `tracking`.
    `resume`: how to resume it, said where a session stops short (default: run the same command).

    On a terminal without --auto a person means to review every update, so when the app
    cannot start the command stops (one line, exit 2) rather than train with nobody
    reviewing; `--auto` is the way to train unattended.
    """
    from ..agents.redact import env_secrets
    from ..engine.session import AlreadyFinished, open_run

    require_reviewer("train", settings.auto)
    # Loaded before the run is opened: an app that cannot load leaves no trace in the run.
    tui_app = None if settings.auto else _app_module()
    try:
        opened = open_run(settings, refuse_finished=True)
    except AlreadyFinished as exc:
        print(exc)
        return 0
    if resume is not None:
        opened.resume = resume
    tracker = None
    if tracking is not None:
        from ..tracking.live import LiveTracker, to_stderr

        # In the app a warning waits for the terminal to be the shell's again.
        tracker = LiveTracker(opened.run, tracking, say=None if tui_app is not None else to_stderr)
        tracker.start()
    try:
        _write_estimate(opened, backend)
        if tui_app is None:
            return _train_headless(opened, backend)
        from ..core.signals import deferred_signals

        try:
            app = tui_app.TrainingApp(opened, backend, secrets=env_secrets())
        except Exception as exc:  # noqa: BLE001 - any failure to make the app ends the command, said in one line
            raise _no_app(exc) from exc
        # The app acts on stop signals itself once it runs (one that comes earlier waits for
        # it): ending at once would leave the terminal in the app's full-screen mode.
        with deferred_signals():
            return tui_app.run_training_app(app)
    finally:
        if tracker is not None:
            tracker.close()
            if tui_app is not None and tracker.warning:
                print(tracker.warning, file=sys.stderr)
        opened.lock.release()


def _write_estimate(opened, backend) -> None:
    """The forecast, kept in the run when it starts, so `skilltui runs` can set it beside what was spent."""
    from ..store.run import write_json
    from .estimate import forecast

    path = opened.run.root / "estimate.json"
    # Only a new run: a forecast made on resume would not be what the run was started on.
    if not opened.resumed and not path.exists():
        s = opened.settings
        write_json(path, forecast(s, opened.works, opened.val_works, s.models_by_role(backend.model)))


def _app_module():
    """The live app's module, imported here so that a failure to load it is said, not worked around."""
    try:
        from ..tui import app
    except Exception as exc:  # noqa: BLE001 - a broken app stops the command with what broke
        raise _no_app(exc) from exc
    return app


def _no_app(exc: BaseException) -> UsageError:
    what = next(iter(str(exc).splitlines()), "")
    return UsageError(
        f"the training app cannot start ({type(exc).__name__}: {what}); nothing was trained. "
        "Run with --auto to train unattended"
    )


def _train_headless(opened, backend) -> int:
    from ..agents.redact import env_secrets
    from ..runner.headless import train_headless

    return train_headless(opened, backend, secrets=env_secrets())
