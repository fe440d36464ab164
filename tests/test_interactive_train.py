"""An interactive `skilltui train` never trains without its reviewer.

On a terminal without --auto a person means to review every update. If the app cannot start
(its import fails, or it fails as it is made) the command must stop with one line and exit 2
and say how to train unattended; training on with the automatic reviewer would approve every
update behind the person's back.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skilltui.cli import main
from tests.support.recorded import recorded


def as_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """stdin and stdout look like a terminal, as when a person types the command. Called in the
    test itself: the streams are capsys's then, so the test still reads what the command wrote."""
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)


def interactive_train(runs: Path, work: Path) -> int:
    return main(["train", "--runs-dir", str(runs), "--run-id", "r", "--work", str(work), "--steps", "1"])


def decisions(runs: Path) -> list[dict]:
    path = runs / "r" / "events.jsonl"
    return [e for e in recorded(path) if e["kind"] == "decision"] if path.exists() else []


def check_refused(code: int, err: str, runs: Path) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("skilltui: error: the training app cannot start") and "--auto" in lines[0]
    assert "Traceback" not in err
    assert decisions(runs) == []


def test_train_stops_when_the_app_cannot_be_imported(tmp_path, make_work, monkeypatch, capsys):
    import skilltui.apps.train

    monkeypatch.delattr(skilltui.apps.train, "app", raising=False)  # else `from ..tui import app` finds it there
    monkeypatch.setitem(sys.modules, "skilltui.apps.train.app", None)  # `import` of it now raises ImportError
    as_terminal(monkeypatch)
    code = interactive_train(tmp_path / "runs", make_work("kestrel", 4))
    check_refused(code, capsys.readouterr().err, tmp_path / "runs")
    assert not (tmp_path / "runs" / "r").exists()  # refused before the run was opened


def test_train_stops_when_the_app_fails_to_start(tmp_path, make_work, monkeypatch, capsys):
    from skilltui.apps.train import app

    def broken(self, *args, **kwargs):
        raise RuntimeError("no colours\nsecond line")

    monkeypatch.setattr(app.TrainingApp, "__init__", broken)
    as_terminal(monkeypatch)
    code = interactive_train(tmp_path / "runs", make_work("kestrel", 4))
    check_refused(code, capsys.readouterr().err, tmp_path / "runs")


def test_without_a_terminal_train_refuses_instead_of_approving(tmp_path, make_work, capsys):
    """Piped (pytest's captured streams are no terminal) and without --auto, nobody can review:
    one line naming --auto, and no run (tests/test_no_silent_approve.py runs it as a process)."""
    code = interactive_train(tmp_path / "runs", make_work("kestrel", 4))
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--auto" in err
    assert not (tmp_path / "runs").exists()
