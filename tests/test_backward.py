"""The backward micro-step: its checks, failures that leave the pool as it was, and the review protocol."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from skilltui.agents.base import BackendError, CallResult, Request
from skilltui.agents.offline import OfflineBackend
from skilltui.agents.tools import Sandbox
from skilltui.engine.loop import Trainer
from skilltui.engine.update.review import AutoReviewer
from skilltui.model.bus import EventBus
from skilltui.model.review import Decision
from skilltui.pool.notes import Pool
from tests.support.recorded import recorded
from tests.support.reviewing import ScriptedReviewer, open_, train_once


class BadBackward(OfflineBackend):
    """A backward agent that misbehaves in a chosen way; forward and loss work as usual."""

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how

    async def agent(self, request: Request, sandbox: Sandbox) -> CallResult:
        if request.role != "backward":
            return await super().agent(request, sandbox)
        pool = Path(request.context["pool"])
        if self.how == "raise":
            sandbox.create(str(pool / "dialogue" / "half.md"), "half-written")
            raise BackendError("the agent crashed")
        if self.how == "no-commit":
            sandbox.create(str(pool / "dialogue" / "loose.md"), "---\ndescription: x\n---\n## Guidance\n\nx\n")
            return CallResult(text="done, forgot to commit")
        if self.how == "lint":
            sandbox.create(str(pool / "dialogue" / "bad.md"), "no front matter at all\n")
            sandbox.commit("a note without front matter")
            return CallResult(text="committed a bad note")
        raise AssertionError(self.how)


def test_under_strict_a_failed_backward_stops_the_run_and_leaves_the_pool_untouched(tmp_path, make_work):
    works = [make_work("slate", 4)]
    for how in ("raise", "no-commit", "lint"):
        run_id_dir = tmp_path / how
        run, outcome = train_once(run_id_dir, works, BadBackward(how), AutoReviewer(), steps=2, strict=True)
        pool = Pool(run.memory)
        assert outcome.status == "failed", how
        assert pool.is_clean(), how
        assert int(pool.git("rev-list", "--count", "HEAD")) == 1, how  # only the pool's first commit
        assert pool.note_paths() == [], how
        assert not (run.backward_dir(0, 0, 1) / "commit.txt").exists()
        assert not run.step_dir(0, 1).exists(), "the run must stop at the failed micro-step"
        finished = [e for e in recorded(run.events_path) if e["kind"] == "run_finished"]
        assert finished[-1]["status"] == "failed" and "--strict" in finished[-1]["reason"], how
        # It failed only after every retry: one attempt and two more, each from the reset pool.
        assert sorted(p.name for p in run.backward_dir(0, 0, 1).glob("attempt*")) == [
            "attempt1",
            "attempt2",
            "attempt3",
        ], how


def test_a_pool_left_dirty_by_a_dead_attempt_is_reset_first(tmp_path, make_work):
    works = [make_work("flint", 4)]
    run, outcome = train_once(tmp_path, works, OfflineBackend(), AutoReviewer(), steps=1)
    assert outcome.status == "finished"
    pool = Pool(run.memory)
    g1 = run.backward_dir(0, 0, 1)
    before = (g1 / "before.txt").read_text().strip()
    # The process died after the agent wrote a stray note and committed half-way: undo the record of it.
    (g1 / "commit.txt").unlink()
    (g1 / "decision.json").unlink()  # and before its decision was recorded
    pool.reset(before)
    (pool.root / "scene").mkdir(exist_ok=True)
    (pool.root / "scene" / "stray.md").write_text("stray edit from a dead attempt\n")
    (pool.root / "junk.txt").write_text("junk\n")
    run, outcome = train_once(tmp_path, works, OfflineBackend(), AutoReviewer(), steps=1)
    assert outcome.status == "finished"
    assert pool.is_clean()
    assert "scene/stray.md" not in pool.note_paths() and not (pool.root / "junk.txt").exists()
    warnings = [e for e in recorded(run.events_path) if e["kind"] == "warning"]
    assert any("dirty" in w["message"] for w in warnings)


def test_rerun_resets_the_pool_and_puts_the_note_in_the_next_prompt(tmp_path, make_work):
    works = [make_work("grain", 4)]
    note = "Prefer one note on scene headings over two vague ones"
    reviewer = ScriptedReviewer(Decision("rerun", "human", note), Decision("approve", "human"))
    run, outcome = train_once(tmp_path, works, OfflineBackend(), reviewer, steps=1)
    assert outcome.status == "finished"
    g1 = run.backward_dir(0, 0, 1)
    assert note not in (g1 / "attempt1" / "prompt.md").read_text()
    assert note in (g1 / "attempt2" / "prompt.md").read_text()
    first, second = reviewer.requests
    assert first.before == second.before  # the rerun started from the same commit
    pool = Pool(run.memory)
    kept = pool.git("rev-parse", "refs/skilltui/rerun/e0-s0-g1-a1")
    # The rerun attempt stays reachable: the commit reviewed, with its provenance trailers added.
    assert pool.git("rev-parse", f"{kept}^{{tree}}") == pool.git("rev-parse", f"{first.after}^{{tree}}")
    assert pool.parents(kept) == pool.parents(first.after)
    assert "Skilltui-Decision: rerun by human" in pool.git("log", "-1", "--format=%B", kept)
    decisions = [e for e in recorded(run.events_path) if e["kind"] == "decision"]
    assert decisions[0]["after"] == kept
    assert [(d["decision"], d["by"]) for d in decisions] == [("rerun", "human"), ("approve", "human")]
    assert decisions[0]["note"] == note


def test_roll_back_returns_the_pool_to_the_commit_before_and_keeps_the_commit(tmp_path, make_work):
    works = [make_work("reed", 4)]
    reviewer = ScriptedReviewer(Decision("rollback", "human"))
    run, outcome = train_once(tmp_path, works, OfflineBackend(), reviewer, steps=1)
    assert outcome.status == "finished"
    pool = Pool(run.memory)
    request = reviewer.requests[0]
    assert pool.head() == request.before
    assert pool.note_paths() == []
    kept = pool.git("rev-parse", "refs/skilltui/rolledback/e0-s0-g1-a1")
    # The commit reviewed, kept with its provenance trailers: the same notes on the same parent.
    assert pool.git("rev-parse", f"{kept}^{{tree}}") == pool.git("rev-parse", f"{request.after}^{{tree}}")
    assert pool.parents(kept) == pool.parents(request.after)
    assert "Skilltui-Decision: rolled back by human" in pool.git("log", "-1", "--format=%B", kept)
    record = json.loads((run.backward_dir(0, 0, 1) / "commit.txt").read_text())
    assert record["decision"] == "rollback" and record["after"] == request.before


def test_a_review_interrupted_by_a_quit_is_asked_again_without_a_new_attempt(tmp_path, make_work):
    works = [make_work("moss", 4)]

    class Quit(Exception):
        pass

    class QuittingReviewer:
        async def review(self, request):
            raise Quit

    opened = open_(tmp_path, works, steps=1)
    try:
        asyncio.run(Trainer(opened, OfflineBackend(), QuittingReviewer(), EventBus()).train())
    except Quit:
        pass
    finally:
        opened.lock.release()
    reviewer = ScriptedReviewer(Decision("approve", "human"))
    run, outcome = train_once(tmp_path, works, OfflineBackend(), reviewer, steps=1)
    assert outcome.status == "finished"
    assert len(reviewer.requests) == 1 and reviewer.requests[0].attempt == 1
    assert not (run.backward_dir(0, 0, 1) / "attempt2").exists()


def test_review_request_carries_the_diff_evidence_and_changes(tmp_path, make_work):
    works = [make_work("loam", 4), make_work("silt", 4)]
    reviewer = ScriptedReviewer()
    run, _ = train_once(tmp_path, works, OfflineBackend(), reviewer, steps=1)
    request = reviewer.requests[0]
    assert request.works == ["loam", "silt"]
    assert request.added and request.added[0] in request.patch
    assert "Commonality report" in request.evidence  # two works: the reduce summary is the evidence
    assert set(request.reports) == {"loam", "silt"} and request.lint_ok


class PricedOffline(OfflineBackend):
    """The offline backend with a price: every call costs a cent."""

    def _result(self, request, text, transcript=None):
        result = super()._result(request, text, transcript)
        result.cost_usd = 0.01
        return result


def test_max_cost_stops_before_the_next_stage_and_the_run_resumes(tmp_path, make_work):
    works = [make_work("coin", 4), make_work("purse", 4)]
    run, outcome = train_once(tmp_path, works, PricedOffline(), AutoReviewer(), steps=2, max_cost=0.03)
    assert outcome.status == "stopped" and "--max-cost" in outcome.reason
    calls = [e for e in recorded(run.events_path) if e["kind"] == "call"]
    # Two forwards start together; each stage checks the cap before it starts, so at most the
    # calls already in flight finish past it.
    assert 3 <= len(calls) <= 4
    run, outcome = train_once(tmp_path, works, PricedOffline(), AutoReviewer(), steps=2, max_cost=1.0)
    assert outcome.status == "finished"
    finished = [e for e in recorded(run.events_path) if e["kind"] == "run_finished"]
    total = sum(e["cost_usd"] for e in recorded(run.events_path) if e["kind"] == "call")
    assert finished[-1]["cost_usd"] == round(total, 6)
    assert (run.backward_dir(0, 1, 1) / "commit.txt").exists()
