"""SIGINT, SIGTERM and SIGHUP: one line, the right exit code, no traceback, and the run resumes.

These run `skilltui` as a separate process, because signals are what they test, and wait
for conditions (a line on stdout, an event in events.jsonl), never for a fixed time.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.recorded import recorded

pytestmark = pytest.mark.subprocess

STARTER = (
    "import sys; sys.argv = ['skilltui', *sys.argv[1:]]; print('up', flush=True); "
    "from skilltui.cli import main; raise SystemExit(main())"
)


def wait_for(condition, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def train_argv(runs: Path, works: list[Path]) -> list[str]:
    argv = [
        "train",
        "--auto",
        "--runs-dir",
        str(runs),
        "--run-id",
        "r",
        "--steps",
        "2",
        "--group-size",
        "1",
        "--offline-latency",
        "0.3",
        "--no-consolidate",  # the steps' micro-steps alone; consolidation: test_consolidation
    ]
    for work in works:
        argv += ["--work", str(work)]
    return argv


def started_stages(events_path: Path) -> int:
    if not events_path.exists():
        return 0
    return sum(1 for line in events_path.read_text().splitlines() if '"stage"' in line and '"started"' in line)


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_a_signal_stops_training_at_a_safe_point_and_the_run_resumes(make_work, tmp_path: Path, signum, code):
    works = [make_work("harrow", 4), make_work("ferry", 4)]
    runs = tmp_path / "runs"
    events = runs / "r" / "events.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "skilltui", *train_argv(runs, works)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: started_stages(events) >= 1, what="the first stage")
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    name = signal.Signals(signum).name
    assert lines == [f"skilltui: run stopped by {name}; run the same command to resume"]
    last = recorded(events)[-1]
    assert last["kind"] == "run_finished" and last["status"] == "stopped" and name in last["reason"]
    runs_out = subprocess.run(
        [sys.executable, "-m", "skilltui", "runs", "--runs-dir", str(runs)], capture_output=True, text=True, check=True
    ).stdout
    assert f"stopped: stopped by {name}" in " ".join(runs_out.split())
    again = subprocess.run(
        [sys.executable, "-m", "skilltui", *train_argv(runs, works)], cwd=tmp_path, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr
    assert recorded(events)[-1]["status"] == "finished"
    assert len(list((runs / "r").glob("epoch0/step*/backward/g*/commit.txt"))) == 4


def test_sigint_while_the_modules_still_load_ends_in_one_line(make_work, tmp_path: Path):
    """From the moment our package's first line has run, a Ctrl-C never shows a traceback.

    `-X importtime` reports each module as its import ends; the signal is sent at spread
    delays after the package itself is imported, while `skilltui.cli` and what it needs
    are still loading (before it, the interpreter's own start-up is not ours to change).
    """
    works = [make_work("loading", 2)]
    seen = []
    for delay in (0.0, 0.005, 0.01, 0.02, 0.04, 0.07, 0.1, 0.15):
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "skilltui", *train_argv(tmp_path / "runs", works)],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        while not proc.stderr.readline().rstrip().endswith("| skilltui"):
            pass
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        err = "\n".join(line for line in err.splitlines() if not line.startswith("import time:"))
        assert "Traceback" not in err, err
        assert proc.returncode in (130, 0), err
        if proc.returncode == 130:
            assert [line for line in err.splitlines() if line.strip()][-1].startswith("skilltui: stopped by SIGINT")
        seen.append(proc.returncode)
    assert 130 in seen


@pytest.mark.slow
def test_sigterm_while_opening_a_run_leaves_it_resumable(make_work, tmp_path: Path):
    works = [make_work("opening", 4)]
    proc = subprocess.Popen(
        [sys.executable, "-c", STARTER, *train_argv(tmp_path / "runs", works)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "up\n"
    wait_for(lambda: (tmp_path / "runs" / "r").exists(), what="the run folder")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err, err
    again = subprocess.run(
        [sys.executable, "-m", "skilltui", *train_argv(tmp_path / "runs", works)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    config = json.loads((tmp_path / "runs" / "r" / "config.json").read_text())
    assert config["steps"] == 2


@pytest.mark.slow
@pytest.mark.parametrize("when", ["while the app starts", "while it trains"])
def test_sigterm_stops_the_app_and_restores_the_terminal(make_work, tmp_path: Path, when: str):
    """In the terminal app too: the run is recorded as stopped, the app closes, one line, 143."""
    import os
    import pty
    import threading

    works = [make_work("quay", 4), make_work("loom", 4)]
    runs = tmp_path / "runs"
    events = runs / "r" / "events.jsonl"
    master, slave = pty.openpty()
    argv = [a for a in train_argv(runs, works) if a != "--auto"]
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skilltui", *argv],
        cwd=tmp_path,
        stdin=slave,
        stdout=slave,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(slave)

    def drain() -> None:  # the app draws on the terminal; someone must read it
        try:
            while os.read(master, 65536):
                pass
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    seen = b""
    while b"\x1b[?1049h" not in seen:  # the app has taken the screen (it draws on stderr)
        chunk = os.read(proc.stderr.fileno(), 65536)
        assert chunk, seen.decode(errors="replace")
        seen += chunk
    if when == "while it trains":
        wait_for(lambda: started_stages(events) >= 1, what="the first stage in the app")
    proc.send_signal(signal.SIGTERM)
    err = (seen + proc.stderr.read()).decode(errors="replace")
    proc.wait(timeout=60)
    os.close(master)
    assert proc.returncode == 143, err[-2000:]
    assert "Traceback" not in err
    assert err.rfind("\x1b[?1049l") > err.rfind("\x1b[?1049h")  # the screen is given back
    assert (
        err.rstrip("\n")
        .rsplit("\n", 1)[-1]
        .endswith("skilltui: run stopped by SIGTERM; run the same command to resume")
    )
    last = recorded(events)[-1]
    assert last["kind"] == "run_finished" and last["status"] == "stopped" and last["reason"] == "stopped by SIGTERM"


def test_sigterm_to_mailbox_serve_speaks_of_its_requests_not_of_a_run(tmp_path: Path):
    box = tmp_path / "box"
    box.mkdir()
    argv = [sys.executable, "-m", "skilltui", "mailbox", "serve", str(box), "--backend", "offline"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: list((box / "serving").glob("*.json")), what="the server's word that it serves")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    hint = "the requests not yet answered wait in DIR; serve them with the same command"
    assert last == f"skilltui: stopped by SIGTERM; {hint}"
    assert "a run" not in err
