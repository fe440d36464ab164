"""A line in `events.jsonl` that is not an event, or an exact copy of one, costs nothing but a warning.

Hand edits, a sync tool, a bad merge of two copies of a run: the record can hold valid JSON
that is no event (`null`, `42`, `[1]`, `NaN`, `{}`, a kind missing its fields, a field of
the wrong type) and lines twice over. Every command that reads a run goes through the one
reader, which skips and counts the first and drops the second, so each says the same
numbers as it does for the clean record, plus one warning, and none crashes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.model.parse import read_run
from skilltui.model.summary import summarise
from skilltui.model.view import RunView
from skilltui.runs.records import load_history
from skilltui.store.run_folder import Run
from tests.support.runs import unfinish

NOT_EVENTS = ["null", "42", "[1]", "NaN", "{}", '{"kind":"micro_step"}', '{"kind":"call","cost_usd":"lots"}']


def train_args(tmp_path: Path) -> list[str]:
    works = [tmp_path / "works" / name for name in ("alpha", "beta")]
    args = ["train", "--auto", "--steps", "2", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r"]
    args.append("--no-consolidate")  # the steps' micro-steps alone; consolidation: test_consolidation
    return args + [a for w in works for a in ("--work", str(w))]


@pytest.fixture
def finished(copied_run, tmp_path: Path) -> tuple[Run, list[str]]:
    """Run `r`, trained offline for 2 steps on 2 works (2 kept micro-steps), and the command that made it."""
    return copied_run("alpha", "beta"), train_args(tmp_path)


def damage(run: Run, *, bad: list[str], copies: bool) -> int:
    """Put `bad` lines mid-record and (with `copies`) every decision and call line twice; returns the lines added.

    The file is replaced, not edited in place, as an editor or a sync tool does.
    """
    lines = run.events_path.read_text(encoding="utf-8").splitlines()
    damaged = [twice for line in lines for twice in ([line] * (2 if copies and _copied(line) else 1))]
    middle = len(damaged) // 2
    damaged[middle:middle] = bad
    new = run.events_path.with_name("events.new")
    new.write_text("\n".join(damaged) + "\n", encoding="utf-8")
    os.replace(new, run.events_path)
    return len(damaged) - len(lines)


def _copied(line: str) -> bool:
    try:
        return json.loads(line).get("kind") in ("decision", "call")
    except (ValueError, AttributeError):
        return False


@pytest.mark.parametrize("line", NOT_EVENTS)
def test_a_line_that_is_no_event_is_skipped_counted_and_named(finished, line):
    run, _ = finished
    clean = read_run(run.events_path).events
    damage(run, bad=[line], copies=False)
    record = read_run(run.events_path)
    assert record.events == clean
    assert (record.unreadable, record.duplicates) == (1, 0)
    assert re.fullmatch(r"events\.jsonl: skipped 1 line that is not an event \(line \d+: .+\)", record.warning())


def test_exact_copies_are_dropped_so_a_kept_micro_step_counts_once(finished):
    run, _ = finished
    clean = read_run(run.events_path).events
    added = damage(run, bad=[], copies=True)
    record = read_run(run.events_path)
    assert record.events == clean and record.duplicates == added > 2
    assert record.warning() == f"events.jsonl: dropped {added} exact duplicate lines"
    lines = summarise(RunView().fold(record.events)).lines()
    assert "notes: 2 added, 0 changed, 0 removed over 2 kept micro-steps" in lines
    # A later event of the same content is not a copy: its time differs.
    first = run.events_path.read_text(encoding="utf-8").splitlines()[0]
    later = {**json.loads(first), "time": "2099-01-01T00:00:00.000Z"}
    with open(run.events_path, "a", encoding="utf-8") as f:
        f.write(json.dumps(later) + "\n")
    assert len(read_run(run.events_path).events) == len(clean) + 1


CASES = [*NOT_EVENTS, "copies"]


def damage_by(run: Run, case: str) -> str:
    """Damage the record by one case; returns what its warning must say."""
    if case == "copies":
        return f"dropped {damage(run, bad=[], copies=True)} exact duplicate lines"
    damage(run, bad=[case], copies=False)
    return "skipped 1 line that is not an event"


@pytest.mark.parametrize("case", CASES)
def test_resuming_a_damaged_record_trains_on_says_so_once_and_counts_right(finished, case, capsys):
    run, args = finished
    unfinish(run.root.parent, run.id)  # a session that died before its end: the next resumes it
    says = damage_by(run, case)
    capsys.readouterr()
    assert main(args) == 0
    out = capsys.readouterr()
    said = [line for line in (out.out + out.err).splitlines() if "events.jsonl:" in line]
    assert len(said) == 1 and says in said[0]
    assert "over 2 kept micro-steps" in out.out and "over 4" not in out.out
    # The warning is on record, once.
    warnings = [e for e in read_run(run.events_path).events if e.kind == "warning" and says in e.message]
    assert len(warnings) == 1


@pytest.mark.parametrize("case", CASES)
def test_report_runs_compare_and_the_history_say_what_they_say_for_the_clean_record(finished, case, tmp_path, capsys):
    run, _ = finished
    runs = tmp_path / "runs"
    shutil.copytree(run.root, runs / "clean", symlinks=True)
    says = damage_by(run, case)
    clean = Run(runs / "clean")

    pages = {}
    for name in ("clean", "r"):
        capsys.readouterr()
        assert main(["report", name, "--runs-dir", str(runs), "--to", str(tmp_path / f"{name}.html")]) == 0
        err = capsys.readouterr().err
        assert (err.count("warning:"), says in err) == ((0, False) if name == "clean" else (1, True))
        page = (tmp_path / f"{name}.html").read_text(encoding="utf-8")
        pages[name] = re.sub(r"report made [^<]*", "", page.replace("clean", "r"))
    # The reader's warning goes to stderr (above), never onto the page a person shares.
    assert says not in pages["r"] and "events.jsonl:" not in pages["r"]
    assert pages["r"] == pages["clean"]

    capsys.readouterr()
    assert main(["runs", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr()
    cells = [line.split() for line in out.out.splitlines()]
    rows = {row[0]: row[1:] for row in cells if row[:1] in (["r"], ["clean"])}
    assert rows["r"] == rows["clean"] and rows["r"]
    assert out.err.count("warning: r: events.jsonl: ") == 1 and says in out.err and "clean" not in out.err

    assert main(["compare", "clean", "r", "--runs-dir", str(runs), "--json"]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["rows"] and all(row["diff"]["r"] == 0 for row in data["rows"])
    assert data["curves"]["r"] == data["curves"]["clean"]
    assert out.err.count("warning: r/events.jsonl: ") == 1 and says in out.err

    def seen(history):
        return [(c.subject, c.decision, c.loss_before, c.loss_after, c.parts_before) for c in history.commits]

    damaged = load_history(run)
    assert seen(damaged) == seen(load_history(clean))
    assert (damaged.status.approved, damaged.status.steps_done) == (2, 2)
    assert says in damaged.status.skipped


async def test_review_opens_a_damaged_record_and_says_once_what_it_left_out(finished):
    from skilltui.apps.history.app import HistoryApp
    from tests.support.history import SIZE, screen_of, settle

    run, _ = finished
    says = damage_by(run, "copies")
    damage(run, bad=NOT_EVENTS, copies=False)
    app = HistoryApp(run, poll=None)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        told = [n.message for n in app._notifications if "events.jsonl:" in n.message]
        assert len(told) == 1 and "skipped 7 lines" in told[0] and says in told[0]
        micro = [c for c in screen_of(app).history.commits if c.micro is not None]
        assert [c.decision for c in micro] == ["approved by auto", "approved by auto"]
