"""A run made before the format version existed resumes, finishes and reports with today's code.

`tests/data/runs/made-by-03e4c28.tar.gz` is a run made by main at commit 03e4c28 (before
`format.json`): `train --auto --steps 2 --group-size 1 --episodes-per-step 1 --gate` on two
works with one validation work, SIGKILLed once its third backward attempt had passed its
checks (step 1, group 0: a micro-step awaiting its gate and review). The tarball holds the
works beside the run, so the stories the run copied still match theirs.

The run folder is moved here as a person moves one between machines: its settings name
the works by absolute path, so they are pointed at where the works now are.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.store.run import Run

FIXTURE = Path(__file__).parent / "data" / "runs" / "made-by-03e4c28.tar.gz"


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    """The fixture run unpacked under tmp_path/runs/old, its work paths pointing at tmp_path/works."""
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(tmp_path, filter="data")
    run = tmp_path / "runs" / "old"
    config = json.loads((run / "config.json").read_text(encoding="utf-8"))
    for key in ("work_paths", "val_work_paths"):
        config[key] = {name: str(tmp_path / "works" / name) for name in config[key]}
    (run / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return run


def resume_argv(tmp_path: Path) -> list[str]:
    """The command that made the fixture, on its new paths."""
    works = tmp_path / "works"
    return [
        *("train", "--auto", "--runs-dir", str(tmp_path / "runs"), "--run-id", "old"),
        *("--steps", "2", "--group-size", "1", "--episodes-per-step", "1", "--gate"),
        *("--work", str(works / "sable-quay"), "--work", str(works / "tin-orchard")),
        *("--val-work", str(works / "held-lane")),
    ]


def kinds(run: Path) -> list[str]:
    return [json.loads(line)["kind"] for line in (run / "events.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_run_made_before_format_versions_resumes_to_its_end_and_reports(
    old_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = kinds(old_run)
    assert "run_finished" not in before and before.count("micro_step") == 3

    assert main(resume_argv(tmp_path)) == 0

    after = kinds(old_run)
    assert after[: len(before)] == before  # the old record stands; the session appends to it
    assert after[-1] == "run_finished"
    # Two steps of two groups and the epoch's consolidation; the killed attempt is not paid again.
    assert after.count("micro_step") == 5
    assert Run(old_run).pool.state()[1]  # the pool's tree is clean at the end
    page = tmp_path / "old.html"
    assert main(["report", str(old_run), "--to", str(page)]) == 0
    assert "sable-quay" in page.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["runs", "--runs-dir", str(tmp_path / "runs")]) == 0
    listed = capsys.readouterr().out
    assert "old" in listed and "finished" in listed
