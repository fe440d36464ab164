"""The gate's rule before issue 32, kept only as bench/bench_gate.py's baseline.

Episodes x passes counted as independent deltas (the spread of one episode's delta from
pass to pass, pooled over episodes), the parent's own passes standing in when the candidate
has one; every look at the full `--gate-confidence`, every candidate of a round too; a
consolidation kept unless shown worse. Same signature as `gate.judge`, so the simulation
runs it in the same loop.
"""

from __future__ import annotations

import math

from skilltui.engine.validation.gate import Rule, Verdict
from skilltui.engine.validation.stats import EPSILON, Clusters, Spread, t_quantile
from skilltui.model.review import GateVerdict


def _units(clusters: Clusters) -> dict[tuple[str, int], list[float]]:
    """(work, episode) -> one loss per pass, the old gate's samples."""
    found: dict[tuple[str, int], list[float]] = {}
    for (work, _), losses in sorted(clusters.items()):
        for e, value in enumerate(losses, start=1):
            found.setdefault((work, e), []).append(value)
    return found


def old_judge(parent: Clusters, candidate: Clusters, rule: Rule, *, passes_left: bool, history: Spread | None = None):
    before_u, after_u = _units(parent), _units(candidate)
    units = sorted(u for u in after_u if u in before_u)
    passes = min(min(len(after_u[u]), len(before_u[u])) for u in units)
    deltas = {u: [after_u[u][r] - before_u[u][r] for r in range(passes)] for u in units}
    n = len(units) * passes
    delta = sum(d for ds in deltas.values() for d in ds) / n
    squares = sum((d - sum(ds) / passes) ** 2 for ds in deltas.values() for d in ds)
    df = len(units) * (passes - 1)
    sd: float | None
    if df > 0:
        sd = math.sqrt(squares / df)
    else:
        own = {u: before_u[u] for u in units}
        df = sum(len(v) - 1 for v in own.values())
        luck = sum((x - sum(v) / len(v)) ** 2 for v in own.values() for x in v)
        sd = math.sqrt(2 * luck / df) if df and luck > EPSILON else None
    if sd is None:
        return _verdict("rollback", "parent", delta)
    half = t_quantile((1 + rule.confidence) / 2, df) * sd / math.sqrt(n)
    low, high = delta - half, delta + half
    if rule.margin is not None:  # "not shown worse": kept unless the lower end is above zero
        if low > EPSILON:
            return _verdict("rollback", None, delta)
        return _verdict("keep" if not passes_left else "rollback", None if not passes_left else "both", delta)
    if high < -EPSILON:
        return _verdict("keep", None, delta)
    if low > EPSILON:
        return _verdict("rollback", None, delta)
    return _verdict("rollback", "both" if passes_left else None, delta)


def _verdict(advice: str, more: str | None, delta: float) -> Verdict:
    return Verdict(GateVerdict(None, None, 0, advice, "old rule", delta=delta), more)  # type: ignore[arg-type]
