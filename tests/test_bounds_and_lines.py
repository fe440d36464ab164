"""Bounds on what a user gives, and records no separator can cut: round three's smaller holes.

- `--candidates` is bounded (16), with a line saying why; an over-budget `--init-pool` is
  refused before the first call;
- an event holding U+2028, U+2029 or U+0085 is written escaped, and read whole even when
  an older writer left it raw;
- a candidate's working copy (a git worktree, whose `.git` is a file) keeps its stray
  edits like the pool does; a worktree entry a kill left locked is cleared.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.engine.update.candidates import close_copy, open_copy
from skilltui.model import events as ev
from skilltui.model.bus import JsonlSink
from skilltui.model.parse import read_run
from skilltui.pool.notes import Pool

ODD = "kiln\u2028yard\x85salt\u2029road"


def train(tmp_path: Path, work: Path, *extra: str) -> int:
    argv = ["train", "--auto", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r", "--steps", "1"]
    return main([*argv, "--work", str(work), *extra])


@pytest.mark.parametrize("k", ["17", "1000", "1e22", "0"])
def test_candidates_are_bounded_with_a_line_saying_why(make_work, tmp_path, capsys, k) -> None:
    assert train(tmp_path, make_work("kiln-yard", 2), "--candidates", k) == 2
    err = capsys.readouterr().err
    assert "from 1 to 16" in err and "reviewer" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs" / "r").exists()


def test_line_separators_in_an_event_neither_tear_it_nor_drop_the_next(tmp_path) -> None:
    path = tmp_path / "events.jsonl"
    sink = JsonlSink(path)
    sink(ev.Warning_(message=ODD))
    sink(ev.Warning_(message="after"))
    sink.close()
    raw = path.read_text(encoding="utf-8")
    assert not any(c in raw for c in "\u2028\u2029\x85")
    assert [e.message for e in read_run(path).events] == [ODD, "after"]
    # An older writer left them raw: the reader still splits on newlines alone.
    path.write_text(raw.replace("\\u2028", "\u2028").replace("\\u0085", "\x85"), encoding="utf-8")
    assert "\u2028" in path.read_text(encoding="utf-8")
    record = read_run(path)
    assert [e.message for e in record.events] == [ODD, "after"] and record.unreadable == 0


def test_a_working_copy_keeps_its_stray_edits_and_a_locked_entry_is_cleared(tmp_path) -> None:
    pool = Pool(tmp_path / "memory")
    pool.init()
    folder = tmp_path / "attempt1" / "pool"
    copy = open_copy(pool, folder, pool.head())
    (folder / "dialogue").mkdir(exist_ok=True)
    (folder / "dialogue" / "stray.md").write_text("left by a refused candidate\n")
    ref, paths = copy.keep_worktree("kept/copy", "kept")  # `.git` is a file here
    assert paths == ["dialogue/stray.md"] and pool.git("show", f"{ref}:dialogue/stray.md")
    copy.close()
    # What a kill inside `git worktree add` leaves: git's entry for the copy, locked.
    admin = next((pool.root / ".git" / "worktrees").iterdir())
    (admin / "locked").write_text("initializing")
    close_copy(pool, folder)
    assert pool.git("worktree", "list", "--porcelain").count("worktree ") == 1
    fsck = subprocess.run(["git", "-C", str(pool.root), "fsck"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def backward_calls(tmp_path: Path, work: Path, capsys, k: str) -> int:
    argv = ["train", "--estimate", "--runs-dir", str(tmp_path / "runs"), "--steps", "1", "--candidates", k]
    assert main([*argv, "--work", str(work)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    return next(int(row[2]) for row in rows if row and row[0] == "backward")


def test_the_estimate_counts_every_candidate(make_work, tmp_path, capsys) -> None:
    work = make_work("kiln-yard", 2)
    assert backward_calls(tmp_path, work, capsys, "3") == 3 * backward_calls(tmp_path, work, capsys, "1")


def test_val_repeats_without_the_gate_is_not_refused_for_the_gate(make_work, tmp_path, capsys) -> None:
    val = make_work("salt-road", 2)
    assert (
        train(tmp_path, make_work("kiln-yard", 2), "--no-consolidate", "--val-work", str(val), "--val-repeats", "4")
        == 0
    )
    assert "--gate-max-repeats" not in capsys.readouterr().err


def test_parallel_candidates_tool_events_are_each_kept(make_work, tmp_path) -> None:
    assert train(tmp_path, make_work("kiln-yard", 2), "--no-consolidate", "--candidates", "3") == 0
    record = read_run(tmp_path / "runs" / "r" / "events.jsonl")
    assert record.duplicates == 0, record.warning()
    tools = [e for e in record.events if isinstance(e, ev.ToolUsed) and e.role == "backward"]
    assert {e.attempt for e in tools} == {1, 2, 3}
