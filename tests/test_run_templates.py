"""A run copied from the session's template (`copied_run`, `done`) is the run training there would make.

The tests that read a trained run get a copy of one trained once a session instead of
training their own; what they prove holds only if the copy names its own folder and works,
holds the same pool and records, and opens like the run it stands for.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from skilltui.cli import main
from skilltui.store.run_folder import Run
from tests.support.recorded import recorded
from tests.support.runs import train_in

NAMES = ("amber-quay", "salt-lamp")


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".git" not in p.relative_to(root).parts)


def test_a_copied_run_names_its_own_folder_and_holds_what_a_fresh_training_holds(copied_run, run_templates, tmp_path):
    run = copied_run(*NAMES)
    template = run_templates(f"trained {NAMES}", lambda root: train_in(root, NAMES))
    assert run.root == tmp_path / "runs" / "r" and template != tmp_path
    for path in run.root.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(run.root).parts:
            assert str(template) not in path.read_text(encoding="utf-8", errors="replace"), path
    config = json.loads((run.root / "config.json").read_text(encoding="utf-8"))
    assert config["work_paths"] == {name: str(tmp_path / "works" / name) for name in NAMES}
    fresh = train_in(tmp_path / "fresh", NAMES)
    assert files(run.root) == files(fresh.root)
    assert files(tmp_path / "works") == files(tmp_path / "fresh" / "works")
    assert run.pool.git("rev-parse", "HEAD^{tree}") == fresh.pool.git("rev-parse", "HEAD^{tree}")
    assert len(run.pool.git("log", "--format=%H").split()) == len(fresh.pool.git("log", "--format=%H").split())
    # The works train side by side, so their events interleave in no fixed order: the same events, counted.
    kinds = Counter(e["kind"] for e in recorded(run.events_path))
    assert kinds == Counter(e["kind"] for e in recorded(fresh.events_path))
    assert all(str(tmp_path / "fresh") not in line for line in run.events_path.read_text(encoding="utf-8").splitlines())


def test_each_copy_is_its_own_so_one_test_changing_it_leaves_the_next_the_template(copied_run, run_templates, capsys):
    run = copied_run("amber-quay")
    (run.pool.root / "scratch.md").write_text("a hand's note\n", encoding="utf-8")
    run.events_path.write_text("", encoding="utf-8")
    template = run_templates("trained ('amber-quay',)", lambda root: train_in(root, ("amber-quay",)))
    assert not (template / "runs" / "r" / "memory" / "scratch.md").exists()
    assert recorded(template / "runs" / "r" / "events.jsonl")


def test_the_done_run_resumes_to_a_finished_run_from_its_copy(done: Run, works, tmp_path, capsys):
    assert not [e for e in recorded(done.events_path) if e["kind"] == "run_finished"]
    argv = ["train", "--auto", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r", "--steps", "2"]
    argv += ["--group-size", "1", "--no-consolidate"]
    for work in works:
        argv += ["--work", str(work)]
    assert main(argv) == 0
    [end] = [e for e in recorded(done.events_path) if e["kind"] == "run_finished"]
    assert end["status"] == "finished"
