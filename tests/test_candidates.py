"""Several candidates per micro-step (`--candidates K`): the best one the gate would keep is kept.

The scripted backend gives each candidate an edit whose effect on the held-out work is
known: removing the dialogue note makes the writer worse, adding the scene-heading note
makes it better, re-writing a note as it is changes nothing (an empty commit).
"""

from __future__ import annotations

import json

import pytest

from skilltui.drivers.messages import ReviewAsked, line_of, parse_for_app
from skilltui.engine.update.candidates import open_copy, rank, sweep_copies
from skilltui.model.at import At
from skilltui.model.review import (
    CandidateView,
    Decision,
    GateVerdict,
    ReviewRequest,
    request_to_dict,
)
from skilltui.pool.notes import Pool
from skilltui.runs.records import load_history
from skilltui.store.micro_records import Checked, MicroRecords
from skilltui.store.run_folder import Run, read_json, write_json
from tests.support.cli import assert_refused, run_cli, snapshot
from tests.support.reviewing import ScriptedReviewer, train_once
from tests.support.scripted import ScriptedBackend, seed_pool
from tests.support.validation import events, held_out_work, train_with

NEUTRAL, HARMFUL, HELPFUL = ("add", "dialogue"), ("remove", "dialogue/dialogue-blocks.md"), ("add", "scene")


def test_with_three_candidates_the_best_clearing_one_is_kept_and_the_others_stay_reachable(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    # The helpful edit comes last, so keeping it is the ranking's doing, not the order's.
    backend = ScriptedBackend(by_candidate={1: NEUTRAL, 2: HARMFUL, 3: HELPFUL}, cost_per_call=0.01)
    argv = ["--steps", "1", "--gate", "--candidates", "3", "--init-pool", str(donor)]
    assert train_with(backend, runs, works, [val], *argv) == 0

    run = Run(runs / "r")
    out = run.backward_dir(0, 0, 1)
    pool = Pool(run.root / "memory")
    refs = {name: sha for sha, names in pool.kept_refs().items() for name in names}
    candidates = {k: refs[f"candidates/0-0-1/{k}"] for k in (1, 2, 3)}
    gates = {g["attempt"]: g for g in events(runs, "gate")}
    assert gates[1]["after"] == gates[1]["before"]  # the neutral one left the notes as they were
    assert gates[2]["advice"] == "rollback" and gates[2]["after"] > gates[2]["before"]
    assert gates[3]["advice"] == "keep" and gates[3]["after"] < gates[3]["before"]

    (decision,) = events(runs, "decision")
    assert (decision["decision"], decision["by"], decision["attempt"]) == ("approve", "auto", 3)
    commit = read_json(out / "commit.txt")
    assert commit["after"] == candidates[3] == pool.head()
    assert sorted(pool.note_paths()) == ["dialogue/dialogue-blocks.md", "scene/scene-headings.md"]
    # One commit on the pool's history for the micro-step; the others reachable, marked dropped.
    assert [c.sha for c in pool.log("HEAD")][:2] == [candidates[3], commit["before"]]
    for k in (1, 2):
        review = read_json(out / f"attempt{k}" / "review.json")
        assert review["decision"] == "dropped" and review["ref"] == f"refs/skilltui/candidates/0-0-1/{k}"
        assert pool.is_ancestor(commit["before"], candidates[k])
    history = load_history(run)
    shown = {c.sha: c for c in history.commits}
    for k in (1, 2):
        assert not shown[candidates[k]].in_history
        assert shown[candidates[k]].decision == "dropped by auto"
    assert shown[candidates[3]].in_history and shown[candidates[3]].decision == "approved by auto"
    # The dropped candidates are rejected updates the next proposal is told about, with their figures.
    from skilltui.engine.update.rejected import rejected_text

    told = rejected_text(run)
    assert told.count("not chosen (another candidate was kept)") == 2 and "validation Δ" in told, told
    # The working copies are gone; git knows of no other working tree.
    assert not any(out.glob("attempt*/pool"))
    assert pool.git("worktree", "list").count("\n") == 0

    # Every candidate's backward call was paid for and counted.
    backward = [c for c in events(runs, "call") if c["role"] == "backward"]
    assert len(backward) == 3
    finished = events(runs, "run_finished")[-1]
    assert finished["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in events(runs, "call")))


def test_when_no_candidate_clears_the_gate_all_are_rolled_back(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue", "scene")
    backend = ScriptedBackend(by_candidate={1: HARMFUL, 2: ("remove", "scene/scene-headings.md")})
    argv = ["--steps", "1", "--gate", "--candidates", "2", "--init-pool", str(donor)]
    assert train_with(backend, runs, works, [val], *argv) == 0
    (decision,) = events(runs, "decision")
    assert decision["decision"] == "rollback"
    out = Run(runs / "r").backward_dir(0, 0, 1)
    assert [read_json(out / f"attempt{k}" / "review.json")["decision"] for k in (1, 2)] == ["rollback", "rollback"]
    pool = Pool(runs / "r" / "memory")
    assert pool.head() == read_json(out / "commit.txt")["before"]
    assert sorted(pool.note_paths()) == ["dialogue/dialogue-blocks.md", "scene/scene-headings.md"]


def test_one_candidate_is_todays_micro_step(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    runs = tmp_path / "runs"
    backend = ScriptedBackend(script=[HELPFUL])
    assert train_with(backend, runs, works, [], "--steps", "1", "--candidates", "1") == 0
    out = Run(runs / "r").backward_dir(0, 0, 1)
    assert sorted(p.name for p in out.glob("attempt*")) == ["attempt1"]
    assert "candidate" not in read_json(out / "attempt1" / "checked.json")
    assert not any(n.startswith("candidates/") for ns in Pool(runs / "r" / "memory").kept_refs().values() for n in ns)


@pytest.mark.subprocess
@pytest.mark.parametrize("value", ["0", "-2", "1.5", "two"])
def test_bad_candidates_values_are_refused_before_anything_is_written(tmp_path, make_work, value):
    work = make_work("kestrel", 2)
    runs = tmp_path / "runs"
    result = run_cli(
        "train", "--auto", "--work", str(work), "--runs-dir", str(runs), "--candidates", value, cwd=tmp_path
    )
    assert_refused(result, "--candidates")
    assert snapshot(runs) == []


def test_a_run_stopped_before_its_candidates_were_judged_resumes_without_new_backward_calls(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    plan = {1: NEUTRAL, 2: HARMFUL, 3: HELPFUL}
    argv = ["--steps", "1", "--gate", "--candidates", "3", "--init-pool", str(donor)]
    # Forward, loss and the first validation cost 0.04; the three candidates take it past the cap
    # of 0.065, so the run stops when validation would judge them.
    first = ScriptedBackend(by_candidate=plan, cost_per_call=0.01)
    assert train_with(first, runs, works, [val], *argv, "--max-cost", "0.065") == 0
    assert events(runs, "run_finished")[-1]["status"] == "stopped"
    assert not events(runs, "decision")
    assert sum(1 for c in first.calls if c.role == "backward") == 3

    again = ScriptedBackend(by_candidate=plan, cost_per_call=0.01)
    assert train_with(again, runs, works, [val], *argv, "--max-cost", "1") == 0
    assert not [c for c in again.calls if c.role == "backward"]
    (decision,) = events(runs, "decision")
    assert (decision["decision"], decision["attempt"]) == ("approve", 3)
    assert sorted(Pool(runs / "r" / "memory").note_paths()) == [
        "dialogue/dialogue-blocks.md",
        "scene/scene-headings.md",
    ]


def test_a_dead_rounds_working_copies_are_swept_and_their_commits_kept(tmp_path):
    pool = Pool(tmp_path / "memory")
    before = pool.init()
    out = tmp_path / "g1"
    copy = open_copy(pool, out / "attempt2" / "pool", before)
    (copy.root / "scene").mkdir()
    (copy.root / "scene" / "x.md").write_text("half an edit\n", encoding="utf-8")
    made = copy.commit_all("train epoch 0 step 0 micro 1/1")
    copy.close()
    open_copy(pool, out / "attempt3" / "pool", before).close()  # one that never committed
    assert pool.git("worktree", "list").count("\n") == 2

    sweep_copies(pool, out, before, "e0-s0-g1")
    assert not any(out.glob("attempt*/pool"))
    assert pool.git("worktree", "list").count("\n") == 0
    assert pool.kept_refs() == {made: ["dead/e0-s0-g1-a2"]}
    assert pool.head() == before and pool.is_clean()


def test_rank_puts_what_the_gate_keeps_first_lowest_delta_first():
    def checked(number: int, before: float | None, after: float | None, advice: str) -> Checked:
        verdict = GateVerdict(before, after, 1, advice, "")
        return Checked(number, {"after": str(number)}, verdict, candidate=number)

    small, big = checked(1, 0.5, 0.4, "keep"), checked(2, 0.5, 0.2, "keep")
    # An unclear verdict may have the lowest delta of all and still must not win.
    unclear, unmeasured = checked(3, 0.5, 0.1, "rollback"), checked(4, None, None, "none")
    assert [c.candidate for c in rank([unmeasured, unclear, small, big])] == [2, 1, 3, 4]
    plain = [Checked(n, {"after": str(n)}, candidate=n) for n in (2, 1, 3)]
    assert [c.candidate for c in rank(plain)] == [1, 2, 3]  # no gate: the candidates' own order


def test_a_review_request_with_candidates_crosses_the_process_boundary_whole(tmp_path):
    verdict = GateVerdict(0.5, 0.3, 1, "keep", "gate: val 0.500 -> 0.300")
    views = [
        CandidateView(number=2, attempt=5, after="b" * 40, subject="s2", patch="+x", reads=["a.md"], gate=verdict),
        CandidateView(number=1, attempt=4, after="a" * 40, subject="s1", patch="+y"),
    ]
    request = ReviewRequest(
        run_dir=tmp_path, epoch=0, step=1, group=1, attempt=5, label="epoch 0 step 1 micro 1/1", works=["w"],
        before="c" * 40, after="b" * 40, subject="s2", patch="+x", evidence="e", reports={"w": "r"},
        lint_ok=True, lint_problems=[], gate=verdict, candidates=views,
    )  # fmt: skip
    # Across the app's wire, as the forked trainer sends it: read back and checked field by field.
    asked = parse_for_app(line_of(ReviewAsked(request, "2026-12-01T10:00:00.000Z")))
    back = asked.request
    assert back == request
    assert back.showing(4).after == "a" * 40 and back.showing(4).gate is None and back.showing(4).patch == "+y"
    bare = {k: v for k, v in request_to_dict(request).items() if k != "candidates"}
    line = json.dumps({"t": "review", "request": bare, "time": "2026-12-01T10:00:00.000Z"})
    assert parse_for_app(line).request.candidates == []


def test_a_resumed_run_counts_a_round_whose_every_candidate_failed_once(tmp_path):
    records = MicroRecords(Run(tmp_path / "run"), At(0, 0, 1))

    def failed(n: int, round_: int, reason: str) -> None:
        write_json(records.attempt_dir(n) / "failed.json", {"reason": reason, "round": round_})

    failed(1, 1, "no commit")
    write_json(records.attempt_dir(2) / "checked.json", {"after": "x", "round": 1, "candidate": 2})
    write_json(records.attempt_dir(2) / "review.json", {"decision": "rerun"})
    failed(3, 1, "lint")  # a candidate of the reviewed round: not a failure of the next round
    failed(4, 4, "no commit")
    failed(5, 4, "leak")  # the next round failed whole: once, with its last reason
    assert records.failures_since_review(5) == ["leak"]


def test_a_rerun_of_candidates_runs_a_new_round_with_the_note_and_keeps_every_candidate(tmp_path, make_work):
    note = "Try the scene headings instead"
    reviewer = ScriptedReviewer(Decision("rerun", "human", note), Decision("approve", "human", attempt=4))
    backend = ScriptedBackend(by_candidate={1: NEUTRAL, 2: HELPFUL})
    run, outcome = train_once(tmp_path, [make_work("kestrel", 4)], backend, reviewer, steps=1, candidates=2)
    assert outcome.status == "finished"
    first, second = reviewer.requests
    assert [c.attempt for c in first.candidates] == [1, 2] and [c.attempt for c in second.candidates] == [3, 4]
    out = run.backward_dir(0, 0, 1)
    assert all(note not in (out / f"attempt{n}" / "prompt.md").read_text() for n in (1, 2))
    assert all(note in (out / f"attempt{n}" / "prompt.md").read_text() for n in (3, 4))
    decisions = [read_json(out / f"attempt{n}" / "review.json")["decision"] for n in (1, 2, 3, 4)]
    assert decisions == ["rerun", "rerun", "dropped", "approve"]
    pool = Pool(run.memory)
    # The pool keeps the candidate chosen, as its stamped commit: the same notes, trailers added.
    head = pool.head()
    assert head == read_json(out / "commit.txt")["after"] == read_json(out / "attempt4" / "review.json")["commit"]
    assert pool.git("rev-parse", "HEAD^{tree}") == pool.git("rev-parse", f"{second.candidates[1].after}^{{tree}}")
    refs = {name for names in pool.kept_refs().values() for name in names}
    assert {"rerun/e0-s0-g1-a1", "rerun/e0-s0-g1-a2", "candidates/0-0-1/1", "candidates/0-0-1/2"} <= refs
