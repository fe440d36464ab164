"""Killed at every named point of a gated K=3 round and its consolidation, a run ends as if never killed.

One work, one step: one micro-step of three candidates under `--gate`, then the epoch's
consolidation (three candidates too). The same run is made once unkilled, then once per
named point, killed there (SIGKILL to its process group, `faults.run_killed`) and run
again. Each must end with the same pool (HEAD's tree) and the same decisions (each
micro-step's decision and the tree it kept) as the unkilled run. The offline backend
is deterministic, so a candidate made again is the same candidate.

About 15 runs of a few seconds each: this file takes 2-4 minutes on a busy 2-core machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltui.pool.notes import Pool
from tests.support.faults import run_again, run_killed, run_plain
from tests.support.recorded import recorded

G0 = "'g0' in str(args[0].out)"  # a MicroRecords call of the consolidation
UPDATE = "skilltui.engine.update"
POINTS = [  # (function, its nth call, before or after it, which calls count)
    (f"{UPDATE}.micro_step:open_copy", 2, "after", ""),
    (f"{UPDATE}.backward_attempt:check_commit", 2, "after", ""),
    (f"{UPDATE}.backward_attempt:run_attempt", 3, "after", ""),
    ("skilltui.engine.stages.calls:Calls.call", 4, "before", ""),  # a candidate cut short inside its call
    ("skilltui.engine.validation.validator:Validator.judge", 2, "after", ""),
    (f"{UPDATE}.review:AutoReviewer.review", 1, "after", ""),
    (f"{UPDATE}.decided:record", 1, "after", ""),
    ("skilltui.store.micro_records:MicroRecords.reviewed", 2, "before", ""),
    ("skilltui.store.micro_records:MicroRecords.finished", 1, "before", ""),
    (f"{UPDATE}.backward_attempt:run_attempt", 4, "after", ""),
    (f"{UPDATE}.backward_attempt:check_commit", 5, "after", ""),
    (f"{UPDATE}.review:AutoReviewer.review", 2, "after", ""),
    (f"{UPDATE}.decided:record", 2, "after", ""),
    ("skilltui.store.micro_records:MicroRecords.reviewed", 1, "after", G0),
    ("skilltui.store.micro_records:MicroRecords.finished", 2, "before", ""),
]


def argv(runs: Path, work: Path, val: Path) -> list[str]:
    args = ["train", "--auto", "--runs-dir", str(runs), "--run-id", "r", "--steps", "1", "--episodes-per-step", "1"]
    return args + ["--candidates", "3", "--gate", "--val-work", str(val), "--work", str(work)]


def outcome(run: Path) -> tuple[str, list[tuple[int, str, str]]]:
    """The pool's tree, and each micro-step's decision with the tree it kept."""
    pool = Pool(run / "memory")
    decided = [
        (e["group"], e["decision"], pool.git("rev-parse", f"{e['after']}^{{tree}}"))
        for e in recorded(run / "events.jsonl")
        if e["kind"] == "decision" and e["decision"] != "rerun"
    ]
    assert recorded(run / "events.jsonl")[-1]["status"] == "finished"
    assert pool.is_clean()
    return pool.git("rev-parse", "HEAD^{tree}"), decided


@pytest.fixture(scope="module")
def unkilled(tmp_path_factory) -> tuple[Path, Path, tuple]:
    from tests.support.works import write_work

    root = tmp_path_factory.mktemp("unkilled")
    work, val = write_work(root / "works", "kiln-yard", 2), write_work(root / "works", "salt-road", 2)
    done = run_plain(argv(root / "runs", work, val))
    assert done.returncode == 0, done.stderr
    found = outcome(root / "runs" / "r")
    assert [g for g, _, _ in found[1]] == [1, 0]  # the micro-step, then the consolidation
    return work, val, found


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(("point", "n", "when", "only"), POINTS, ids=[f"{p[0].split(':')[1]}-{p[1]}" for p in POINTS])
def test_a_kill_at_a_named_point_resumes_to_the_unkilled_run(unkilled, tmp_path, point, n, when, only) -> None:
    work, val, expected = unkilled
    args = argv(tmp_path / "runs", work, val)
    assert run_killed(point, n, args, when=when, only=only) == -9, "the point was never reached"
    again = run_again(args)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    assert outcome(tmp_path / "runs" / "r") == expected
