"""The history subcommands, registered into `skilltui` by `skilltui.cli._extra_commands()`.

    skilltui review RUN [--runs-dir DIR]                  browse, diff, revert and reset a run's pool
    skilltui runs [--runs-dir DIR]                        a table of runs and where each stands
    skilltui export RUN --to DIR [--commit REV] [--force] the pool as an Agent Skill folder
    skilltui compare RUN [RUN ...] [--json]               runs side by side: train and validation loss

RUN is a run folder or a run id under --runs-dir (default ./runs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..commands import command
from ..errors import UsageError
from ..words import counted
from .locate import find_run


def _runs_dir(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="where runs are (default ./runs)")


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "review", cmd_review)
    p.add_argument("run", metavar="RUN", help="a run folder, or a run id under --runs-dir")
    _runs_dir(p)

    p = command(sub, "runs", cmd_runs)
    _runs_dir(p)

    p = command(sub, "export", cmd_export)
    p.add_argument("run", metavar="RUN", help="a run folder, or a run id under --runs-dir")
    p.add_argument("--to", required=True, type=Path, metavar="DIR", help="the skill folder to write")
    p.add_argument("--commit", default=None, metavar="REV", help="a pool commit to export (default HEAD)")
    p.add_argument("--force", action="store_true", help="replace DIR even if it is not empty")
    _runs_dir(p)

    p = command(sub, "compare", cmd_compare)
    p.add_argument(
        "runs", nargs="+", metavar="RUN", help="run folders or run ids under --runs-dir; the first is the base"
    )
    p.add_argument("--json", action="store_true", help="print the same table as JSON (rows, and the curves)")
    _runs_dir(p)


def cmd_review(args: argparse.Namespace) -> int:
    """Browse a run's pool history: diffs, evidence, revert and reset, by keyboard.

    Open the review app on a run, running or finished: every commit of the pool with the
    micro-step that made it, its decision and the loss around it. enter diff, e evidence, /
    search, space+d diff two, t revert, g reset, q quit.
    """
    run = find_run(args.run, args.runs_dir)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("`skilltui review` is a terminal app; run it in a terminal (`skilltui runs` prints a table)")
    if run.pool.has_commit():
        run.pool.check_intact(history=True)  # the app reads every commit: damage is one line here, not a crash there
    from .app import ReviewApp

    ReviewApp(run).run()
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    """A table of runs: works, progress, decisions, loss, cost, state.

    List the runs in --runs-dir with what each has done and whether it is running, finished,
    stopped (and why) or was interrupted.
    """
    from .overview import print_runs

    return print_runs(args.runs_dir)


def cmd_export(args: argparse.Namespace) -> int:
    """Write a run's pool as an Agent Skill folder (SKILL.md + notes).

    Write the pool at HEAD (or --commit) as an Agent Skill: DIR/SKILL.md indexes the notes,
    which sit beside it in their folders. Refuses a non-empty DIR unless --force.
    """
    from .export import export_skill

    run = find_run(args.run, args.runs_dir)
    done = export_skill(run, args.to, commit=args.commit, force=args.force)
    notes = counted(done.notes, "note")
    print(f"exported {notes} of run {run.id} at {done.commit[:10]} to {done.folder} (skill {done.name})")
    if done.warning:
        print(f"skilltui: note: {done.warning}", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """Runs side by side per work and epoch: train loss, validation loss, difference to the first run.

    Compare runs by id, per work and per epoch: train loss (the mean of the work's step
    losses in the epoch), validation loss (after the epoch's last step) and each run's
    difference to the first, then a terminal plot of the step-mean curves. Typical: a
    trained run, then its --no-backward control.
    """
    from .compare import print_compare

    runs = [find_run(spec, args.runs_dir) for spec in args.runs]
    if len({r.root for r in runs}) != len(runs):
        raise UsageError("a run is named twice; pass each run once")
    return print_compare(runs, args.json)
