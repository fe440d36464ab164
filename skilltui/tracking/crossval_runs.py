"""A crossval's MLflow runs: one parent per crossval folder, each fold's run its child.

MLflow nests a run under another by the child's `mlflow.parentRunId` tag, within one
experiment, so the folds of one crossval (each trained on other works, whose names would
make other experiments) all log to the crossval's own experiment. The parent holds what no
single fold can: the mean test delta over the folds and its interval across them.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from mlflow import MlflowClient

from ..store.run_folder import Run
from . import TrackingSpec

KIND = "skilltui.kind"
FOLDER = "skilltui.crossval_folder"
# The folds train in one process, each with its own tracker thread: one of them makes the parent.
_MAKING = threading.Lock()


def crossval_folder(run: Run) -> Path | None:
    """The crossval folder `run` is a fold of (it holds `folds.json`), or None for an ordinary run."""
    folder = run.root.parent
    return folder if (folder / "folds.json").exists() else None


def experiment_of(folder: Path) -> str:
    return f"skilltui crossval: {folder.name}"


def parent_run(client: MlflowClient, experiment_id: str, folder: Path) -> str:
    """The parent run of the crossval in `folder`, made by the first fold that asks; its id."""
    key = str(folder.resolve())
    with _MAKING:
        found = client.search_runs([experiment_id], filter_string=f"tags.`{KIND}` = 'crossval'")
        ours = [r for r in found if r.data.tags.get(FOLDER) == key]  # compared here: a path may hold quotes
        if ours:
            return ours[0].info.run_id
        return client.create_run(experiment_id, run_name=folder.name, tags={KIND: "crossval", FOLDER: key}).info.run_id


def log_across_folds(spec: TrackingSpec, folder: Path, mean: Any, finished: bool) -> None:
    """The procedure's figures on the parent run (`crossval/mean_delta`, its interval, a new work's, the folds,
    and `crossval/correlation`, the fold correlation the intervals assume, without which they cannot be read)."""
    client = MlflowClient(tracking_uri=spec.uri)
    experiment = client.get_experiment_by_name(spec.experiment or experiment_of(folder))
    if experiment is None:
        return  # no fold was logged: there is no parent to write to
    parent = parent_run(client, experiment.experiment_id, folder)
    if mean is not None:
        figures = {"mean_delta": mean.mean, "low": mean.low, "high": mean.high, "folds": mean.folds}
        figures |= {"new_low": mean.new_low, "new_high": mean.new_high}  # where one new work may land
        figures["correlation"] = mean.correlation  # the fold correlation both intervals assume
        for name, value in figures.items():
            if value is not None:
                client.log_metric(parent, f"crossval/{name}", float(value))
    client.set_terminated(parent, "FINISHED" if finished else "KILLED")
