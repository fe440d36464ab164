"""`skilltui demo` twice: the second is a fresh run, and the line it prints resumes the first."""

from __future__ import annotations

import shlex

from recorded import recorded

from skilltui.cli import main


def test_a_second_demo_starts_fresh_and_says_how_to_resume_the_first(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    assert main(["demo", "--auto", "--runs-dir", str(runs)]) == 0
    first = recorded(runs / "demo" / "events.jsonl")
    capsys.readouterr()
    assert main(["demo", "--auto", "--runs-dir", str(runs)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"demo: an earlier demo is in {runs / 'demo'}; this one is {runs / 'demo-2'}" in err
    # The earlier demo was left exactly as it was; the new one trained from an empty pool.
    assert recorded(runs / "demo" / "events.jsonl") == first
    started = [e for e in recorded(runs / "demo-2" / "events.jsonl") if e["kind"] == "run_started"]
    assert [e["resumed"] for e in started] == [False]
    # The command it prints is `train`'s, and resumes the earlier demo.
    line = next(line for line in err if "to resume the earlier one:" in line)
    command = line.split("to resume the earlier one: ", 1)[1].split("  (or browse")[0]
    argv = shlex.split(command)
    assert argv[:2] == ["skilltui", "train"]
    capsys.readouterr()
    assert main([*argv[1:], "--auto"]) == 0  # accepted: the same settings as the earlier demo's
    said = capsys.readouterr()
    assert str(runs / "demo") in said.out + said.err and not (runs / "demo-3").exists()
    assert "other settings" not in said.err
