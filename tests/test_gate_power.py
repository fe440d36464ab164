"""The gate's power, rule by rule, on cases whose answer is known.

The rates (power, calls per decision, null keeps) are measured by bench/bench_gate_power.py
and printed in docs/gate-statistics.md; these tests pin the behaviour that produces them:
each validation work's own spread with the df of their sum, the futility stop that spends
passes where they decide, and the estimate's statement of what the set can detect.
"""

from __future__ import annotations

import math

import pytest
from scipy import stats

from skilltui.engine.validation.gate import Rule, judge
from skilltui.engine.validation.stats import Spread, paired_delta
from skilltui.estimate.power import gate_power
from tests.support.validation import events, held_out_work, train_with


def one_pass(**works: list[float]) -> dict[tuple[str, int], list[float]]:
    return {(work, 1): losses for work, losses in works.items()}


def test_each_validation_work_keeps_its_own_spread_and_the_df_of_their_sum():
    parent = one_pass(calm=[0.50, 0.50], noisy=[0.40, 0.40])
    candidate = one_pass(calm=[0.48, 0.48], noisy=[0.36, 0.36])
    history = {"calm": Spread(0.0001 * 8, 8), "noisy": Spread(0.0009 * 8, 8)}
    p = paired_delta(parent, candidate, 0.9, history=history)
    # Equal episodes, so each work weighs 1/2; one pass a side: 1/1 + 1/1.
    parts = [0.25 * 0.0001 * 2, 0.25 * 0.0009 * 2]
    se = math.sqrt(sum(parts))
    df = sum(parts) ** 2 / sum(a * a / 8 for a in parts)  # Welch-Satterthwaite: about 9.8, not 16
    assert p is not None and p.delta == pytest.approx(-0.03)
    assert p.high == pytest.approx(-0.03 + stats.t.ppf(0.95, df) * se)
    assert p.low == pytest.approx(-0.03 - stats.t.ppf(0.95, df) * se)
    # The same squares pooled over both works would claim df 16: a narrower, overconfident interval.
    pooled = paired_delta(parent, candidate, 0.9, history=Spread(0.0010 * 8, 16))
    assert pooled is not None and pooled.high is not None and p.high > pooled.high


def test_a_work_with_no_spread_of_its_own_decides_nothing_even_when_another_has_one():
    parent = one_pass(calm=[0.50, 0.50], noisy=[0.40, 0.40])
    candidate = one_pass(calm=[0.30, 0.30], noisy=[0.20, 0.20])
    p = paired_delta(parent, candidate, 0.9, history={"calm": Spread(0.0001 * 8, 8)})
    assert p is not None and p.low is None and p.high is None  # the noisy work's luck is unknown


def two_passes(first: float, second: float) -> dict[tuple[str, int], list[float]]:
    return {("held", 1): [first, first], ("held", 2): [second, second]}


def test_an_update_that_shows_no_improvement_stops_before_the_last_look():
    history = Spread(0.0004 * 10, 10)
    parent, flat = two_passes(0.40, 0.42), two_passes(0.41, 0.42)  # delta +0.005: not better at all
    found = judge(parent, flat, Rule(0.9, looks=3), passes_left=True, history=history)
    assert found.verdict.advice == "rollback" and found.more is None
    assert found.verdict.reason.endswith(
        "not better: stopped early (it showed no improvement; more passes seldom would)"
    )
    # A little better but unclear: one more pass each side, as before.
    hopeful = two_passes(0.39, 0.40)
    found = judge(parent, hopeful, Rule(0.9, looks=3), passes_left=True, history=history)
    assert found.verdict.advice == "rollback" and found.more == "both"
    # Without the stop (futility None) the flat one asks for more passes too.
    found = judge(parent, flat, Rule(0.9, looks=3, futility=None), passes_left=True, history=history)
    assert found.more == "both"


def test_a_consolidation_is_not_stopped_for_showing_no_improvement():
    # Its question is "no worse than the margin", so a delta of zero is what it hopes for.
    history = Spread(0.0004 * 10, 10)
    parent, merged = two_passes(0.40, 0.42), two_passes(0.41, 0.42)
    found = judge(parent, merged, Rule(0.9, looks=3, margin=0.01), passes_left=True, history=history)
    assert found.more == "both" and "stopped early" not in found.verdict.reason


def test_the_estimate_of_what_a_set_detects_has_the_known_answer():
    nominal = Rule(0.9, looks=3).nominal
    z = stats.norm.ppf(1 - (1 - nominal) / 2) + stats.norm.ppf(0.8)
    # No call-to-call part: four times the episodes or the works halve it.
    plain = gate_power(2, 3, 3, nominal, episode_sd=0.06, call_sd=0.0)
    assert plain.smallest == pytest.approx(z * math.sqrt(2 * 0.06**2 / 3 / 3 / 2), rel=1e-3)
    assert (plain.works_for_half, plain.episodes_for_half) == (8, 12)
    # A call shift as large as the episodes' part: halving by episodes alone is impossible.
    shocked = gate_power(1, 2, 3, nominal, episode_sd=0.05, call_sd=0.05)
    assert shocked.episodes_for_half is None and shocked.works_for_half == 4
    assert "more episodes alone cannot" in shocked.text and f"{shocked.smallest:.3f}" in shocked.text


def test_a_gated_run_on_a_writer_that_varies_says_what_its_set_can_detect_before_the_first_call(tmp_path, make_work):
    from tests.support.scripted import ScriptedBackend

    train = make_work("train", 2)
    val = held_out_work(tmp_path / "works")
    backend = ScriptedBackend(script=[("add", "scene")], noise=0.15)
    argv = ["--steps", "1", "--episodes-per-step", "2", "--gate", "--offline-noise", "0.15"]
    assert train_with(backend, tmp_path / "runs", [train], [val], *argv) == 0
    recorded = events(tmp_path / "runs")
    said = [i for i, e in enumerate(recorded) if e["kind"] == "warning" and "the gate can detect" in e["message"]]
    first_call = next(i for i, e in enumerate(recorded) if e["kind"] == "call")
    assert len(said) == 1 and said[0] < first_call
    expected = gate_power(1, 2, 5, Rule(0.9, looks=5).nominal).text  # the shipped --gate-max-repeats 5
    assert recorded[said[0]]["message"] == expected


def test_a_gated_run_started_when_the_default_was_three_passes_resumes_with_three(tmp_path, make_work):
    # Runs recorded before the default became 5 hold gate_max_repeats 3 in their settings (their
    # id is the settings' digest): the same command, without the flag, must find and resume them.
    from skilltui.commands import training
    from skilltui.engine.opening import open_run

    train = make_work("train", 2)
    val = held_out_work(tmp_path / "works")
    runs = tmp_path / "runs"
    argv = ["train", "--auto", "--work", str(train), "--val-work", str(val), "--gate", "--steps", "1"]
    argv += ["--runs-dir", str(runs), "--no-consolidate", "--offline-noise", "0.15"]

    def settings(*extra: str):
        from skilltui import cli

        return training.settings_from(cli.build_parser().parse_args(argv + list(extra)))

    for given in ([], ["--run-id", "named"]):
        old = settings(*given, "--gate-max-repeats", "3")  # what the default made such a run record
        opened = open_run(old)
        opened.lock.release()
        again = open_run(settings(*given))
        again.lock.release()
        assert again.run.root == opened.run.root and again.resumed
        assert again.settings.max_repeats == 3 and again.config["gate_max_repeats"] == 3
    fresh = open_run(settings("--run-id", "new"))
    fresh.lock.release()
    assert fresh.settings.max_repeats == 5 and fresh.config["gate_max_repeats"] == 5


def test_a_keep_waits_for_the_parents_second_pass_before_the_last_look():
    # One call that skimmed the notes on the parent's only pass makes any candidate look better,
    # and one pass shows no spread of its own: a clear-looking keep asks for the parent's second.
    history = Spread(0.0001 * 10, 10)
    parent, candidate = calls_of([0.70]), calls_of([0.40])
    found = judge(parent, candidate, Rule(0.9, looks=5), passes_left=True, history=history)
    assert found.verdict.advice == "rollback" and found.more == "parent"
    assert found.verdict.reason.endswith("unclear: the parent rests on 1 pass")
    # Its second pass agrees: kept. At the last look there is no second pass to wait for.
    found = judge(calls_of([0.70, 0.71]), candidate, Rule(0.9, looks=5), passes_left=True, history=history)
    assert found.verdict.advice == "keep"
    last = judge(parent, candidate, Rule(0.9, looks=5), passes_left=False, history=history)
    assert last.verdict.advice == "keep"


def calls_of(means: list[float]) -> dict[tuple[str, int], list[float]]:
    return {("held", k): [m, m] for k, m in enumerate(means, start=1)}
