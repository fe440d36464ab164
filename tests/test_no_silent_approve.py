"""Never a silent approve: `train` and `demo` without a terminal and without `--auto` refuse,
and `crossval`, which has no review screen, refuses without `--auto` even in a terminal.

Piped (`| tee log`) or fed from /dev/null the app cannot open; training on with the automatic
reviewer would approve every update with nobody having asked for it, so the command stops with
one line naming `--auto`, exit 2, before it writes anything. Each case gives the command a real
terminal (a pty) on the other stream, so the test shows that one non-terminal stream is enough.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess


def run_without_terminal(argv: list[str], cwd: Path, *, piped: str) -> subprocess.CompletedProcess:
    """Run skilltui with `piped` ("stdout" or "stdin") not a terminal and the other one a pty."""
    leader, follower = os.openpty()
    try:
        if piped == "stdout":
            streams = {"stdin": follower, "stdout": subprocess.PIPE}
        elif piped == "neither":  # a terminal on both: what a person typing the command has
            streams = {"stdin": follower, "stdout": follower}
        else:
            streams = {"stdin": subprocess.DEVNULL, "stdout": follower}
        return subprocess.run(
            [sys.executable, "-m", "skilltui", *argv],
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "TERM": "xterm"},
            timeout=120,
            **streams,
        )
    finally:
        os.close(leader)
        os.close(follower)


def assert_refused(result: subprocess.CompletedProcess, command: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith(f"skilltui: error: `skilltui {command}` without a terminal") and "--auto" in lines[0]


@pytest.mark.parametrize("piped", ["stdout", "stdin"])
def test_train_without_a_terminal_refuses_and_writes_nothing(tmp_path, make_work, piped):
    work = make_work("kestrel", 2)
    runs = tmp_path / "runs"
    result = run_without_terminal(["train", "--work", str(work), "--runs-dir", str(runs)], tmp_path, piped=piped)
    assert_refused(result, "train")
    assert not runs.exists()  # no run folder, no lock, no events


@pytest.mark.parametrize("piped", ["stdout", "stdin"])
def test_demo_without_a_terminal_refuses_and_writes_nothing(tmp_path, piped):
    runs = tmp_path / "runs"
    result = run_without_terminal(["demo", "--runs-dir", str(runs)], tmp_path, piped=piped)
    assert_refused(result, "demo")
    assert not runs.exists()  # not even the copied example works


def test_train_with_auto_still_trains_when_piped(tmp_path, make_work):
    work = make_work("kestrel", 2)
    runs = tmp_path / "runs"
    argv = ["train", "--auto", "--work", str(work), "--runs-dir", str(runs), "--run-id", "r", "--steps", "1"]
    result = run_without_terminal(argv, tmp_path, piped="stdout")
    assert result.returncode == 0, result.stderr
    assert (runs / "r" / "events.jsonl").exists()


def test_estimate_needs_no_terminal(tmp_path, make_work):
    """--estimate trains nothing, so it prints its forecast piped too."""
    work = make_work("kestrel", 2)
    argv = ["train", "--estimate", "--work", str(work), "--runs-dir", str(tmp_path / "runs")]
    result = run_without_terminal(argv, tmp_path, piped="stdout")
    assert result.returncode == 0, result.stderr
    assert "forward" in result.stdout and not (tmp_path / "runs").exists()


@pytest.mark.parametrize("piped", ["neither", "stdin"])
def test_crossval_without_auto_refuses_even_in_a_terminal_and_writes_nothing(tmp_path, make_work, piped):
    """Its folds train with no review screen, so without --auto it would approve every update unasked."""
    works = [a for name in ("kestrel", "harbour") for a in ("--work", str(make_work(name, 2)))]
    runs = tmp_path / "runs"
    argv = ["crossval", "--folds", "2", *works, "--runs-dir", str(runs), "--steps", "1"]
    result = run_without_terminal(argv, tmp_path, piped=piped)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith("skilltui: error: `skilltui crossval` trains its folds with no review")
    assert "--auto" in lines[0]
    assert not runs.exists()  # no crossval folder, no folds.json, no fold


def test_crossval_estimate_needs_no_auto(tmp_path, make_work):
    works = [a for name in ("kestrel", "harbour") for a in ("--work", str(make_work(name, 2)))]
    argv = ["crossval", "--estimate", "--folds", "2", *works, "--runs-dir", str(tmp_path / "runs")]
    result = run_without_terminal(argv, tmp_path, piped="stdout")
    assert result.returncode == 0, result.stderr
    assert "crossval: 2 folds" in result.stdout and not (tmp_path / "runs").exists()
