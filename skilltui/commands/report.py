"""The `report` subcommand (`skilltui.commands.register_all` adds it).

skilltui report RUN --to FILE.html [--runs-dir DIR]   one self-contained web page of a run
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..runs.locate import find_run
from . import add_run_arg, command


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "report", cmd_report)
    add_run_arg(p)
    p.add_argument("--to", required=True, type=Path, metavar="FILE.html", help="the page to write (replaced if there)")


def cmd_report(args: argparse.Namespace) -> int:
    """Write one self-contained HTML page of a run: settings, curves, every micro-step, final notes.

    Write RUN as one web page that opens in any browser and fetches nothing: the run's settings,
    the train and validation curves, every micro-step with its decision, who made it, the losses
    around it and its diff, and the notes as the run left them. For people who do not use a terminal.
    """
    from ..apps.report.build import write_report

    run = find_run(args.run, args.runs_dir)
    page = write_report(run, args.to)
    if page.skipped:
        print(f"warning: {page.skipped}", file=sys.stderr)
    print(f"wrote {Path(args.to).expanduser()} (run {run.id})")
    return 0
