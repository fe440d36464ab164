"""Runs in MLflow: `train --mlflow` live and `skilltui mlflow RUN` afterwards, read back with MLflow's own client.

Every test logs into a SQLite store in its own temporary folder (artifacts beside it), with
MLflow's telemetry off, so nothing leaves the machine. What MLflow holds is checked against
what `skilltui compare --json` prints for the same runs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.tracking import OFFLINE_ENV, use_store
from tests.support.validation import held_out_work
from tests.support.works import write_work

os.environ.update(OFFLINE_ENV)  # before MLflow is imported: it never reports usage from a test
pytest.importorskip("mlflow", reason="the mlflow extra is not installed (pip install -e '.[mlflow]')")

import mlflow  # noqa: E402
from mlflow import MlflowClient  # noqa: E402

from skilltui.cli import main  # noqa: E402
from skilltui.pool.notes import Pool  # noqa: E402
from skilltui.runs.compare import compare_runs  # noqa: E402
from skilltui.store.run_folder import Run, read_json  # noqa: E402
from tests.support.recorded import recorded as read_events  # noqa: E402

STEPS = 2


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    return use_store(monkeypatch, tmp_path)


def train_args(runs: Path, works: list[Path], run_id: str, *extra: str) -> list[str]:
    args = ["train", "--auto", "--runs-dir", str(runs), "--run-id", run_id, "--steps", str(STEPS), "--epochs", "2"]
    args.append("--no-consolidate")  # the figures per step; consolidation has its own tests
    return args + [a for w in works for a in ("--work", str(w))] + list(extra)


def experiment_runs(uri: str, experiment: str = "skilltui: kestrel, lantern"):
    return mlflow.search_runs(experiment_names=[experiment], output_format="list")


def history(run_id: str, key: str) -> list[tuple[int, float]]:
    return [(m.step, m.value) for m in MlflowClient().get_metric_history(run_id, key)]


def artifacts(run_id: str, path: str | None = None) -> set[str]:
    found = set()
    for item in MlflowClient().list_artifacts(run_id, path):
        found.add(item.path)
        if item.is_dir:
            found |= artifacts(run_id, item.path)
    return found


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A trained run logged live with --mlflow, and its --no-backward control logged afterwards (once per module)."""
    root = tmp_path_factory.mktemp("mlflow")
    with pytest.MonkeyPatch.context() as mp:
        uri = use_store(mp, root)
        runs = root / "runs"
        works = [write_work(root / "works", "kestrel"), write_work(root / "works", "lantern")]
        val = held_out_work(root / "held")
        assert main(train_args(runs, works, "trained", "--val-work", str(val), "--gate", "--mlflow", uri)) == 0
        assert main(train_args(runs, works, "control", "--val-work", str(val), "--no-backward")) == 0
        assert main(["mlflow", "control", "--runs-dir", str(runs)]) == 0  # MLFLOW_TRACKING_URI: the store
        yield runs, uri


@pytest.fixture
def two_runs(logged) -> Path:
    return logged[0]


@pytest.fixture
def shared_store(logged) -> str:
    return logged[1]


def compare_json(runs: Path, capsys) -> dict:
    assert main(["compare", "trained", "control", "--runs-dir", str(runs), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_a_run_and_its_control_are_two_mlflow_runs_holding_what_compare_prints(two_runs, shared_store, capsys):
    store = shared_store
    logged = {r.info.run_name: r for r in experiment_runs(store)}
    assert sorted(logged) == ["control", "trained"]
    data = compare_json(two_runs, capsys)
    for name, found in logged.items():
        run_id = found.info.run_id
        config = read_json(two_runs / name / "config.json")
        assert found.data.params["no_backward"] == str(config["no_backward"])
        assert found.data.params["works"] == "kestrel, lantern" and found.data.params["steps"] == str(STEPS)
        assert found.data.params["val_work_paths.orrery"] == config["val_work_paths"]["orrery"]
        assert found.data.tags["backend"] == "offline" and found.data.tags["run_folder"] == str(two_runs / name)
        assert "forward=offline" in found.data.tags["models"]
        assert found.info.status == "FINISHED"
        assert read_json(two_runs / name / "mlflow.json")["runs"][store]["run_id"] == run_id
        # The step means are compare's curves, point for point, at epoch × steps + step.
        for kind in ("train", "val"):
            curve = data["curves"][name][kind]
            assert history(run_id, f"{kind}_loss/mean") == [(e * STEPS + s, mean) for e, s, mean, _ in curve]
            assert history(run_id, f"{kind}_loss/works_in_mean") == [(e * STEPS + s, n) for e, s, _, n in curve]
        # Each work's step losses give compare's rows: train is their mean in the epoch, val the epoch's last.
        rows = [r for r in data["rows"] if not r["work"].startswith("mean")]
        assert {(r["epoch"], r["work"], r["kind"]) for r in rows} >= {(1, "kestrel", "train"), (1, "orrery", "val")}
        for row in rows:
            curve = history(run_id, f"{row['kind']}_loss/{row['work']}")
            points = [v for step, v in curve if step // STEPS == row["epoch"]]
            value = round(sum(points) / len(points), 4) if row["kind"] == "train" else points[-1]
            assert value == row["loss"][name], row
    # The control never updates its pool: no decision, a pool that never grows; the trained run kept its updates.
    trained, control = logged["trained"].info.run_id, logged["control"].info.run_id
    events = read_events(two_runs / "trained" / "events.jsonl")
    decisions = Counter(e["decision"] for e in events if e["kind"] == "decision")
    assert history(trained, "decisions/kept")[-1] == (2 * STEPS - 1, decisions["approve"]) and decisions["approve"] > 0
    assert [v for _, v in history(control, "decisions/kept")] == [0.0] * 2 * STEPS
    assert len({v for _, v in history(control, "pool/notes")}) == 1
    assert history(trained, "pool/notes")[-1][1] == len(Pool(two_runs / "trained" / "memory").note_paths()) > 0
    assert {k.split("/")[0] for k in logged["trained"].data.metrics} >= {"loss_part", "cost_usd", "tokens", "pool"}
    # Tokens so far: every call recorded before the step ended.
    last_end = max(i for i, e in enumerate(events) if e["kind"] == "step_finished")
    fields = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
    spent = sum(e[f] for e in events[:last_end] if e["kind"] == "call" for f in fields)
    assert history(trained, "tokens")[-1] == (2 * STEPS - 1, spent) and spent > 0


def test_the_artifacts_are_the_pool_per_epoch_the_report_the_record_and_every_decision(two_runs, shared_store):
    store = shared_store
    found = {r.info.run_name: r.info.run_id for r in experiment_runs(store)}
    held = artifacts(found["trained"])
    for where in ("pool/epoch0", "pool/epoch1", "pool/final"):
        assert f"{where}/SKILL.md" in held
    assert {"report.html", "events.jsonl", "decisions.json"} <= held
    local = Path(MlflowClient().get_run(found["trained"]).info.artifact_uri)
    assert (local / "events.jsonl").read_bytes() == (two_runs / "trained" / "events.jsonl").read_bytes()
    table = json.loads((local / "decisions.json").read_text())
    decided = [e for e in read_events(two_runs / "trained" / "events.jsonl") if e["kind"] == "decision"]
    rows = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
    assert [(r["epoch"], r["step"], r["group"], r["decision"], r["by"]) for r in rows] == [
        (e["epoch"], e["step"], e["group"], e["decision"], e["by"]) for e in decided
    ]
    gates = [e for e in read_events(two_runs / "trained" / "events.jsonl") if e["kind"] == "gate"]
    assert len(gates) == len(rows) > 0
    assert [(r["gate_before"], r["gate_after"], r["gate_works"], r["gate_advice"]) for r in rows] == [
        (g["before"], g["after"], g["works"], g["advice"]) for g in gates
    ]
    # The control's pool starts empty and stays so: nothing to export, but its report and record are there.
    assert {"report.html", "events.jsonl"} <= artifacts(found["control"])
    assert not any(p.startswith("pool/") for p in artifacts(found["control"]))


def test_logging_again_updates_and_never_duplicates(two_runs, shared_store, capsys):
    store = shared_store
    before = {r.info.run_name: r.info.run_id for r in experiment_runs(store)}
    assert main(["mlflow", "trained", "control", "--runs-dir", str(two_runs), "--uri", store]) == 0
    out = capsys.readouterr().out
    assert out.count("(0 new points)") == 2, out
    (two_runs / "trained" / "mlflow.json").unlink()  # found again by its tag
    assert main(["mlflow", "trained", "--runs-dir", str(two_runs)]) == 0
    after = experiment_runs(store)
    assert {r.info.run_name: r.info.run_id for r in after} == before
    for found in after:
        for key in found.data.metrics:
            steps = [step for step, _ in history(found.info.run_id, key)]
            assert len(steps) == len(set(steps)), key


@pytest.mark.slow
@pytest.mark.subprocess
def test_resuming_a_killed_run_continues_its_mlflow_run_with_no_step_twice(make_work, store, tmp_path):
    # Eight steps of calls that each take 0.6 s: the tracker (MLflow's import and its store
    # opening cost seconds) logs the first steps well before the run could end. The latency
    # is not part of a run's identity, so the resumed session runs at full speed.
    runs, steps = tmp_path / "runs", 8
    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    argv = [sys.executable, "-m", "skilltui", *train_args(runs, works, "r", "--mlflow")]
    argv[argv.index("--steps") + 1] = "4"
    argv += ["--episodes-per-step", "1"]
    env = {**os.environ, **OFFLINE_ENV, "MLFLOW_TRACKING_URI": store}
    MlflowClient().search_experiments()  # the store's tables made here, not by two processes at once
    with open(tmp_path / "first.log", "wb") as log:
        proc = subprocess.Popen([*argv, "--offline-latency", "0.6"], env=env, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 120
        while not (logged := _logged_steps(store)):  # killed once the tracker has logged a step
            assert proc.poll() is None, (tmp_path / "first.log").read_text()
            assert time.monotonic() < deadline, "no step was ever logged"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    kept = read_json(runs / "r" / "mlflow.json")["runs"][store]["run_id"]
    assert not any(e["kind"] == "run_finished" for e in read_events(runs / "r" / "events.jsonl")), "killed too late"
    assert 0 < len(logged) < steps
    assert main(["mlflow", "r", "--runs-dir", str(runs)]) == 0  # logged as killed while nobody resumes it
    assert MlflowClient().get_run(kept).info.status == "KILLED"
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = experiment_runs(store)
    assert [r.info.run_id for r in found] == [kept] and found[0].info.status == "FINISHED"
    for key in found[0].data.metrics:
        logged_steps = [step for step, _ in history(kept, key)]
        assert logged_steps == list(range(steps)), (key, logged_steps)
    # And what the two sessions logged is what compare reads from the whole record.
    curve = compare_runs([Run(runs / "r")])["curves"]["r"]["train"]
    assert history(kept, "train_loss/mean") == [(e * 4 + s, mean) for e, s, mean, _ in curve]


def _logged_steps(uri: str) -> list[int]:
    found = mlflow.search_runs(search_all_experiments=True, output_format="list")
    return [step for step, _ in history(found[0].info.run_id, "train_loss/mean")] if found else []


def _steps_started(run: Path) -> int:
    return sum(1 for e in read_events(run / "events.jsonl") if e["kind"] == "step_started")


@pytest.mark.slow
def test_an_unreachable_tracker_warns_once_and_training_finishes(make_work, store, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    runs = tmp_path / "runs"
    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    assert main(train_args(runs, works, "r", "--mlflow", f"http://127.0.0.1:{port}")) == 0
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if "MLflow tracking stopped" in line]
    assert len(warned) == 1 and f"skilltui mlflow {runs / 'r'} --uri http://127.0.0.1:{port}" in warned[0], err
    assert read_events(runs / "r" / "events.jsonl")[-1]["status"] == "finished"
    # Afterwards the same tracker is refused in one line, and a reachable one takes it all.
    assert main(["mlflow", "r", "--runs-dir", str(runs), "--uri", f"http://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "check --uri and that the tracker is up" in err[0], err
    assert main(["mlflow", "r", "--runs-dir", str(runs)]) == 0
    (found,) = experiment_runs(store)
    assert [step for step, _ in history(found.info.run_id, "train_loss/mean")] == list(range(2 * STEPS))


def test_without_the_extra_mlflow_is_refused_in_one_line(make_work, tmp_path, monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mlflow" else real(name, *a))
    runs = tmp_path / "runs"
    assert main(train_args(runs, [make_work("kestrel", 4)], "r", "--mlflow")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'skilltui[mlflow]'" in err[0], err
    assert not runs.exists()  # refused before anything was written
    assert main(["mlflow", "r", "--runs-dir", str(runs)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'skilltui[mlflow]'" in err[0], err
