"""A decision is one atomic fact: a run killed anywhere inside one decides that micro-step once.

Each test kills the trainer (its whole process group, SIGKILL) at a named point of the
decision, through `faults.run_killed`, runs the same command again, and checks that the
micro-step was decided exactly once (one `decision` event, its attempt the one recorded
in commit.txt), and that the decided commit is reachable from a ref.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltui.pool.notes import Pool
from tests.support.faults import run_again, run_killed
from tests.support.recorded import recorded

pytestmark = pytest.mark.subprocess

FINISHED = "skilltui.store.micro_records:MicroRecords.finished"
REVIEWED = "skilltui.store.micro_records:MicroRecords.reviewed"


def argv(runs: Path, works: list[Path], *extra: str) -> list[str]:
    args = ["train", "--auto", "--runs-dir", str(runs), "--run-id", "r", "--steps", "1"]
    args += ["--episodes-per-step", "1", "--group-size", "0", *extra]
    for work in works:
        args += ["--work", str(work)]
    return args


def decisions(run: Path) -> list[dict]:
    return [e for e in recorded(run / "events.jsonl") if e["kind"] == "decision"]


def on_a_ref(pool: Pool, sha: str) -> bool:
    return bool(pool.git("for-each-ref", "--contains", sha, "--format=%(refname)").strip())


def check_decided_once(run: Path) -> None:
    pool = Pool(run / "memory")
    made = decisions(run)
    keys = [(e["epoch"], e["step"], e["group"]) for e in made if e["decision"] != "rerun"]
    assert len(keys) == len(set(keys)), made
    for e in made:
        assert on_a_ref(pool, e["after"]), e
    for record in run.glob("epoch*/step*/backward/g*/commit.txt"):
        data = json.loads(record.read_text())
        if data["decision"] == "skipped":
            continue
        group = int(record.parent.name[1:])
        mine = [e for e in made if e["group"] == group and e["decision"] != "rerun"]
        assert [e["attempt"] for e in mine] == [data["attempt"]], (record, mine)
        assert on_a_ref(pool, data["attempt_commit"])
    approved = {e["after"] for e in made if e["decision"] == "approve"}
    on_main = pool.git("rev-list", "HEAD").split()[:-1]  # all but the pool's first commit
    assert set(on_main) <= approved, "a commit on main that no decision event approved"
    assert recorded(run / "events.jsonl")[-1]["status"] == "finished"
    assert pool.is_clean()


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize(("point", "n"), [(FINISHED, 1), (REVIEWED, 1)])
def test_a_kill_inside_the_decision_decides_the_micro_step_once(make_work, tmp_path: Path, k, point, n) -> None:
    runs, works = tmp_path / "runs", [make_work("kiln-yard", 2)]
    args = argv(runs, works, "--no-consolidate", "--candidates", str(k))
    assert run_killed(point, n, args, when="before") == -9
    again = run_again(args)
    assert again.returncode == 0, again.stderr
    assert "outside training" not in again.stderr
    check_decided_once(runs / "r")
    assert len(decisions(runs / "r")) == 1


CONSOLIDATION = "'g0' in str(args[0].out)"  # a MicroRecords call of the epoch's consolidation (group 0)


def unreviewed_on_main(run: Path) -> list[str]:
    """Commits on the pool's HEAD without the engine's decision trailer: never decided."""
    pool = Pool(run / "memory")
    bodies = pool.git("log", "--format=%H %s%n%(trailers:key=Skilltui-Decision,valueonly)%x00", "HEAD")
    found = []
    for entry in bodies.split("\0"):
        head, _, decision = entry.strip().partition("\n")
        if head and not head.endswith("pool: start empty") and not decision.strip():
            found.append(head)
    return found


def test_a_consolidation_killed_after_its_commit_is_reviewed_once(make_work, tmp_path: Path) -> None:
    runs, works = tmp_path / "runs", [make_work("kiln-yard", 2)]
    args = argv(runs, works)
    assert run_killed("skilltui.engine.update.backward_attempt:check_commit", 2, args) == -9
    again = run_again(args)
    assert again.returncode == 0, again.stderr
    assert "outside training" not in again.stderr
    run = runs / "r"
    assert unreviewed_on_main(run) == []
    check_decided_once(run)
    assert [e["group"] for e in decisions(run)] == [1, 0]


@pytest.mark.parametrize("n", [1, 2])
def test_a_gated_consolidation_killed_inside_its_decision_is_decided_once(make_work, tmp_path: Path, n) -> None:
    runs, works = tmp_path / "runs", [make_work("kiln-yard", 2)]
    args = argv(runs, works, "--candidates", "3", "--gate", "--val-work", str(make_work("salt-road", 2)))
    assert run_killed(REVIEWED, n, args, when="after", only=CONSOLIDATION) == -9
    again = run_again(args)
    assert again.returncode == 0, again.stderr
    run = runs / "r"
    assert unreviewed_on_main(run) == []
    check_decided_once(run)
    assert [e["group"] for e in decisions(run) if e["decision"] != "rerun"] == [1, 0]


def test_a_kill_after_the_checks_passed_asks_the_review_again_without_a_new_attempt(make_work, tmp_path) -> None:
    runs, works = tmp_path / "runs", [make_work("kiln-yard", 2)]
    args = argv(runs, works, "--no-consolidate")
    assert run_killed("skilltui.engine.update.backward_attempt:check_commit", 1, args) == -9
    again = run_again(args)
    assert again.returncode == 0, again.stderr
    run = runs / "r"
    check_decided_once(run)
    attempts = sorted(p.name for p in run.glob("epoch0/step0/backward/g1/attempt*"))
    assert attempts == ["attempt1"], attempts
    pool = Pool(run / "memory")
    assert not pool.git("for-each-ref", "refs/skilltui/dead/").strip()
    assert "left dirty" not in again.stderr


@pytest.mark.parametrize("point", ["skilltui.store.repair:_keep_damaged", "skilltui.store.repair:_Git.__call__"])
def test_a_repair_killed_after_rewriting_head_keeps_the_garbage_bytes(done, point) -> None:
    """Repair rewrote a garbage HEAD before saving it, so a kill lost its bytes (and could leave an index)."""
    git_dir = done.pool.root / ".git"
    (git_dir / "HEAD").write_bytes(b"\x7fELF garbage\n")
    assert run_killed(point, 1, ["repair", str(done.root)], when="before") == -9
    again = run_again(["repair", str(done.root)])
    assert again.returncode == 0, again.stderr
    pool = Pool(done.pool.root)
    kept = pool.git("for-each-ref", "--format=%(refname)", "refs/skilltui/damaged/").split()
    assert len(kept) == 1 and "ELF garbage" in pool.git("log", "-1", "--format=%B", kept[0])
    assert not list(git_dir.glob("skilltui-*")), list(git_dir.glob("skilltui-*"))


def test_candidates_killed_after_their_checks_are_reviewed_without_a_new_round(make_work, tmp_path) -> None:
    runs, works = tmp_path / "runs", [make_work("kiln-yard", 2)]
    val = make_work("salt-road", 2)
    args = argv(runs, works, "--no-consolidate", "--candidates", "3", "--gate", "--val-work", str(val))
    # The third check returned: every candidate's call is paid, some records are not written.
    assert run_killed("skilltui.engine.update.backward_attempt:check_commit", 3, args) == -9
    again = run_again(args)
    assert again.returncode == 0, again.stderr
    run = runs / "r"
    check_decided_once(run)
    attempts = sorted(p.name for p in run.glob("epoch0/step0/backward/g1/attempt*"))
    assert attempts == ["attempt1", "attempt2", "attempt3"], attempts
    calls = [e for e in recorded(run / "events.jsonl") if e["kind"] == "call" and e["role"] == "backward"]
    assert len(calls) == 3, [e["attempt"] for e in calls]
    assert [e["kind"] for e in recorded(run / "events.jsonl") if e["kind"] == "decision"] == ["decision"]
    pool = Pool(run / "memory")
    assert not pool.git("for-each-ref", "refs/skilltui/dead/").strip()
    assert len(pool.git("for-each-ref", "refs/skilltui/candidates/").split("\n")) == 3


@pytest.mark.parametrize(("point", "when"), [(REVIEWED, "after"), (FINISHED, "before")])
def test_a_consolidation_that_changes_nothing_killed_inside_its_decision_leaves_no_commit(
    make_work, tmp_path: Path, point, when
) -> None:
    runs, works = tmp_path / "runs", [make_work("kiln-yard", 2)]
    args = argv(runs, works)
    assert run_killed(point, 1, args, when=when, only=CONSOLIDATION) == -9
    again = run_again(args)
    assert again.returncode == 0, again.stderr
    run = runs / "r"
    check_decided_once(run)
    update = json.loads((run / "epoch0/step0/backward/g1/commit.txt").read_text())
    consolidation = json.loads((run / "epoch0/step0/backward/g0/commit.txt").read_text())
    assert consolidation["decision"] == "approve" and consolidation["after"] == consolidation["before"]
    pool = Pool(run / "memory")
    assert pool.head() == update["after"]  # the last real update, with no empty commit above it
    assert pool.git("rev-parse", consolidation["ref"]) == consolidation["attempt_commit"]
