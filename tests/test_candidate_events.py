"""Every event of a candidate says which candidate it is, and reading a record warns on stderr only.

Parallel candidates (`--candidates K`) use the same tools on the same notes at the same
moment; without the attempt on each event their lines are identical and the reader drops
all but one as duplicates. What the reader does leave out is said by the command, on
stderr, and never printed into the report's page.
"""

from __future__ import annotations

import json

import pytest

from skilltui.cli import main
from skilltui.model.parse import read_run
from tests.support.works import train_works


@pytest.mark.slow
def test_parallel_candidates_tool_events_each_name_their_attempt_and_none_is_dropped(tmp_path, make_work, capsys):
    runs = tmp_path / "runs"
    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    assert train_works(runs, works, "--candidates", "3", "--no-consolidate") == 0
    lines = [json.loads(line) for line in (runs / "r" / "events.jsonl").read_text().splitlines() if line.strip()]
    tools = [e for e in lines if e["kind"] == "tool" and e.get("role") == "backward"]
    assert tools, "the backward agents used no tool"
    assert all(isinstance(e.get("attempt"), int) for e in tools)
    assert len({e["attempt"] for e in tools}) == 3  # three candidates, each on record
    calls = [e for e in lines if e["kind"] == "call" and e["role"] == "backward"]
    assert {e.get("attempt") for e in calls} == {e["attempt"] for e in tools}
    record = read_run(runs / "r" / "events.jsonl")
    assert record.duplicates == 0 and record.warning() is None


def test_a_reader_warning_goes_to_stderr_not_onto_the_report_page(tmp_path, make_work, capsys):
    runs = tmp_path / "runs"
    assert train_works(runs, [make_work("kestrel", 4)]) == 0
    events = runs / "r" / "events.jsonl"
    last = events.read_text().splitlines()[-1]
    with events.open("a") as f:
        f.write(last + "\n")  # a line written twice, as a replayed write would leave it
    capsys.readouterr()
    page = tmp_path / "report.html"
    assert main(["report", "r", "--runs-dir", str(runs), "--to", str(page)]) == 0
    err = capsys.readouterr().err
    assert "dropped 1 exact duplicate line" in err
    assert "duplicate" not in page.read_text()
