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
from skilltui.engine.update.attribution import episode_reads
from skilltui.engine.update.backward_attempt import Attempted
from skilltui.store import migrations
from skilltui.store.migrations import FORMAT_VERSION, format_version
from skilltui.store.run_folder import Run

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
    gates = [json.loads(line) for line in (old_run / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    gates = [g for g in gates if g["kind"] == "gate"]
    # The gate's tolerance is gone from what is written now; the old lines keep theirs (never rewritten).
    assert ["tolerance" in g for g in gates] == [True] * 2 + [False] * (len(gates) - 2)
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


def test_resuming_an_old_run_gives_it_todays_format_version(old_run: Path, tmp_path: Path) -> None:
    assert format_version(old_run) == 0  # made before versions: no format.json
    assert main(resume_argv(tmp_path)) == 0
    assert format_version(old_run) == FORMAT_VERSION
    # The version is not a setting: the run's identity (and a second resume) is untouched.
    assert "format_version" not in json.loads((old_run / "config.json").read_text(encoding="utf-8"))
    assert main(resume_argv(tmp_path)) == 0


def test_a_new_run_is_made_with_todays_format_version(copied_run) -> None:
    run = copied_run("sable-quay")
    assert json.loads((run.root / "format.json").read_text(encoding="utf-8")) == {"format_version": FORMAT_VERSION}


@pytest.mark.parametrize("command", ["train", "report", "review"])
def test_a_run_in_a_newer_format_is_refused_in_one_line(
    command: str, old_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (old_run / "format.json").write_text(json.dumps({"format_version": FORMAT_VERSION + 1}), encoding="utf-8")
    before = sorted(p.relative_to(old_run) for p in old_run.rglob("*"))
    argv = {
        "train": resume_argv(tmp_path),
        "report": ["report", str(old_run), "--to", str(tmp_path / "page.html")],
        "review": ["review", str(old_run)],
    }[command]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"format version {FORMAT_VERSION + 1}" in err and "update skilltui" in err
    assert sorted(p.relative_to(old_run) for p in old_run.rglob("*")) == before  # nothing written
    assert not (tmp_path / "page.html").exists()


def test_a_flat_reads_trace_is_migrated_and_a_killed_migration_finishes(old_run: Path, tmp_path: Path) -> None:
    trace = old_run / "epoch0" / "step0" / "works" / "sable-quay" / "reads.json"
    trace.write_text(json.dumps(["dialogue/one.md"]), encoding="utf-8")  # the shape runs wrote before episodes
    run = Run(old_run)
    # A migration killed after its step's writes, before the version was written:
    assert migrations.STEPS[0](run)
    assert format_version(old_run) == 0
    assert migrations.migrate(run) == []  # the step runs again and finds nothing left to change
    assert format_version(old_run) == FORMAT_VERSION
    assert json.loads(trace.read_text(encoding="utf-8")) == {"notes": ["dialogue/one.md"], "episodes": {}}
    assert episode_reads(json.loads(trace.read_text(encoding="utf-8")), [1, 2]) == {
        1: ["dialogue/one.md"],
        2: ["dialogue/one.md"],
    }


def test_a_reader_brings_an_old_run_up_to_date(old_run: Path, tmp_path: Path) -> None:
    trace = old_run / "epoch0" / "step0" / "works" / "tin-orchard" / "reads.json"
    trace.write_text(json.dumps(["dialogue/two.md"]), encoding="utf-8")
    assert main(["report", str(old_run), "--to", str(tmp_path / "page.html")]) == 0
    assert format_version(old_run) == FORMAT_VERSION
    assert json.loads(trace.read_text(encoding="utf-8"))["notes"] == ["dialogue/two.md"]


def test_an_attempts_record_keeps_its_shape_across_the_change(old_run: Path, tmp_path: Path) -> None:
    """run_attempt returns a typed `Attempted` now; the checked.json it writes is the one old runs hold."""
    old = json.loads((old_run / "epoch0/step0/backward/g1/attempt1/checked.json").read_text(encoding="utf-8"))
    assert main(resume_argv(tmp_path)) == 0
    new = json.loads((old_run / "epoch0/step1/backward/g2/attempt1/checked.json").read_text(encoding="utf-8"))
    assert list(new) == list(old) == ["before", "after", "subject", "message", "added", "changed", "removed", "lint"]
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in old.items() if k != "lint"}
    assert Attempted(**fields).record() == old
