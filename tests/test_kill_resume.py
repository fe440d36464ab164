"""Killed twelve times, resumed twelve times: the run ends whole, one commit per micro-step.

Two works over four steps with `--group-size 1` make eight micro-steps. The run is killed
with SIGKILL at twelve different moments (the first inside its first second, after the
pool's `git init` and before its first commit; then at events of every kind, and while
git holds the pool's index lock), and the same command is run again after each kill.
Every wait is on a condition (a file or an event appearing), never a fixed sleep.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from skilltui.pool.notes import Pool
from tests.support.recorded import recorded

STEPS = 4
MICRO_STEPS = 2 * STEPS


def command(runs: Path, works: list[Path], latency: str = "0.3") -> list[str]:
    """The run's command line; `latency` slows each call so a kill can land between two events."""
    argv = [
        sys.executable,
        "-m",
        "skilltui",
        "train",
        "--auto",
        "--runs-dir",
        str(runs),
        "--run-id",
        "r",
        "--steps",
        str(STEPS),
        "--episodes-per-step",
        "1",
        "--group-size",
        "1",
        "--offline-latency",
        latency,
    ]
    for work in works:
        argv += ["--work", str(work)]
    return argv


def start(runs: Path, works: list[Path], log: Path) -> subprocess.Popen:
    return subprocess.Popen(command(runs, works), stdout=subprocess.DEVNULL, stderr=open(log, "ab"))  # noqa: SIM115


def new_events(path: Path, offset: int) -> list[dict]:
    """Whole lines written after `offset` (a line still being written is not read)."""
    if not path.exists():
        return []
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read()
    found = []
    for line in data.split(b"\n")[:-1]:
        try:
            found.append(json.loads(line))
        except ValueError:
            pass
    return found


def kill_when(proc: subprocess.Popen, condition: Callable[[], bool], timeout: float = 60.0) -> bool:
    """SIGKILL `proc` as soon as `condition` holds; False if it ended first."""
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            return False
        assert time.monotonic() < deadline, "the kill condition never came"
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def pool_building(run: Path) -> Path | None:
    """The pool's git folder while its first commit is still missing (it is built beside memory/)."""
    try:
        entries = list(os.scandir(run))
    except FileNotFoundError:
        return None
    for entry in entries:
        if entry.name.startswith(".memory.tmp") or entry.name == "memory":
            git_dir = Path(entry.path) / ".git"
            if (git_dir / "HEAD").exists() and not (git_dir / "refs" / "heads" / "main").exists():
                return git_dir
    return None


def event(kind: str, **fields: object) -> Callable[[Path, int], bool]:
    def seen(path: Path, offset: int) -> bool:
        return any(
            e["kind"] == kind and all(e.get(k) == v for k, v in fields.items()) for e in new_events(path, offset)
        )

    seen.__name__ = f"{kind} {fields}" if fields else kind
    return seen


def index_locked(run: Path) -> Callable[[Path, int], bool]:
    def seen(path: Path, offset: int) -> bool:
        return (run / "memory" / ".git" / "index.lock").exists() and bool(new_events(path, offset))

    seen.__name__ = "git holds the index lock"
    return seen


@pytest.mark.slow
@pytest.mark.subprocess
def test_twelve_kills_and_resumes_end_with_one_commit_per_micro_step(make_work, tmp_path: Path) -> None:
    works = [make_work("kiln-yard", STEPS), make_work("salt-road", STEPS)]
    runs = tmp_path / "runs"
    run = runs / "r"
    events = run / "events.jsonl"
    log = tmp_path / "stderr.log"
    kills = []

    # 1: inside the first second, after the pool's git init and before its first commit. The
    # window is a few milliseconds wide; a try that misses it is thrown away and made again.
    for _ in range(20):
        proc = start(runs, works, log)
        kill_when(proc, lambda: pool_building(run) is not None)
        if pool_building(run) is not None:
            kills.append("first second: git init done, no commit yet")
            break
        shutil.rmtree(run, ignore_errors=True)
    assert kills, "never caught the pool between its git init and its first commit"

    plan = [
        event("stage", stage="forward", status="started"),
        event("episode_written"),
        event("tool"),
        event("call"),
        event("loss"),
        index_locked(run),
        event("stage", stage="backward", status="started"),
        event("micro_step"),
        event("decision"),
        event("pool_changed"),
        event("step_finished"),
    ]
    for condition in plan:
        offset = events.stat().st_size if events.exists() else 0
        proc = start(runs, works, log)
        assert kill_when(proc, lambda c=condition, o=offset: c(events, o)), (
            f"the run finished before the kill at {condition.__name__}; kills so far: {kills}"
        )
        kills.append(condition.__name__)
    assert len(kills) == 12

    # The last session is killed nowhere: it runs at full speed (the latency is not part of a
    # run's identity, so the run resumes as it would with it).
    final = subprocess.run(command(runs, works, latency="0"), capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr
    assert "Traceback" not in log.read_text() + final.stderr

    pool = Pool(run / "memory")
    subjects = pool.git("log", "--format=%s", "HEAD").splitlines()
    # The epoch's micro-steps, each once, after every kill and resume; its consolidation changed
    # nothing, so it is decided once and leaves no commit on the pool.
    assert len(subjects) == MICRO_STEPS + 1, subjects
    assert subjects[-1] == "pool: start empty"
    consolidation = json.loads((run / f"epoch0/step{STEPS - 1}/backward/g0/commit.txt").read_text())
    assert consolidation["decision"] == "approve" and consolidation["after"] == consolidation["before"]
    micro = [s.split(":")[0] for s in subjects[:-1]]
    expected = {f"train epoch 0 step {s} micro {g}/2" for s in range(STEPS) for g in (1, 2)}
    assert all(any(m.startswith(e) for e in expected) for m in micro)
    assert len({next(e for e in expected if m.startswith(e)) for m in micro}) == MICRO_STEPS
    records = sorted(run.glob("epoch0/step*/backward/g*/commit.txt"))
    assert len(records) == MICRO_STEPS + 1
    assert {json.loads(r.read_text())["after"] for r in records} <= set(pool.git("rev-list", "HEAD").split())
    assert pool.is_clean()
    lines = events.read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line) for line in lines)  # no torn line anywhere
    assert recorded(events)[-1] == {**recorded(events)[-1], "kind": "run_finished", "status": "finished"}
    assert not [p for p in run.rglob(".*.tmp*")]
