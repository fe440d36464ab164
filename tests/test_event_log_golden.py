"""The same run writes the same record: a gated run's event log and report page against a golden copy.

A refactor of the engine, the store or the events (the engine's rooms, `At`, the one record
reader) must not change what a run records: a person's old runs are read by the new code,
and two runs of the same settings compare line by line. This run touches most of what a run
records (a validation work and the gate, two candidates, a test work, two epochs with their
consolidations), on the offline backend with one worker and fixed git dates, so it is the
same to the byte apart from what a clock or a folder decides. Those are masked here: times,
durations, the run's path, and commit ids (numbered by first appearance).

An intended change to what runs record is re-recorded with SKILLTUI_RECORD_GOLDEN=1 and
reviewed as a diff, like a snapshot.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "data" / "golden"
EXAMPLES = Path(__file__).resolve().parent.parent / "skilltui" / "examples"
TIME = re.compile(r'"(time|started_at|finished_at)": "[^"]*"')
SECONDS = re.compile(r'"seconds": [0-9.e-]+')
SHA = re.compile(r"\b[0-9a-f]{40}\b")
MADE = re.compile(r"report made \d{4}-\d\d-\d\d \d\d:\d\d UTC")


def masked(text: str, root: Path) -> str:
    ids: dict[str, str] = {}
    text = text.replace(str(root), "/ROOT")
    text = TIME.sub(r'"\1": "T"', text)
    text = SECONDS.sub('"seconds": 0', text)
    text = MADE.sub("report made T", text)
    return SHA.sub(lambda m: ids.setdefault(m.group(0), f"C{len(ids)}"), text)


def skilltui(cwd: Path, *argv: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    done = subprocess.run(
        [sys.executable, "-m", "skilltui", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr


def compare(name: str, got: str) -> None:
    path = GOLDEN / name
    if os.environ.get("SKILLTUI_RECORD_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
    expected = path.read_text(encoding="utf-8").splitlines()
    lines = got.splitlines()
    first = next((i for i, (a, b) in enumerate(zip(expected, lines, strict=False)) if a != b), None)
    assert first is None and len(expected) == len(lines), (
        f"{name} differs from its golden copy at line {(first or min(len(expected), len(lines))) + 1}:\n"
        f"golden: {expected[first] if first is not None and first < len(expected) else '(end)'}\n"
        f"now:    {lines[first] if first is not None and first < len(lines) else '(end)'}"
    )


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_gated_run_records_the_same_event_log_and_report_as_its_golden_copy(tmp_path: Path) -> None:
    works = tmp_path / "works"
    for name in ("dead-air", "night-oven", "the-second-bid"):
        shutil.copytree(EXAMPLES / name, works / name)
    shutil.copytree(works / "the-second-bid", works / "held")
    for name in ("dead-air", "night-oven", "the-second-bid", "held"):
        skilltui(tmp_path, "diffuse", "--work", f"works/{name}")
    skilltui(
        tmp_path,
        *("train", "--work", "works/dead-air", "--work", "works/night-oven"),
        *("--val-work", "works/the-second-bid", "--test-work", "works/held", "--gate", "--candidates", "2"),
        *("--epochs", "2", "--steps", "2", "--workers", "1", "--consolidate", "--auto"),
        *("--backend", "offline", "--runs-dir", "runs", "--run-id", "g"),
    )
    skilltui(tmp_path, "report", "runs/g", "--to", "report.html")
    run = tmp_path / "runs" / "g"
    compare("gated-run.events.jsonl", masked((run / "events.jsonl").read_text(encoding="utf-8"), tmp_path))
    compare("gated-run.report.html", masked((tmp_path / "report.html").read_text(encoding="utf-8"), tmp_path))
