"""A tracking store that cannot be written costs one line, at once: never a minute of retries.

MLflow retries a SQLite store it cannot open ten times over about two minutes, logging four
lines a try, and raises an error of SQLAlchemy's that read as a bug. `skilltui mlflow` (whose
whole job is the logging) refuses such a store in one line with exit 2; `train --mlflow`
warns in one line and trains on. Each runs in a subprocess, so the lines counted are the
ones a person sees.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.support.faults import run_plain
from tests.support.recorded import recorded

os.environ.update({"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "1"})
pytest.importorskip("mlflow", reason="the mlflow extra is not installed (pip install -e '.[mlflow]')")

UNWRITABLE = "sqlite:////proc/skilltui-no-store.db"  # /proc takes no new file, not even as root
IN_NO_FOLDER = "sqlite:////proc/skilltui-no-store/mlflow.db"  # nor a new folder


def train(runs: Path, work: Path, *extra: str) -> list[str]:
    args = ["train", "--auto", "--runs-dir", str(runs), "--run-id", "r", "--steps", "1", "--episodes-per-step", "1"]
    return [*args, "--no-consolidate", "--work", str(work), *extra]


def not_a_database(tmp_path: Path) -> str:
    path = tmp_path / "notes.db"
    path.write_text("a text file where the store should be\n", encoding="utf-8")
    return f"sqlite:///{path}"


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("kind", ["unwritable", "in no folder", "not a database"])
def test_skilltui_mlflow_refuses_a_store_it_cannot_write_in_one_line_at_once(make_work, tmp_path, kind) -> None:
    runs = tmp_path / "runs"
    assert run_plain(train(runs, make_work("kiln-yard", 2))).returncode == 0
    uri = {"unwritable": UNWRITABLE, "in no folder": IN_NO_FOLDER}.get(kind) or not_a_database(tmp_path)
    started = time.monotonic()
    done = run_plain(["mlflow", "r", "--runs-dir", str(runs), "--uri", uri], timeout=120)
    took = time.monotonic() - started
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "a bug" not in lines[0] and uri in lines[0], lines
    # MLflow's own retries take about two minutes; a minute tells "at once" from them on a loaded machine.
    assert took < 60, f"{took:.0f} s"
    assert not (runs / "r" / "mlflow.json").exists()


@pytest.mark.slow
@pytest.mark.subprocess
def test_train_with_an_unwritable_store_warns_in_one_line_and_trains(make_work, tmp_path) -> None:
    runs, work = tmp_path / "runs", make_work("kiln-yard", 2)
    plain = run_plain(train(tmp_path / "plain", work))
    done = run_plain(train(runs, work, "--mlflow", UNWRITABLE), timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "MLflow tracking stopped" in lines[0] and UNWRITABLE in lines[0], lines
    assert recorded(runs / "r" / "events.jsonl")[-1]["status"] == "finished"
    assert len(done.stdout.splitlines()) == len(plain.stdout.splitlines())  # the summary as without tracking
