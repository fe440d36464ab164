"""The history subcommands: what was trained, read back (`skilltui.commands.register_all` adds them).

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

from ..core.errors import UsageError
from ..core.safe_text import visible
from ..core.words import counted
from ..runs.locate import find_run
from . import add_run_arg, add_runs_dir, command


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "review", cmd_review, keys=_history_keys)
    add_run_arg(p)

    p = command(sub, "runs", cmd_runs)
    add_runs_dir(p)

    p = command(sub, "export", cmd_export)
    add_run_arg(p)
    p.add_argument("--to", required=True, type=Path, metavar="DIR", help="the skill folder to write")
    p.add_argument("--commit", default=None, metavar="REV", help="a pool commit to export (default HEAD)")
    p.add_argument("--force", action="store_true", help="replace DIR if it is an earlier export (holds a SKILL.md)")

    p = command(sub, "blame", cmd_blame)
    p.add_argument("run", metavar="RUN", help="a run folder, or a run id under --runs-dir")
    p.add_argument(
        "note",
        metavar="NOTE",
        help="a note of the pool, as its path in the pool (e.g. scene/scene-headings.md, which the demo writes)",
    )
    p.add_argument("--json", action="store_true", help="print every line and its micro-step as JSON")
    add_runs_dir(p)

    p = command(sub, "compare", cmd_compare)
    p.add_argument(
        "runs", nargs="+", metavar="RUN", help="run folders or run ids under --runs-dir; the first is the base"
    )
    p.add_argument("--json", action="store_true", help="print the same table as JSON (rows, and the curves)")
    add_runs_dir(p)


def _history_keys() -> str:
    from ..apps.shared.keymap import key_lines

    return "\n".join(key_lines("history"))


def cmd_review(args: argparse.Namespace) -> int:
    """Browse a run's pool history: diffs, evidence, revert and reset, by keyboard.

    Open the review app on a run, running or finished: every commit of the pool with the
    micro-step that made it, its decision and the loss around it.
    """
    run = find_run(args.run, args.runs_dir)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("`skilltui review` is a terminal app; run it in a terminal (`skilltui runs` prints a table)")
    if run.pool.has_commit():
        run.pool.check_intact(history=True)  # the app reads every commit: damage is one line here, not a crash there
    from ..apps.history.app import HistoryApp

    HistoryApp(run).run()
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    """A table of runs: works, progress, decisions, loss, cost, state.

    List the runs in --runs-dir with what each has done and whether it is running, finished,
    stopped (and why) or was interrupted.
    """
    from ..runs.overview import print_runs

    return print_runs(args.runs_dir)


def cmd_blame(args: argparse.Namespace) -> int:
    """Every line of a note with the micro-step that last changed it: evidence, loss, validation, cost.

    Blame NOTE at the pool's HEAD (git blame), and say for each commit that wrote a line which
    micro-step made it, the works whose loss reports it acted on, the train loss of its step
    and the next, the gate's validation figures when the gate ran, what its backward attempt
    cost, and how it was decided.
    """
    import json

    from ..runs.blame import blame, blame_text

    run = find_run(args.run, args.runs_dir)
    result = blame(run, args.note)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print("\n".join(visible(line) for line in blame_text(result)))  # a note's lines are agent text
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write a run's pool as an Agent Skill folder (SKILL.md + notes).

    Write the pool at HEAD (or --commit) as an Agent Skill: DIR/SKILL.md indexes the notes,
    which sit beside it in their folders. Refuses a non-empty DIR unless --force, which
    replaces only an earlier export (a folder with a SKILL.md).
    """
    from ..runs.export import export_skill

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
    from ..runs.compare import print_compare

    runs = [find_run(spec, args.runs_dir) for spec in args.runs]
    if len({r.root for r in runs}) != len(runs):
        raise UsageError("a run is named twice; pass each run once")
    return print_compare(runs, args.json)
