"""A private MLflow tracking store for a test, with MLflow's telemetry off."""

from __future__ import annotations

from pathlib import Path

import pytest

OFFLINE_ENV = {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "1"}


def use_store(mp: pytest.MonkeyPatch, folder: Path) -> str:
    """A tracking store in `folder`; the artifacts go to ./mlruns, so the current folder is `folder` too."""
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    for name, value in {**OFFLINE_ENV, "MLFLOW_TRACKING_URI": uri}.items():
        mp.setenv(name, value)
    mp.chdir(folder)
    # Imported here, not above: a test module skips itself when the mlflow extra is missing and
    # turns telemetry off before MLflow first loads, and both must happen before this import.
    import mlflow

    mlflow.set_tracking_uri(uri)
    return uri
