"""`skilltui train` and `skilltui demo`: open a run and train it, headless or in the app;
`skilltui repair`: put a run's damaged pool back on an intact commit so training can go on.

`train` turns its flags into `Settings`, checks them and hands the run to the app when it
runs on a terminal, or trains headless with `--auto` (without a terminal it refuses:
`unattended`). `demo` is `train` on the bundled example works with the offline backend.
Headless, SIGINT, SIGTERM and SIGHUP stop the run before the next stage (a second one at
once) and the same command resumes it.
"""

from __future__ import annotations

import argparse

from . import command
from .run_backends import backend_for_run, preflight
from .settings_flags import add_setting_flags, settings_from
from .tracking import add_tracking_flags, spec_from
from .train_session import train
from .unattended import refuse_offline_models


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
        from .estimate import estimate_run
        from .estimate_text import estimate_lines

        print("\n".join(estimate_lines(estimate_run(settings, _default_model(settings.backend)))))
        return 0
    refuse_offline_models(settings)
    backend = backend_for_run(settings)
    preflight(settings, backend)
    return train(settings, backend, tracking)


def _default_model(backend: str) -> str:
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
