"""The `skilltui` subcommands, one module per family, registered by `skilltui.cli.build_parser`.

- training.py: `train` and `demo`, the commands that run training (headless or in the app);
- material.py: `diffuse`, `lint` and `score`, one-shot commands on what training uses and
  makes: a work's story, a pool's notes, a script's loss.

The history commands (`review`, `runs`, `export`, `compare`) are in skilltui/history/cli.py
and `report` in skilltui/report/cli.py. Each module's `register(sub)` adds its parsers and
sets `handler`; a handler takes the parsed arguments and returns the exit code, and raises
`UsageError` for bad input (the command line turns it into one line and exit code 2).
Handlers import the engine when they run, not when the command line starts, so
`skilltui --help` stays quick and a stop signal during start-up ends in one line.
"""

from __future__ import annotations

import argparse

from ..agents import BACKENDS


def add_model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="who plays the agents: offline (no network; the default without ANTHROPIC_API_KEY), "
        "anthropic (the default with a key), claude-code (optional extra)",
    )
    p.add_argument("--model", default=None, help="model for every role (e.g. claude-sonnet-5-5)")
