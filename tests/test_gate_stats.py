"""The gate's arithmetic on cases whose answer is known: t quantiles, zero spread, ties, luck."""

from __future__ import annotations

import json
import random

import pytest

from skilltui.engine.validation.gate import judge_pairs, paired, t_cdf, t_quantile

# Student's t quantiles from the standard tables (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
KNOWN = [
    (0.95, 1, 6.313752),
    (0.95, 2, 2.919986),
    (0.95, 5, 2.015048),
    (0.975, 10, 2.228139),
    (0.95, 20, 1.724718),
    (0.90, 30, 1.310415),
    (0.995, 4, 4.604095),
    (0.95, 100, 1.660234),
]


@pytest.mark.parametrize("p, df, value", KNOWN)
def test_t_quantiles_match_the_tables(p, df, value):
    assert t_quantile(p, df) == pytest.approx(value, abs=2e-6)
    assert t_quantile(1 - p, df) == pytest.approx(-value, abs=2e-6)
    assert t_cdf(value, df) == pytest.approx(p, abs=1e-7)


def units(values: dict[int, list[float]]) -> dict[tuple[str, int], list[float]]:
    return {("held", e): v for e, v in values.items()}


def test_zero_spread_makes_the_interval_the_point_a_strict_gain_clears_a_tie_rolls_back():
    parent = units({1: [0.5, 0.5], 2: [0.4, 0.4]})
    better = units({1: [0.3, 0.3], 2: [0.35, 0.35]})  # episodes gain differently: not luck, no spread
    found = judge_pairs(parent, better, confidence=0.9, passes_left=True)
    assert found.verdict.advice == "keep" and not found.more
    assert found.verdict.low == found.verdict.high == found.verdict.delta == pytest.approx(-0.125)
    tie = judge_pairs(parent, parent, confidence=0.9, passes_left=True)
    assert tie.verdict.advice == "rollback" and tie.verdict.reason.endswith(": tie, rolled back") and not tie.more


def test_one_pass_of_a_writer_that_may_vary_is_unclear_and_asks_for_more():
    parent, candidate = units({1: [0.5], 2: [0.4]}), units({1: [0.3], 2: [0.3]})
    found = judge_pairs(parent, candidate, confidence=0.9, passes_left=True)
    assert found.more and found.verdict.advice == "rollback" and found.verdict.low is None
    assert "spread not measured" in found.verdict.reason
    # A writer that says it is deterministic: one pass is exact.
    exact = judge_pairs(parent, candidate, confidence=0.9, passes_left=True, deterministic=True)
    assert exact.verdict.advice == "keep" and not exact.more and exact.verdict.n == 2


def test_the_interval_covers_the_true_delta_as_often_as_it_says():
    # Known truth: every unit gains 0.05, each pass adds normal noise of sd 0.1 per side.
    rng = random.Random(7)
    truth, covered, trials = -0.05, 0, 400
    for _ in range(trials):
        base = {e: 0.3 + 0.05 * e for e in range(1, 9)}
        parent = units({e: [b + rng.gauss(0, 0.1) for _ in range(3)] for e, b in base.items()})
        candidate = units({e: [b + truth + rng.gauss(0, 0.1) for _ in range(3)] for e, b in base.items()})
        p = paired(parent, candidate, 0.9)
        assert p is not None and p.n == 24 and p.low is not None and p.high is not None
        covered += p.low <= truth <= p.high
    assert 0.85 <= covered / trials <= 0.95


def test_the_reason_says_before_after_delta_interval_confidence_and_n():
    parent = units({1: [0.41, 0.42, 0.40], 2: [0.42, 0.41, 0.41]})
    candidate = units({1: [0.37, 0.38, 0.36], 2: [0.37, 0.36, 0.38]})
    v = judge_pairs(parent, candidate, confidence=0.9, passes_left=False).verdict
    assert v.reason.startswith(f"gate: val {v.before:.3f} -> {v.after:.3f}, Δ {v.delta:+.3f} [")
    assert f"] at 90%, n={v.n}: better" in v.reason and v.n == 6 and v.passes == 3
    assert v.low is not None and v.high is not None and v.low < v.delta < v.high < 0


def test_a_verdict_recorded_before_the_interval_rule_still_reads():
    from skilltui.model import events as ev
    from skilltui.model.parse import parse_event
    from skilltui.model.review import GateVerdict
    from skilltui.runner.messages import parse_for_app

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
    gate = parse_event(old)
    assert isinstance(gate, ev.GateChecked) and gate.n == 0 and gate.delta is None and gate.low is None
    val = parse_event(
        {"kind": "val_loss", "time": old["time"], "epoch": 0, "step": 0, "work": "held", "loss": 0.4, "scores": {}}
    )
    assert isinstance(val, ev.ValLoss) and val.samples == 1 and val.spread is None
    fields = {k: v for k, v in old.items() if k not in ("kind", "time", "epoch", "step", "group", "attempt")}
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


def test_one_pass_borrows_the_parents_luck_and_a_small_effect_still_asks_for_more():
    # The parent was measured three times: each episode moved by about 0.02 between passes.
    parent = units({e: [0.5, 0.52, 0.48] for e in range(1, 13)})
    big = units({e: [0.2] for e in range(1, 13)})
    small = units({e: [0.49] for e in range(1, 13)})
    clear = judge_pairs(parent, big, confidence=0.9, passes_left=True)
    assert clear.verdict.advice == "keep" and not clear.more and clear.verdict.passes == 1
    assert "(spread of the parent's passes)" in clear.verdict.reason and clear.paired is not None
    assert clear.paired.borrowed
    unclear = judge_pairs(parent, small, confidence=0.9, passes_left=True)
    assert unclear.more and unclear.verdict.advice == "rollback"
    # A parent whose passes never moved says nothing about a writer that may vary.
    still = units({e: [0.5, 0.5] for e in range(1, 13)})
    assert judge_pairs(still, big, confidence=0.9, passes_left=True).more
