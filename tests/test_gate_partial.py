"""No decision on partial evidence: a validation work that fails is never left out.

Before, a failed validation pass dropped its work silently and the gate paired what was
left, so a candidate whose notes made the writer fail on one validation work could be kept
on the other. Now a failed pass is retried once, then the verdict is "unmeasured: rolled
back" naming the work.
"""

from __future__ import annotations

from pathlib import Path

from skilltui.agents.base import BackendError
from skilltui.store import val_store
from tests.support.scripted import ScriptedBackend, seed_pool
from tests.support.validation import events, held_out_work, train_with

HELPFUL = "scene/scene-headings.md"  # the note ("add", "scene") writes: it helps both works


class FailsOnItsNotes(ScriptedBackend):
    """A writer that fails on validation work `quasar` whenever the notes it reads hold HELPFUL."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.failed: list[str] = []

    async def agent(self, request, sandbox):
        ctx = request.context
        if request.role == "forward" and "/val/" in str(ctx.get("out_dir", "")) and "quasar" in str(ctx["out_dir"]):
            if (Path(ctx["pool"]) / HELPFUL).exists():
                self.failed.append(str(ctx["out_dir"]))
                raise BackendError("the writer gave up on this work")
        return await super().agent(request, sandbox)


def test_a_validation_work_that_fails_never_lets_a_candidate_be_kept(tmp_path, make_work):
    works = [make_work("kestrel", 4)]
    val = [held_out_work(tmp_path / "works"), held_out_work(tmp_path / "works", "quasar")]
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    backend = FailsOnItsNotes(script=[("add", "scene")])
    assert train_with(backend, runs, works, val, "--steps", "1", "--gate", "--init-pool", str(donor)) == 0
    (decision,) = events(runs, "decision")
    assert decision["decision"] == "rollback"
    assert "unmeasured: rolled back" in decision["reason"] and "quasar" in decision["reason"]
    # The failing pass was retried once before the verdict gave up on it.
    assert len(backend.failed) == 2 and len(set(backend.failed)) == 1
    (gate,) = events(runs, "gate")
    assert gate["advice"] == "rollback" and gate["delta"] is None


def test_the_same_candidate_is_kept_when_both_works_measure(tmp_path, make_work):
    # The control: without the failure the helpful note is kept, so the rollback above is the failure's.
    works = [make_work("kestrel", 4)]
    val = [held_out_work(tmp_path / "works"), held_out_work(tmp_path / "works", "quasar")]
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    backend = ScriptedBackend(script=[("add", "scene")])
    assert train_with(backend, runs, works, val, "--steps", "1", "--gate", "--init-pool", str(donor)) == 0
    (decision,) = events(runs, "decision")
    assert decision["decision"] == "approve", decision["reason"]


def test_the_kept_candidates_recorded_delta_comes_from_a_fresh_pass(tmp_path, make_work):
    # Among several candidates the lowest delta wins, so its own figure is biased low: the
    # delta recorded beside the decision is measured again on a new pass each side.
    works = [make_work("kestrel", 4)]
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    backend = ScriptedBackend(
        by_candidate={1: ("remove", "dialogue/dialogue-blocks.md"), 2: ("add", "scene")}, noise=0.1
    )
    argv = ["--steps", "1", "--gate", "--candidates", "2", "--offline-noise", "0.1", "--init-pool", str(donor)]
    assert train_with(backend, runs, works, [val], *argv) == 0
    (decision,) = events(runs, "decision")
    assert decision["decision"] == "approve" and decision["attempt"] == 2
    assert "recorded from a fresh pass each, which did not choose it: Δ" in decision["reason"]
    gate = {g["attempt"]: g for g in events(runs, "gate")}[2]
    assert decision["gate_delta"] < 0 and decision["gate_delta"] != gate["delta"]
    # Both sides ran one pass more than the verdict that chose it; the kept side's passes that chose it
    # are set aside, so its figure after the fresh pass rests on that pass alone.
    val = runs / "r" / "val"
    kept = next(t for t in val_store.trees(val) if val_store.set_aside(val, t))
    assert val_store.set_aside(val, kept) == gate["passes"]
    assert len(val_store.samples(val, kept, "orrery")) == gate["passes"] + 1
    mine = [v for v in events(runs, "val_loss") if v["attempt"] == 2]
    assert [v["samples"] for v in mine if v["point"] == "micro"][-1] == 1
    assert max(v["samples"] for v in mine if v["point"] == "before") == gate["passes"] + 1
