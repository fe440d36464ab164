"""`skilltui train` and `skilltui demo`: open a run and train it, headless or in the app;
`skilltui repair`: put a run's damaged pool back on an intact commit so training can go on.

`train` turns its flags into `Settings`, checks them and hands the run to the app when it
runs on a terminal, or trains headless with `--auto` (without a terminal it refuses:
`unattended`). `demo` is `train` on the bundled example works with the offline backend.
Headless, SIGINT, SIGTERM and SIGHUP stop the run before the next stage (a second one at
once) and the same command resumes it.

`train` (the function) trains one opened run: `skilltui train`, `skilltui demo` and each
crossval fold end there once their settings are checked, so the rules for who reviews (a
person in the app, the `--auto` policy, never nobody), the forecast kept in the run and the
MLflow tracker's lifetime hold for all of them the same way.
"""

from __future__ import annotations

import argparse
import sys
from types import ModuleType
from typing import TYPE_CHECKING

from ..core.errors import UsageError
from . import command
from .run_backends import backend_for_run, preflight
from .settings_flags import add_setting_flags, settings_from
from .tracking import add_tracking_flags, spec_from
from .unattended import refuse_offline_models, require_reviewer

if TYPE_CHECKING:
    from ..agents.base import Backend
    from ..engine.opening import OpenedRun
    from ..engine.settings import Settings
    from ..tracking import TrackingSpec


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "train", cmd_train)
    add_train_flags(p)


def add_train_flags(p: argparse.ArgumentParser) -> None:
    """Every setting's flag, by task (engine/settings_fields.py), and the three that are the command's own."""
    groups = add_setting_flags(p)
    groups["cost"].add_argument(
        "--estimate",
        action="store_true",
        help="print what the run would cost (calls and tokens per role, dollars, wall time) and stop: "
        "no model is called and no run folder is made",
    )
    add_tracking_flags(groups["tracking"])


def cmd_train(args: argparse.Namespace) -> int:
    """Train a pool on one or more works.

    Train a pool of craft notes on the works. Run the same command again to resume. Without
    --auto the terminal app opens and you review every update.
    """
    settings = settings_from(args)
    settings.check()
    tracking = spec_from(args)
    if args.estimate:
        from ..estimate.plan import estimate_run
        from ..estimate.text import estimate_lines

        print("\n".join(estimate_lines(estimate_run(settings, default_model(settings.backend)))))
        return 0
    refuse_offline_models(settings)
    backend = backend_for_run(settings)
    preflight(settings, backend)
    return train(settings, backend, tracking)


def default_model(backend: str) -> str:
    """The model a backend calls without --model, known without making the backend (which needs a key)."""
    if backend == "anthropic":
        from ..agents.anthropic_backend import DEFAULT_MODEL
    elif backend == "openai":
        DEFAULT_MODEL = "gpt-5.4"  # noqa: N806 - openai_backend's, known without the openai extra
    elif backend == "claude-code":
        from ..agents.claude_code import DEFAULT_MODEL
    elif backend == "codex":
        from ..agents.codex import DEFAULT_MODEL
    elif backend.startswith("mailbox:"):
        DEFAULT_MODEL = "mailbox"  # noqa: N806 - whoever answers picks the model
    else:
        DEFAULT_MODEL = "offline"  # noqa: N806 - the same name as the backends' constant
    return DEFAULT_MODEL


def train(
    settings: Settings, backend: Backend, tracking: TrackingSpec | None = None, *, resume: str | None = None
) -> int:
    """Open the run and train it, headless (--auto) or in the app; logged to MLflow with `tracking`.
    `resume`: how to resume it, said where a session stops short (default: run the same command).

    On a terminal without --auto a person means to review every update, so when the app
    cannot start the command stops (one line, exit 2) rather than train with nobody
    reviewing; `--auto` is the way to train unattended.
    """
    from ..agents.redact import env_secrets
    from ..engine.opening import AlreadyFinished, open_run

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
        write_estimate(opened, backend)
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


def write_estimate(opened: OpenedRun, backend: Backend) -> None:
    """The forecast, kept in the run when it starts, so `skilltui runs` can set it beside what was spent."""
    from ..estimate.plan import forecast
    from ..store.run_folder import write_json

    path = opened.run.root / "estimate.json"
    # Only a new run: a forecast made on resume would not be what the run was started on.
    if not opened.resumed and not path.exists():
        s = opened.settings
        data = forecast(s, opened.works, opened.val_works, s.models_by_role(backend.model))
        write_json(path, data)
        # Said before the first call, with the run's first warnings: a writer that never varies detects anything.
        if data.get("gate_power") and not backend.deterministic:
            opened.notices.append(data["gate_power"])


def _app_module() -> ModuleType:
    """The live app's module, imported here so that a failure to load it is said, not worked around."""
    try:
        from ..apps.train import app
    except Exception as exc:  # noqa: BLE001 - a broken app stops the command with what broke
        raise _no_app(exc) from exc
    return app


def _no_app(exc: BaseException) -> UsageError:
    what = next(iter(str(exc).splitlines()), "")
    return UsageError(
        f"the training app cannot start ({type(exc).__name__}: {what}); nothing was trained. "
        "Run with --auto to train unattended"
    )


def _train_headless(opened: OpenedRun, backend: Backend) -> int:
    from ..agents.redact import env_secrets
    from ..drivers.headless import train_headless

    return train_headless(opened, backend, secrets=env_secrets())
