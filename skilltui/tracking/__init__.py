"""Runs in an experiment tracker (MLflow): `train --mlflow [URI]` live, `skilltui mlflow RUN` afterwards.

- layout.py: what one skilltui run looks like in a tracker (params, tags, metrics by global
  step, the decisions, which pool commit ends each epoch), followed event by event through
  the one fold of the run model, with the losses taken from the same functions as `compare`;
- mlflow_log.py: that layout written into one MLflow run, idempotently (what the MLflow run
  already holds is never written again), and `log_runs` for finished runs;
- live.py: a thread that follows `events.jsonl` while a run trains and logs as it goes; a
  tracker that fails costs a warning, never the training.

MLflow is an optional extra (`pip install 'skilltui[mlflow]'`). Whether it is installed is
asked of the import system (`require_mlflow`), so a missing extra is a typed refusal before
anything runs, not an ImportError swallowed somewhere that quietly changes what a command does.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from ..core.errors import UsageError

INSTALL = "pip install 'skilltui[mlflow]'"


def require_mlflow(flag: str = "--mlflow") -> None:
    """Refuse, with the install command, when the MLflow client is not installed."""
    if importlib.util.find_spec("mlflow") is None:
        raise UsageError(f"{flag} needs the MLflow client, an optional extra: {INSTALL}")


@dataclass(frozen=True)
class TrackingSpec:
    """Where a run is logged: the tracking URI (None: MLflow's own default) and the experiment (None: the works')."""

    uri: str | None = None
    experiment: str | None = None
