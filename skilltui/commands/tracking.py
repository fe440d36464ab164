"""`skilltui mlflow RUN [RUN ...]` and `train --mlflow [URI]`: runs in MLflow, the experiment tracker.

The flags of `train` are added here (`add_tracking_flags`) so both commands say the same
thing; `spec_from` turns them into a `TrackingSpec` and refuses them, before anything runs,
when the optional extra is not installed. The logging itself is skilltui/tracking/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import UsageError
from . import command

if TYPE_CHECKING:
    from ..tracking import TrackingSpec

DEFAULT_URI = ""  # `--mlflow` alone: MLflow's own default (MLFLOW_TRACKING_URI, else sqlite:///mlflow.db)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "mlflow", cmd_mlflow)
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders or run ids under --runs-dir")
    p.add_argument(
        "--uri",
        default=None,
        metavar="URI",
        help="the MLflow tracking URI (default: MLflow's own, MLFLOW_TRACKING_URI or sqlite:///mlflow.db)",
    )
    add_experiment_flag(p)
    p.add_argument("--runs-dir", type=Path, default=Path("runs"), help="where runs are (default ./runs)")


def add_experiment_flag(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    p.add_argument(
        "--mlflow-experiment",
        default=None,
        metavar="NAME",
        help="the MLflow experiment (default: named after the works, so a run and its control meet there)",
    )


def add_tracking_flags(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--mlflow` and `--mlflow-experiment`, in `train`'s tracking group beside --runs-dir and --run-id."""
    p.add_argument(
        "--mlflow",
        nargs="?",
        const=DEFAULT_URI,
        default=None,
        metavar="URI",
        help="log the run to MLflow as it trains (optional extra: pip install 'skilltui[mlflow]'); "
        "URI defaults to MLflow's own (e.g. sqlite:///mlflow.db)",
    )
    add_experiment_flag(p)


def spec_from(args: argparse.Namespace) -> TrackingSpec | None:
    """The run's tracking from `train`'s flags, or None; refused without the MLflow extra."""
    from ..tracking import TrackingSpec, require_mlflow

    if args.mlflow is None:
        if args.mlflow_experiment is not None:
            raise UsageError("--mlflow-experiment names where --mlflow logs; add --mlflow [URI]")
        return None
    require_mlflow("--mlflow")
    return TrackingSpec(uri=args.mlflow or None, experiment=args.mlflow_experiment)


def cmd_mlflow(args: argparse.Namespace) -> int:
    """Log finished runs to MLflow: params, metrics by step, decisions, pool, report.

    Log each RUN from its folder into one MLflow run (named by the run id, in an experiment
    named after the works), the same layout `train --mlflow` logs live. Logging a run again
    updates its MLflow run and never duplicates it. Open them with `mlflow ui
    --backend-store-uri URI`.
    """
    from ..runs.locate import find_run
    from ..store.run_folder import is_locked
    from ..tracking import TrackingSpec, require_mlflow

    require_mlflow("`skilltui mlflow`")
    from ..tracking.mlflow_log import log_finished

    runs = [find_run(spec, args.runs_dir) for spec in args.runs]
    if len({r.root for r in runs}) != len(runs):
        raise UsageError("a run is named twice; pass each run once")
    for run in runs:
        if is_locked(run.root):
            raise UsageError(f"run {run.id} is training now; log it once it stops (or train it with --mlflow)")
    spec = TrackingSpec(uri=args.uri, experiment=args.mlflow_experiment)
    for run in runs:
        log, added = log_finished(run, spec)
        print(f"logged run {run.id} to MLflow run {log.run_id} in {log.experiment!r} at {log.uri} ({added} new points)")
    print(f"open them with: mlflow ui --backend-store-uri {log.uri}", file=sys.stderr)
    return 0
