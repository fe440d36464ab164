"""Which MLflow run a skilltui run lands in, and where a SQLite store's artifacts go.

The same settings in two `--runs-dir` folders derive the same run id; they are two runs and
must be two MLflow runs, each with its own metrics, tags and status. A `sqlite:` store's
artifacts belong beside its database file, not in `./mlruns` of whatever folder the command
ran in.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.works import write_work

OFFLINE_ENV = {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "1"}
os.environ.update(OFFLINE_ENV)  # before MLflow is imported: it never reports usage from a test
pytest.importorskip("mlflow", reason="the mlflow extra is not installed (pip install -e '.[mlflow]')")

from mlflow import MlflowClient  # noqa: E402

from skilltui.cli import main  # noqa: E402


def train(runs: Path, works: list[Path], uri: str, *extra: str) -> int:
    argv = ["train", "--auto", "--runs-dir", str(runs), "--steps", "1", "--no-consolidate", "--mlflow", uri]
    return main([*argv, *(a for w in works for a in ("--work", str(w))), *extra])


@pytest.mark.slow
def test_two_runs_dirs_with_the_same_settings_are_two_mlflow_runs(tmp_path, monkeypatch):
    store, cwd = tmp_path / "store", tmp_path / "elsewhere"
    store.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    uri = f"sqlite:///{store / 'mlflow.db'}"
    works = [write_work(tmp_path / "works", "kestrel")]
    assert train(tmp_path / "a", works, uri) == 0
    assert train(tmp_path / "b", works, uri) == 0
    [run_a] = [p for p in (tmp_path / "a").iterdir() if p.is_dir()]
    [run_b] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    assert run_a.name == run_b.name  # the same id, derived from the same settings
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("skilltui: kestrel")
    found = client.search_runs([experiment.experiment_id])
    assert len(found) == 2
    folders = {r.data.tags["skilltui.run_folder"] for r in found}
    assert folders == {str(run_a.resolve()), str(run_b.resolve())}
    for r in found:
        assert r.info.status == "FINISHED" and r.data.tags["skilltui.status"] == "finished"
    # Each kept its own MLflow run, found again from its folder.
    assert main(["mlflow", run_b.name, "--runs-dir", str(tmp_path / "b"), "--uri", uri]) == 0
    assert len(client.search_runs([experiment.experiment_id])) == 2


@pytest.mark.slow
def test_a_sqlite_stores_artifacts_go_beside_its_file_not_into_the_current_folder(tmp_path, monkeypatch):
    store, cwd = tmp_path / "store", tmp_path / "elsewhere"
    store.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    uri = f"sqlite:///{store / 'mlflow.db'}"
    assert train(tmp_path / "runs", [write_work(tmp_path / "works", "kestrel")], uri) == 0
    assert not (cwd / "mlruns").exists()
    assert any(p.name == "events.jsonl" for p in (store / "mlruns").rglob("*"))
