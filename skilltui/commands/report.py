"""The `report` subcommand, registered into `skilltui` by `skilltui.cli._extra_commands()`.

skilltui report RUN --to FILE.html [--runs-dir DIR]   one self-contained web page of a run
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..runs.locate import find_run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write one self-contained HTML page of a run: settings, curves, every micro-step, final notes",
        description="Write RUN as one web page that opens in any browser and fetches nothing: the run's settings, "
        "the train and validation curves, every micro-step with its decision, who made it, the losses around it "
        "and its diff, and the notes as the run left them. For people who do not use a terminal.",
    )
    p.add_argument("run", metavar="RUN", help="a run folder, or a run id under --runs-dir")
    p.add_argument("--to", required=True, type=Path, metavar="FILE.html", help="the page to write (replaced if there)")
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="where runs are (default ./runs)")
    p.set_defaults(handler=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from ..report.build import write_report

    run = find_run(args.run, args.runs_dir)
    written = write_report(run, args.to)
    print(f"wrote {written} (run {run.id})")
    return 0
