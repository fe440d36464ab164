"""The gate's rule (engine/validation/gate.py) on cases whose answer is known: ties, looks, margins, families."""

from __future__ import annotations

import json

import pytest

from skilltui.engine.validation.gate import Rule, judge, plan
from skilltui.engine.validation.stats import Spread, pocock

RULE = Rule(0.9)


def calls(per_pass: list[list[float]], work: str = "held") -> dict[tuple[str, int], list[float]]:
    """One work's writing calls: pass k's per-episode losses."""
    return {(work, k): losses for k, losses in enumerate(per_pass, start=1)}


def test_zero_spread_makes_the_interval_the_point_a_strict_gain_clears_a_tie_rolls_back():
    parent = calls([[0.5, 0.4], [0.5, 0.4]])
    better = calls([[0.3, 0.35], [0.3, 0.35]])
    found = judge(parent, better, RULE, passes_left=True)
    assert found.verdict.advice == "keep" and found.more is None
    assert found.verdict.low == found.verdict.high == found.verdict.delta == pytest.approx(-0.125)
    tie = judge(parent, parent, RULE, passes_left=True)
    assert tie.verdict.advice == "rollback" and tie.verdict.reason.endswith(": tie, rolled back")


def test_one_pass_of_a_writer_that_may_vary_asks_for_the_parents_second_pass():
    parent, candidate = calls([[0.5, 0.4]]), calls([[0.3, 0.3]])
    found = judge(parent, candidate, RULE, passes_left=True)
    assert found.more == "parent" and found.verdict.advice == "rollback" and found.verdict.low is None
    assert plan(found, 1, 1, 3) == (1, 2)  # the parent alone, one ahead
    assert plan(found, 1, 2, 3) == (2, 2)  # already ahead: both sides
    exact = judge(parent, candidate, Rule(0.9, deterministic=True), passes_left=True)
    assert exact.verdict.advice == "keep" and exact.more is None and "a deterministic writer" in exact.verdict.reason


def test_the_reason_says_the_interval_the_calls_and_what_it_rests_on():
    parent = calls([[0.41, 0.42], [0.42, 0.41], [0.40, 0.41]])
    candidate = calls([[0.37, 0.36], [0.38, 0.37], [0.36, 0.38]])
    v = judge(parent, candidate, Rule(0.9, looks=3), passes_left=False).verdict
    assert v.reason.startswith(f"gate: val {v.before:.3f} -> {v.after:.3f}, Δ {v.delta:+.3f} [")
    assert "] at 95.4%, n=6 calls (12 episodes, call-to-call spread on df 4; each of 3 looks at 95.4%)" in v.reason
    assert v.reason.endswith(": better") and v.n == 6 and v.passes == 3 and v.confidence == 0.9
    assert v.low is not None and v.high is not None and v.low < v.delta < v.high < 0


def test_each_look_and_each_candidate_spends_a_share_of_the_error_rate():
    assert Rule(0.9).nominal == pytest.approx(0.9)
    assert Rule(0.9, looks=3).nominal == pytest.approx(pocock(0.9, 3))
    assert Rule(0.9, looks=3, family=3).nominal == pytest.approx(pocock(1 - 0.1 / 3, 3))
    # An effect that clears one 90% look but not three looks' 95.4% intervals.
    parent = calls([[0.50, 0.50], [0.52, 0.52]])
    candidate = calls([[0.47, 0.47], [0.49, 0.49]])
    history = Spread(0.0002 * 6, 6)
    assert judge(parent, candidate, Rule(0.9), passes_left=False, history=history).verdict.advice == "keep"
    looked = judge(parent, candidate, Rule(0.9, looks=3, family=3), passes_left=True, history=history)
    assert looked.verdict.advice == "rollback" and looked.more == "both"


def test_a_spread_on_too_few_degrees_of_freedom_asks_for_more_passes_until_the_last_look():
    # The parent's two passes agreed closely: df 1 says little about the writer's luck.
    parent = calls([[0.500, 0.500], [0.501, 0.501]])
    candidate = calls([[0.30, 0.30]])
    early = judge(parent, candidate, Rule(0.9, looks=3), passes_left=True)
    assert early.more == "parent" and early.verdict.advice == "rollback"
    assert early.verdict.reason.endswith("unclear: the spread rests on df 1, fewer than 4")
    last = judge(parent, candidate, Rule(0.9, looks=3), passes_left=False)
    assert last.verdict.advice == "keep" and last.more is None


def test_a_consolidation_is_kept_only_within_its_margin():
    parent = calls([[0.40, 0.40], [0.42, 0.42], [0.41, 0.41]])
    same = calls([[0.40, 0.40], [0.42, 0.42], [0.41, 0.41]])
    worse = calls([[0.43, 0.43], [0.45, 0.45], [0.44, 0.44]])
    rule = Rule(0.9, margin=0.05)
    kept = judge(parent, same, rule, passes_left=False).verdict
    assert kept.advice == "keep" and kept.reason.endswith("no worse than +0.05: kept")
    tight = judge(parent, worse, Rule(0.9, margin=0.01), passes_left=False).verdict
    assert tight.advice == "rollback" and "+0.01" in tight.reason


def test_a_missing_work_decides_nothing_but_a_rollback_naming_it():
    parent, candidate = calls([[0.5, 0.4]]), calls([[0.1, 0.1]])
    found = judge(parent, candidate, RULE, passes_left=True, missing=["quasar"])
    assert found.verdict.advice == "rollback" and found.more is None
    assert found.verdict.reason.startswith("gate: unmeasured: rolled back (validation work quasar")


def test_a_verdict_recorded_before_the_interval_rule_still_reads():
    from skilltui.drivers.messages import parse_for_app
    from skilltui.model import events as ev
    from skilltui.model.parse import parse_event
    from skilltui.model.review import GateVerdict

    old = {
        "kind": "gate",
        "time": "2026-11-01T10:00:00.000Z",
        "epoch": 0,
        "step": 1,
        "group": 1,
        "attempt": 1,
        "before": 0.41,
        "after": 0.44,
        "works": 1,
        "tolerance": 0.005,
        "advice": "rollback",
        "reason": "gate: val 0.410 -> 0.440",
        "cost_usd": 0.0,
    }
    gate = parse_event(old)  # its `tolerance` is retired: read and dropped
    assert isinstance(gate, ev.GateChecked) and gate.n == 0 and gate.delta is None and gate.low is None
    assert not hasattr(gate, "tolerance")
    val = parse_event(
        {"kind": "val_loss", "time": old["time"], "epoch": 0, "step": 0, "work": "held", "loss": 0.4, "scores": {}}
    )
    assert isinstance(val, ev.ValLoss) and val.samples == 1 and val.spread is None
    at = ("kind", "time", "epoch", "step", "group", "attempt", "tolerance")
    fields = {k: v for k, v in old.items() if k not in at}
    request = {"run_dir": "/r", "gate": fields, **dict.fromkeys(("epoch", "step", "group", "attempt"), 0)}
    request.update(label="", works=[], before="", after="", subject="", patch="", evidence="", reports={})
    request.update(lint_ok=True, lint_problems=[])
    line = json.dumps({"t": "review", "request": request, "time": old["time"]})
    assert parse_for_app(line).request.gate == GateVerdict(**fields)  # read back across the app's wire


def test_offline_noise_is_reproducible_for_a_call_and_differs_between_calls(tmp_path):
    from skilltui.agents.offline_noise import call_seed, garble

    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "config.json").write_text("{}")
    script = "\n\n".join(f"PARAGRAPH {n}\nSomeone says line {n} out loud." for n in range(40)) + "\n"
    one = run / "val" / "pool-abc" / "works" / "held" / "scripts"
    two = run / "val" / "pool-abc" / "pass2" / "works" / "held" / "scripts"
    assert call_seed(str(one), 1) == "r/val/pool-abc/works/held/scripts#1"  # no machine-specific path
    first = garble(script, 0.15, call_seed(str(one), 1))
    assert first == garble(script, 0.15, call_seed(str(one), 1)) != script
    assert garble(script, 0.15, call_seed(str(two), 1)) != first
    assert garble(script, 0.0, call_seed(str(one), 1)) == script
    kept = sum(block in first.split("\n\n") for block in script.strip().split("\n\n"))
    assert 25 <= kept <= 39  # about 85% of the 40 paragraphs come through whole


def test_offline_call_noise_moves_a_whole_call_and_zero_draws_nothing():
    from skilltui.agents.offline_noise import ignores_notes

    seeds = [f"r/val/pool-abc/pass{k}/works/held/scripts#0" for k in range(400)]
    share = sum(ignores_notes(0.25, seed) for seed in seeds) / len(seeds)
    assert 0.18 <= share <= 0.32  # about a quarter of the calls; the draw is fixed by the seeds
    assert [ignores_notes(0.25, s) for s in seeds] == [ignores_notes(0.25, s) for s in seeds]
    assert not any(ignores_notes(0.0, s) for s in seeds) and all(ignores_notes(1.0, s) for s in seeds)
