"""`skilltui demo` twice: the second is a fresh run, and the line it prints resumes the first."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time

import pytest

from skilltui.cli import main
from skilltui.commands.demo import train_command
from tests.support.recorded import recorded


@pytest.mark.slow
def test_a_second_demo_starts_fresh_and_does_not_offer_a_finished_one_for_resume(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    assert main(["demo", "--auto", "--runs-dir", str(runs)]) == 0
    first = recorded(runs / "demo" / "events.jsonl")
    capsys.readouterr()
    assert main(["demo", "--auto", "--runs-dir", str(runs)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"demo: an earlier demo is in {runs / 'demo'}; this one is {runs / 'demo-2'}" in err
    # The earlier demo finished: there is nothing to resume, only to browse.
    assert f"demo: the earlier one finished; browse it: skilltui review {runs / 'demo'}" in err
    assert not any("to resume" in line for line in err)
    # The earlier demo was left exactly as it was; the new one trained from an empty pool.
    assert recorded(runs / "demo" / "events.jsonl") == first
    started = [e for e in recorded(runs / "demo-2" / "events.jsonl") if e["kind"] == "run_started"]
    assert [e["resumed"] for e in started] == [False]
    # The train command a demo names as its resume is `train`'s, with the demo's own settings.
    works = sorted((runs / "demo-works").iterdir())
    argv = shlex.split(train_command(runs, works, "demo"))
    assert argv[:2] == ["skilltui", "train"]
    capsys.readouterr()
    assert main([*argv[1:], "--auto"]) == 0  # accepted: the same settings as the earlier demo's
    said = capsys.readouterr()
    assert str(runs / "demo") in said.out + said.err and not (runs / "demo-3").exists()
    assert "other settings" not in said.err


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_stopped_demo_says_the_train_command_that_resumes_it_not_demo_again(tmp_path):
    """`skilltui demo` again starts a fresh demo, so "run the same command" would start over."""
    runs = tmp_path / "runs"
    events = runs / "demo" / "events.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "skilltui", "demo", "--auto", "--runs-dir", str(runs), "--offline-latency", "0.3"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while '"stage"' not in (events.read_text() if events.exists() else ""):
        assert time.monotonic() < deadline, "the demo never started a stage"
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    last = err.strip().splitlines()[-1]
    assert last.startswith("skilltui: run stopped by SIGTERM; resume it with: skilltui train "), last
    assert "same command" not in err
    command = last.split("resume it with: ", 1)[1]
    assert main([*shlex.split(command)[1:], "--auto"]) == 0
    started = [e for e in recorded(events) if e["kind"] == "run_started"]
    assert [e["resumed"] for e in started] == [False, True]
    assert not (runs / "demo-2").exists()
