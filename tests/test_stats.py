"""The gate's statistics (engine/validation/stats.py) on cases whose answer is known or published."""

from __future__ import annotations

import random

import pytest

from skilltui.engine.validation.stats import (
    Spread,
    binomial_interval,
    normal_quantile,
    paired_delta,
    pocock,
    spread_of,
    t_cdf,
    t_quantile,
)

# Student's t from the tables (NIST/SEMATECH e-Handbook 1.3.6.7.2), which the hand-written
# series of engine/validation/gate.py matched to 2e-6 before scipy replaced it.
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


def test_the_quantiles_are_scipy_stats_own_to_the_last_bit():
    """Computed with scipy.special (a lighter import), they are what scipy.stats' t and norm give: a
    recorded interval, and so a run's event log, does not change with the import."""
    from scipy import stats

    rng = random.Random(7)
    for _ in range(300):
        p, df, x = rng.uniform(0.001, 0.999), rng.choice([1, 2, 3.5, 7.25, 30, 120.5]), rng.uniform(-8, 8)
        assert t_quantile(p, df) == float(stats.t.ppf(p, df))
        assert t_cdf(x, df) == float(stats.t.cdf(x, df))
        assert normal_quantile(p) == float(stats.norm.ppf(p))


@pytest.mark.parametrize("p, df", [(0.0, 3), (1.0, 3), (0.5, 0)])
def test_quantiles_refuse_what_has_none(p, df):
    with pytest.raises(ValueError):
        t_quantile(p, df)


# Pocock's nominal two-sided levels for a two-sided 5% test (Jennison & Turnbull, table 2.1).
@pytest.mark.parametrize("looks, nominal", [(1, 0.05), (2, 0.0294), (3, 0.0221), (5, 0.0158)])
def test_the_pocock_boundary_matches_the_published_nominal_levels(looks, nominal):
    assert 1 - pocock(0.95, looks) == pytest.approx(nominal, abs=3e-4)


def test_a_delta_rests_on_pass_means_not_on_episodes():
    parent = {("a", 1): [0.5, 0.4, 0.3], ("a", 2): [0.6, 0.5, 0.4]}  # pass means 0.4, 0.5
    candidate = {("a", 1): [0.4, 0.3, 0.2], ("a", 2): [0.5, 0.4, 0.3]}  # 0.3, 0.4
    d = paired_delta(parent, candidate, 0.9)
    assert d is not None
    assert d.delta == pytest.approx(-0.1)
    # Pooled spread of pass means: two sides, each (0.05^2 + 0.05^2) on one df -> 0.005 a pass.
    assert d.df == 2 and d.clusters == 4 and d.episodes == 12
    se = (0.005 * (1 / 2 + 1 / 2)) ** 0.5
    assert d.se == pytest.approx(se)
    assert d.high == pytest.approx(-0.1 + t_quantile(0.95, 2) * se)
    assert d.text == f"Δ -0.100 [{d.low:+.3f}, {d.high:+.3f}] at 90%"
    assert d.rests_on == "12 episodes, call-to-call spread on df 2"


def test_one_pass_a_side_borrows_the_runs_history_and_says_so():
    parent, candidate = {("a", 1): [0.5, 0.5]}, {("a", 1): [0.3, 0.3]}
    alone = paired_delta(parent, candidate, 0.9)
    assert alone is not None and not alone.measured and "spread not measured" in alone.text
    history = spread_of({("a", 1): [0.5, 0.5], ("a", 2): [0.52, 0.52]}) + Spread(0.0008, 3)
    assert history.df == 4
    helped = paired_delta(parent, candidate, 0.9, history=history)
    assert helped is not None and helped.measured and helped.borrowed == 4 and helped.df == 4
    assert "+ 4 from earlier trees" in helped.rests_on
    exact = paired_delta(parent, candidate, 0.9, deterministic=True)
    assert exact is not None and exact.low == exact.high == pytest.approx(-0.2)


def test_passes_of_different_episodes_do_not_pair():
    with pytest.raises(ValueError, match="cannot pair"):
        paired_delta({("a", 1): [0.5, 0.5]}, {("a", 1): [0.3]}, 0.9)


def test_the_interval_covers_a_null_delta_as_often_as_it_says_under_call_shocks():
    """Per-episode noise sd 0.05 and a shock shared by a call of sd 0.03: counting episodes as
    replicates missed 0 in about a third of draws; counting calls keeps the stated rate."""
    rng = random.Random(11)
    trials, missed = 2000, 0
    for _ in range(trials):
        sides = []
        for _side in range(2):
            side = {}
            for k in (1, 2, 3):
                shock = rng.gauss(0, 0.03)
                side[("a", k)] = [0.4 + shock + rng.gauss(0, 0.05) for _ in range(12)]
            sides.append(side)
        d = paired_delta(sides[0], sides[1], 0.9)
        assert d is not None and d.low is not None and d.high is not None
        missed += not (d.low <= 0 <= d.high)
    low, high = binomial_interval(missed, trials)
    assert low <= 0.10 <= high or high < 0.12  # the stated 10%, within the draw's own interval


def test_binomial_intervals_are_the_exact_ones():
    low, high = binomial_interval(100, 2000)
    assert low == pytest.approx(0.04086, abs=1e-4) and high == pytest.approx(0.06048, abs=1e-4)
    assert binomial_interval(0, 60)[0] == 0.0


def test_the_smallest_detectable_effect_is_the_one_sided_bound_plus_the_power_quantile():
    from skilltui.engine.validation.stats import detectable, normal_quantile

    se = 0.02 * (2 / 3) ** 0.5  # a pass's sd 0.02, one work, three passes a side
    expected = (t_quantile(0.95, 1000) + normal_quantile(0.8)) * se
    assert detectable(0.02, 1, 3, 0.9, 1000) == pytest.approx(expected)
    assert detectable(0.02, 4, 3, 0.9, 1000) == pytest.approx(expected / 2)  # four works halve it


def test_the_notices_spread_is_each_works_own_not_one_pooled_over_works():
    """A noisy work with few passes beside a calm one with many: pooling by df would let the calm
    one dilute it and the notice would claim the set sees smaller effects than the gate can."""
    from skilltui.engine.validation.stats import Spread, across_works, detectable

    calm, noisy = Spread(0.1, 10), Spread(0.18, 2)  # variances 0.01 and 0.09
    sd, df = across_works({"calm": calm, "noisy": noisy}) or (0.0, 0.0)
    assert sd == pytest.approx((0.05) ** 0.5)  # the works' mean variance, as the gate's delta weighs them
    assert df == pytest.approx(0.1**2 / (0.01**2 / 10 + 0.09**2 / 2))  # Welch-Satterthwaite: about 2.5
    pooled = calm + noisy  # what the notice used: 0.28 / 12
    assert pooled.variance is not None and pooled.variance**0.5 < sd / 1.4
    assert detectable(sd, 2, 5, 0.966, df) > 1.4 * detectable(pooled.variance**0.5, 2, 5, 0.966, pooled.df)
    assert across_works({"a": Spread()}) is None  # no work measured twice: nothing to say
