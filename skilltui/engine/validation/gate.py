"""The gate's arithmetic: is a candidate's validation better than its parent's, or was it luck?

A writer that never writes the same script twice makes the validation loss of the same
notes vary from pass to pass. So a tree's figure is not one number but samples: for every
validation unit (a validation work's episode) one loss per pass over the validation set.
The gate compares a candidate with its parent unit by unit and pass by pass, the *paired
deltas* `candidate - parent` over units x passes, and keeps the candidate only when the
upper end of a two-sided confidence interval on their mean is below zero.

The spread that makes an interval wide is the writer's luck: how much the same unit moves
between passes of the same notes. It is estimated within each unit (a unit that gains 0.3
everywhere and one that gains 0.1 are different units, not noise), pooled over the units,
with `units x (passes - 1)` degrees of freedom, and the interval is Student's t around the
mean delta. Hence:

- one pass per side measures no spread. A writer that says it is deterministic (the offline
  backend without `--offline-noise`) has none, so one pass is exact and the interval is the
  point. For any other writer, the spread of the parent's own passes stands in (the same
  writer's luck on nearly the same notes), so an effect far beyond it is decided at one pass
  of the candidate; a parent with one pass has none, so the parent gets a second first
  (engine/validation/validator.py), then both sides one more while it is still unclear;
- zero spread makes the interval the point: a strict improvement clears, a tie (mean delta
  zero) is rolled back;
- an interval that straddles zero asks for more passes (`Verdict.more`), up to the caller's
  limit; what is still unclear then is rolled back.

Nothing here runs a model: `judge_pairs` takes the samples and returns a `GateVerdict`, so it
can be checked on cases where the right answer is known, and a caller that ranks several
candidates sorts their verdicts by `delta` (tests/test_gate_stats.py).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...model.review import GateVerdict

# Losses are stored to 4 places, so a difference below this is a rounding artefact, not a change.
EPSILON = 1e-9

Unit = tuple[str, int]  # (validation work, episode)
Samples = Mapping[Unit, Sequence[float]]  # one loss per pass, in the order the passes ran


def t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with integer `df`: the exact finite series (Abramowitz & Stegun 26.7.3-4)."""
    if df < 1:
        raise ValueError("df must be at least 1")
    theta = math.atan(abs(t) / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2 == 1:
        total, term = 0.0, math.cos(theta)
        for k in range(1, (df - 1) // 2 + 1):
            if k > 1:
                term *= c2 * (2 * k - 2) / (2 * k - 1)
            total += term
        inside = (2 / math.pi) * (theta + s * total) if df > 1 else 2 * theta / math.pi
    else:
        total, term = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        inside = s * total
    half = inside / 2
    return 0.5 + half if t >= 0 else 0.5 - half


def t_quantile(p: float, df: int) -> float:
    """The t value below which a share `p` of Student's t with `df` lies (bisection on `t_cdf`)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be strictly between 0 and 1")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12:
            break
    return (low + high) / 2


@dataclass(frozen=True)
class Paired:
    """The paired deltas of one comparison: their mean, spread and interval."""

    n: int  # deltas: units x passes
    units: int
    passes: int
    before: float  # the parent's mean over the same units and passes
    after: float
    delta: float
    low: float | None  # None when the spread could not be measured
    high: float | None
    borrowed: bool = False  # one pass of the candidate: the spread is its parent's, from the parent's passes

    @property
    def measured(self) -> bool:
        return self.low is not None and self.high is not None


def paired(parent: Samples, candidate: Samples, confidence: float, *, deterministic: bool = False) -> Paired | None:
    """Pair the two sides unit by unit over the passes both have; None when no unit has both.

    With one pass of the candidate the comparison measures no luck of its own. When the
    parent has passes of its own, their spread stands in: the same writer on nearly the
    same notes varies about as much, so a delta's variance is twice a pass's. An effect far
    beyond that luck is then decided without paying for a candidate's second pass.
    """
    units = sorted(u for u in candidate if u in parent and candidate[u] and parent[u])
    if not units:
        return None
    passes = min(min(len(candidate[u]), len(parent[u])) for u in units)
    deltas = {u: [candidate[u][r] - parent[u][r] for r in range(passes)] for u in units}
    n = len(units) * passes
    before = sum(parent[u][r] for u in units for r in range(passes)) / n
    after = sum(candidate[u][r] for u in units for r in range(passes)) / n
    delta = after - before
    # The writer's luck: how the same unit's delta moves between passes, pooled over units.
    squares = sum((d - sum(ds) / passes) ** 2 for ds in deltas.values() for d in ds)
    df = len(units) * (passes - 1)
    if df > 0:
        sd = math.sqrt(squares / df)
        borrowed = False
    elif deterministic:
        return Paired(n, len(units), passes, before, after, delta, delta, delta)
    else:
        own = {u: parent[u] for u in units}
        df = sum(len(v) - 1 for v in own.values())
        luck = sum((x - sum(v) / len(v)) ** 2 for v in own.values() for x in v)
        if df == 0 or luck <= EPSILON:
            # No luck measured (or none at all, which a writer that may vary cannot show): unknown.
            return Paired(n, len(units), passes, before, after, delta, None, None)
        sd, borrowed = math.sqrt(2 * luck / df), True
    half = t_quantile((1 + confidence) / 2, df) * sd / math.sqrt(n) if sd > EPSILON else 0.0
    return Paired(n, len(units), passes, before, after, delta, delta - half, delta + half, borrowed)


def interval_text(p: Paired, confidence: float) -> str:
    """`Δ -0.041 [-0.060, -0.022] at 90%, n=6`, or the mean delta alone when no spread was measured."""
    if not p.measured:
        return f"Δ {p.delta:+.3f} [spread not measured: one pass each], n={p.n}"
    assert p.low is not None and p.high is not None
    spread = " (spread of the parent's passes)" if p.borrowed else ""
    return f"Δ {p.delta:+.3f} [{p.low:+.3f}, {p.high:+.3f}] at {confidence:.0%}{spread}, n={p.n}"


@dataclass(frozen=True)
class Verdict:
    """The gate's finding on one comparison, and whether more passes could still change it."""

    verdict: GateVerdict
    more: bool  # the interval straddles zero (or is unmeasured) and more passes are allowed
    paired: Paired | None = None


def judge_pairs(
    parent: Samples,
    candidate: Samples,
    *,
    confidence: float,
    passes_left: bool,
    deterministic: bool = False,
    total_works: int = 0,
    works: int = 0,
    no_worse: bool = False,
) -> Verdict:
    """Keep only when the interval's upper end is below zero; say why otherwise (worse, tie, unclear).

    With `no_worse` (a consolidation, whose aim is a smaller pool, not a lower loss) the same
    interval decides the other question: roll back only when it shows validation worse (its
    lower end above zero); a tie, or an interval that still straddles zero once the passes
    allowed are spent, is kept. Without any spread measured, only a mean no higher is kept.
    """
    p = paired(parent, candidate, confidence, deterministic=deterministic)
    if p is None:
        none = GateVerdict(None, None, 0, 0.0, "none", "gate: validation failed; no verdict", confidence=confidence)
        return Verdict(none, False)
    head = f"gate: val {p.before:.3f} -> {p.after:.3f}, {interval_text(p, confidence)}"
    if works and total_works and works < total_works:
        head += f" (over {works} of {total_works} validation works)"
    if p.measured and p.high is not None and p.high < -EPSILON:
        advice, why, more = "keep", "better", False
    elif p.measured and p.low is not None and p.low > EPSILON:
        advice, why, more = "rollback", "worse", False
    elif p.measured and p.high is not None and p.low is not None and p.high - p.low <= EPSILON:
        # The point is zero: nothing gained, and for a consolidation nothing lost.
        advice, why = ("keep", "tie, no worse: kept") if no_worse else ("rollback", "tie, rolled back")
        more = False
    else:
        more = passes_left
        advice = "rollback"
        why = "unclear after the passes allowed, rolled back" if p.measured else "unclear: no spread measured"
        if no_worse and not more and (p.measured or p.delta <= EPSILON):
            advice, why = "keep", "not shown worse after the passes allowed, kept"
    verdict = GateVerdict(
        before=round(p.before, 4),
        after=round(p.after, 4),
        works=works or len({u[0] for u in candidate}),
        tolerance=0.0,
        advice=advice,  # type: ignore[arg-type]
        reason=f"{head}: {why}",
        n=p.n,
        delta=round(p.delta, 4),
        low=None if p.low is None else round(p.low, 4),
        high=None if p.high is None else round(p.high, 4),
        confidence=confidence,
        passes=p.passes,
    )
    return Verdict(verdict, more, p)
