"""`skilltui crossval --mlflow`: one parent MLflow run for the crossval, each fold's run its child.

The parent holds the procedure's figure (the mean test delta over the folds and its interval
across them), which no fold's run can; the folds log to the crossval's one experiment, since
MLflow nests runs only within an experiment.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.support.splits import bundled_works, crossval_argv
from tests.support.tracking import OFFLINE_ENV, use_store

os.environ.update(OFFLINE_ENV)
pytest.importorskip("mlflow", reason="the mlflow extra is not installed (pip install -e '.[mlflow]')")

from mlflow import MlflowClient  # noqa: E402

from skilltui.cli import main  # noqa: E402


@pytest.mark.slow
def test_a_crossval_is_one_parent_run_with_a_child_per_fold(tmp_path, monkeypatch, capsys):
    uri = use_store(monkeypatch, tmp_path)
    runs = tmp_path / "runs"
    argv = crossval_argv(runs, bundled_works(tmp_path / "works"), "--mlflow", uri)
    assert main(argv) == 0
    out = capsys.readouterr().out
    mean = json.loads(out[out.index("{") :])["mean"]  # the fold assignment is printed before the JSON
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("skilltui crossval: cv")
    assert experiment is not None
    found = client.search_runs([experiment.experiment_id])
    parents = [r for r in found if r.data.tags.get("skilltui.kind") == "crossval"]
    assert len(parents) == 1
    parent = parents[0]
    children = [r for r in found if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    assert sorted(r.info.run_name for r in children) == ["fold1", "fold2", "fold3"]
    assert len(found) == 4  # the parent and its three folds, nothing else
    assert parent.info.status == "FINISHED"
    assert parent.data.metrics["crossval/mean_delta"] == pytest.approx(mean["mean"])
    assert parent.data.metrics["crossval/folds"] == 3
    assert parent.data.metrics["crossval/correlation"] == mean["correlation"] == 0.333  # what the interval assumes

    # The same command again trains nothing and finds the same parent: still one.
    assert main(argv) == 0
    again = client.search_runs([experiment.experiment_id])
    assert len([r for r in again if r.data.tags.get("skilltui.kind") == "crossval"]) == 1 and len(again) == 4
