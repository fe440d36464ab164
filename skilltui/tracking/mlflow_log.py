"""A run's layout written into one MLflow run, as often as asked, without writing anything twice.

One skilltui run is one MLflow run, named by the run id, in an experiment named after the
works (or the one asked for). The MLflow run's id is kept in the run folder (`mlflow.json`,
per tracking URI), and the run also carries the tags `skilltui.run_id` and
`skilltui.run_folder` (the folder's absolute path), so logging a run again, resuming it, or
logging it after its `mlflow.json` was lost all reach the same MLflow run. The folder is part
of the key: the same settings in two `--runs-dir` folders derive the same run id, and are two
runs, so they are two MLflow runs.

What is already there is read back from MLflow when the run is opened (each metric's history,
the params, the artifact folders), not remembered by us: a process killed between two writes
leaves MLflow holding what it holds, and the next `sync` adds only the missing steps. So a
kill and a resume leave one MLflow run with every step once in every metric's history.

Artifacts: the pool as an Agent Skill folder (`skilltui export`) at each epoch's end
(`pool/epoch<E>`) and at the end (`pool/final`), the HTML report (`report.html`), the final
`events.jsonl`, and `decisions.json`, the table of every decision with the gate's figures.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.request import pathname2url

import mlflow
from mlflow import MlflowClient
from mlflow.entities import Metric, Param, RunTag
from mlflow.exceptions import MlflowException
from sqlalchemy.exc import SQLAlchemyError

from ..apps.report.build import write_report
from ..core.errors import UsageError
from ..model.parse import read_run
from ..runs.export import export_skill
from ..store.run_folder import Run, read_json, write_json
from . import TrackingSpec
from .crossval_runs import crossval_folder, experiment_of, parent_run
from .layout import RunLayout

STATE_FILE = "mlflow.json"
BATCH = 1000  # MLflow takes at most 1000 metrics (and 100 params or tags) in one call
STATUS = {None: "RUNNING", "finished": "FINISHED", "failed": "FAILED"}  # stopped, interrupted: KILLED
# MLflow retries an unanswered HTTP call seven times with a growing backoff (minutes in all);
# live tracking gives up at the first failure and `skilltui mlflow` says so in one line, so a
# few seconds tell as much. A person's own setting wins.
HTTP_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}


def experiment_name(config: dict[str, Any]) -> str:
    """The works' names: a trained run and its control land in the same experiment and compare there."""
    return "skilltui: " + ", ".join(config.get("works") or ["(no works)"])


def sqlite_path(uri: str) -> str | None:
    """The file of a SQLite store's URI (relative to the current folder, as MLflow takes it), else None."""
    if not uri.startswith("sqlite:///"):
        return None
    path = uri.removeprefix("sqlite:///").split("?", 1)[0]
    return path if path and path != ":memory:" else None


def check_store(uri: str) -> None:
    """Refuse at once a SQLite store that cannot be written: MLflow would retry it for two minutes.

    MLflow opens a SQLite store ten times with a doubling pause, logging four lines each
    time, before it raises SQLAlchemy's error; nothing about a path that cannot be written
    changes in between. So the file is opened here first, the way the store would be: an
    existing file must be a database that opens for writing, a new one needs a folder a
    file can be made in (probed with a folder made and removed at once: permission bits
    do not say it for root, nor for /proc). Other stores keep MLflow's own handling.
    """
    path = sqlite_path(uri)
    if path is None:
        return
    where = Path(path)
    try:
        if where.exists():
            with closing(sqlite3.connect(f"file:{pathname2url(str(where.resolve()))}?mode=rw", uri=True)) as db:
                db.execute("select count(*) from sqlite_master").fetchone()
            return
        folder = where.resolve().parent
        while not folder.exists():  # MLflow makes the missing folders: the nearest existing one must take them
            folder = folder.parent
        with tempfile.TemporaryDirectory(prefix=".skilltui-probe-", dir=folder):
            pass
    except (OSError, sqlite3.Error) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)  # not the probe's own name
        raise MlflowException(f"no SQLite store can be written at {path}: {why}") from None


def artifact_location(uri: str) -> str | None:
    """Where a new experiment keeps its artifacts: beside a SQLite store's file.

    MLflow's default for a database store is `./mlruns` of whatever folder the command ran
    in, so two commands run from two folders would scatter one store's artifacts. Other stores
    (a server, a file store, another database) keep MLflow's own default.
    """
    path = sqlite_path(uri)
    if path is None:
        return None
    return str(Path(path).resolve().parent / "mlruns")  # a plain path, as MLflow's own default is


def millis(when: Any) -> int | None:
    return int(when.timestamp() * 1000) if when is not None else None


def chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class MlflowLog:
    """The MLflow run of one skilltui run: `open(layout)` once, then `sync(layout)` whenever it grew."""

    def __init__(self, run: Run, spec: TrackingSpec) -> None:
        self.run = run
        self.spec = spec
        for name, value in HTTP_DEFAULTS.items():
            os.environ.setdefault(name, value)
        check_store(spec.uri or mlflow.get_tracking_uri())
        self.client = MlflowClient(tracking_uri=spec.uri)
        self.uri = self.client.tracking_uri
        self.run_id = ""
        self.experiment = ""
        self.logged: dict[str, set[int]] = {}
        self.params: dict[str, str] = {}
        self.epochs_logged: set[int] = set()
        self._tags: dict[str, str] = {}
        self._status = ""
        self._table: dict[str, Any] | None = None
        self._final_for = 0  # the session whose end was logged (the view's count of sessions)

    # -- finding the MLflow run -----------------------------------------------------------

    def open(self, layout: RunLayout) -> str:
        """Find this run's MLflow run (the one kept in the folder, else by its tag) or make it; its id."""
        folder = crossval_folder(self.run)
        self.experiment = self.spec.experiment or (experiment_of(folder) if folder else experiment_name(layout.config))
        found = self._kept() or self._tagged(self._experiment_id())
        if found is None:
            made = self.client.create_run(
                self._experiment_id(),
                run_name=self.run.id,
                start_time=millis(layout.started()),
                tags=layout.tags(),
            )
            self.run_id, self._status = made.info.run_id, made.info.status
        else:
            self.run_id = found
            self._read_back()
        if folder is not None:  # a crossval's fold: a child of the crossval's run
            self.client.set_tag(
                self.run_id, "mlflow.parentRunId", parent_run(self.client, self._experiment_id(), folder)
            )
        self._keep()
        return self.run_id

    def _experiment_id(self) -> str:
        experiment = self.client.get_experiment_by_name(self.experiment)
        if experiment is not None:
            return experiment.experiment_id
        try:
            return self.client.create_experiment(self.experiment, artifact_location=artifact_location(self.uri))
        except MlflowException:  # another process made it between the two calls: use theirs
            experiment = self.client.get_experiment_by_name(self.experiment)
            if experiment is None:
                raise
            return experiment.experiment_id

    def _state(self) -> dict[str, Any]:
        try:
            state = read_json(self.run.root / STATE_FILE)
        except (OSError, ValueError):
            return {"runs": {}}
        return state if isinstance(state.get("runs"), dict) else {"runs": {}}

    def _kept(self) -> str | None:
        """The MLflow run id this folder kept for this URI, if that run is still there."""
        kept = self._state()["runs"].get(self.uri, {}).get("run_id")
        if not kept:
            return None
        try:
            found = self.client.get_run(kept)
        except MlflowException:  # not in this store (deleted, or the folder was logged elsewhere)
            return None
        return kept if found.info.lifecycle_stage == "active" else None

    def _tagged(self, experiment_id: str) -> str | None:
        """The MLflow run tagged with this run's id and folder (compared here: a path may hold quotes)."""
        folder = str(self.run.root.resolve())
        found = self.client.search_runs(
            [experiment_id], filter_string=f"tags.`skilltui.run_id` = '{self.run.id}'", order_by=["start_time ASC"]
        )
        ours = [r for r in found if r.data.tags.get("skilltui.run_folder") == folder]
        return ours[0].info.run_id if ours else None

    def _keep(self) -> None:
        state = self._state()
        state["runs"][self.uri] = {"run_id": self.run_id, "experiment": self.experiment}
        write_json(self.run.root / STATE_FILE, state)

    def _read_back(self) -> None:
        """What the MLflow run already holds, so nothing is logged twice."""
        found = self.client.get_run(self.run_id)
        self._status = found.info.status
        self.params = dict(found.data.params)
        self._tags = dict(found.data.tags)
        for key in found.data.metrics:
            self.logged[key] = {m.step for m in self.client.get_metric_history(self.run_id, key)}
        for item in self.client.list_artifacts(self.run_id, "pool"):
            name = Path(item.path).name
            if name.startswith("epoch") and name[5:].isdigit():
                self.epochs_logged.add(int(name[5:]))

    # -- bringing it up to date -------------------------------------------------------------

    def sync(self, layout: RunLayout) -> int:
        """Log what the layout has and the MLflow run lacks; returns how many metric points it added."""
        params = [Param(k, v) for k, v in layout.params().items() if k not in self.params]
        tags = {k: v for k, v in layout.tags().items() if self._tags.get(k) != v}
        for batch in chunks(params, 100):
            self.client.log_batch(self.run_id, params=batch)
            self.params.update({p.key: p.value for p in batch})
        for batch in chunks([RunTag(k, v) for k, v in tags.items()], 100):
            self.client.log_batch(self.run_id, tags=batch)
        self._tags.update(tags)
        added = self._metrics(layout)
        table = layout.decision_table()
        if table["data"] and table != self._table:
            self.client.log_dict(self.run_id, table, "decisions.json")
            self._table = table
        for epoch, head in sorted(layout.epoch_heads.items()):
            if epoch not in self.epochs_logged:
                self._log_pool(layout, head, f"pool/epoch{epoch}")
                self.epochs_logged.add(epoch)
        if layout.ended is not None and self._final_for != layout.view.sessions:
            self._log_end(layout)
            self._final_for = layout.view.sessions
        self._set_status(layout)
        return added

    def _metrics(self, layout: RunLayout) -> int:
        new: list[Metric] = []
        for key, points in layout.metrics().items():
            seen = self.logged.setdefault(key, set())
            for step, (value, when) in sorted(points.items()):
                if step not in seen:
                    new.append(Metric(key, value, millis(when) or 0, step))
        for batch in chunks(new, BATCH):
            self.client.log_batch(self.run_id, metrics=batch)
            for metric in batch:
                self.logged[metric.key].add(metric.step)
        return len(new)

    def _log_pool(self, layout: RunLayout, head: str | None, where: str) -> None:
        """The pool at `head` as `skilltui export` writes it; an empty pool has nothing to export."""
        if layout.pool_size(head)[0] == 0:
            return
        with tempfile.TemporaryDirectory(prefix="skilltui-mlflow-") as tmp:
            done = export_skill(self.run, Path(tmp) / self.run.id, commit=layout.commit(head))
            self.client.log_artifacts(self.run_id, str(done.folder), artifact_path=where)

    def _log_end(self, layout: RunLayout) -> None:
        self._log_pool(layout, layout.head, "pool/final")
        with tempfile.TemporaryDirectory(prefix="skilltui-mlflow-") as tmp:
            page = Path(tmp) / "report.html"
            write_report(self.run, page)
            self.client.log_artifact(self.run_id, str(page))
        self.client.log_artifact(self.run_id, str(self.run.events_path))

    def _set_status(self, layout: RunLayout) -> None:
        status = STATUS.get(layout.ended, "KILLED")
        if status == self._status:
            return
        if status == "RUNNING":
            self.client.update_run(self.run_id, status="RUNNING")
        else:
            self.client.set_terminated(self.run_id, status, end_time=millis(layout.view.ended))
        self._status = status


def log_finished(run: Run, spec: TrackingSpec) -> tuple[MlflowLog, int]:
    """Log a run from its folder (`skilltui mlflow RUN`); the log and how many metric points were new."""
    layout = RunLayout(run)
    for event in read_run(run.events_path).events:
        layout.apply(event)
    if layout.ended is None and layout.view.sessions:
        # Nobody trains it (the command checked the lock) and its record has no end: it was
        # killed. Logged as it stands, it must not show as running until it resumes.
        layout.ended = "interrupted"
    try:
        log = MlflowLog(run, spec)
        log.open(layout)
        return log, log.sync(layout)
    except (MlflowException, SQLAlchemyError) as exc:  # a URI no store answers to, a server down or refusing
        where = spec.uri or "MLflow's default tracking URI"
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise UsageError(
            f"MLflow at {where} did not take run {run.id} ({why}); check --uri and that the tracker is up, "
            "then run the same command again"
        ) from None
