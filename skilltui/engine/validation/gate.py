"""The gate's rule: is a candidate's validation better than its parent's, at a stated error rate?

A writer never writes the same script twice, so the same notes score differently from pass
to pass, and the episodes one writing call wrote move together (a call that skims the notes
writes every episode worse). The gate's arithmetic (`stats.py`) counts a writing call, one
(work, pass), as the unit of evidence. Around it this module decides, so that
`--gate-confidence C` is the confidence of the whole decision, not of one look:

- **Looks.** The sequential loop looks once per pass a side, from `--val-repeats` up to
  `--gate-max-repeats`. Each look uses Pocock's nominal level for that many looks
  (`stats.pocock`), so a null update is kept at most (1 - C) / 2 of the time however many
  passes it took.
- **Several candidates.** With K candidates of one micro-step each is tested at
  (1 - C) / (2K) (Bonferroni; for "keep at most one" Holm's first step is the same test), so
  the family keeps a null update at most (1 - C) / 2 of the time.
- **A spread to stand on.** A comparison whose own passes measure no spread borrows the
  run's history (per work, the `Spread` of every other tree measured twice or more); with neither, the
  parent gets a pass first. Before the last look a spread on fewer than `MIN_DF` degrees of
  freedom decides nothing (two passes that agreed by chance would make it tiny): more passes
  first. A writer that says it is deterministic has none: one pass is exact.
- **A parent on two passes.** Before the last look a keep waits for the parent's second pass
  (`MIN_PARENT`): one call that skimmed the notes on its only pass makes every candidate look
  better. (A kept tree, whose choosing passes are set aside, starts as a parent on as many
  fresh ones as chose it, and one more: `Validator.baseline`.)
- **Passes where they decide.** Before the last look an update whose delta shows no
  improvement at all (`FUTILITY`) is rolled back without more passes: a non-binding stop,
  so it can only lower the keep rate, and the passes go to the decisions near the boundary.
- **Partial evidence decides nothing.** A validation work that has no pass on one side (its
  pass failed, then its retry) makes the verdict "unmeasured: rolled back", naming the work.
- **Consolidation** (`margin`, `--consolidate-margin`): its aim is a smaller pool, so it is
  kept when the interval's upper end is below +margin (non-inferiority), at the same levels.

Nothing here runs a model: `judge` takes the clusters and returns a `Verdict`, so the tests
and bench/bench_gate.py simulate the whole rule thousands of times.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...model.review import GateVerdict
from .stats import EPSILON, Clusters, History, PairedDelta, paired_delta, pocock

# A spread on fewer degrees of freedom is too often tiny by chance (two passes that agreed):
# with df 1 a variance under 1/1600 of the truth is a 2% event, with df 4 under 1/16 is 0.7%.
MIN_DF = 4
# An update that has shown no improvement at all (delta >= 0) seldom crosses the boundary
# later: stop there and spend the passes on the decisions near it.
FUTILITY = 0.0
MIN_PARENT = 2


@dataclass(frozen=True)
class Rule:
    """What one verdict is tested at: the whole decision's confidence, its looks and its family."""

    confidence: float
    looks: int = 1  # passes a side it may take, counted from the first look
    family: int = 1  # candidates of the round
    margin: float | None = None  # a consolidation: keep when the upper end is below +margin
    deterministic: bool = False
    min_df: int = MIN_DF  # before the last look, a spread on fewer df asks for more passes
    # Before the last look, stop and roll back when the delta is not below -futility standard
    # errors (None: never): a non-binding futility stop, so it can only lower the keep rate.
    futility: float | None = FUTILITY
    # Before the last look, a keep needs this many of the parent's passes: one call that skimmed
    # the notes on its only pass makes every candidate look better, and one pass shows no spread.
    min_parent: int = MIN_PARENT

    @property
    def nominal(self) -> float:
        """The two-sided confidence of each look's interval."""
        return pocock(1 - (1 - self.confidence) / self.family, max(self.looks, 1))

    def describe(self) -> str:
        parts = []
        if self.looks > 1:
            parts.append(f"each of {self.looks} looks at {self.nominal:.1%}")
        if self.family > 1:
            parts.append(f"Bonferroni over {self.family} candidates")
        return ", ".join(parts)


@dataclass(frozen=True)
class Verdict:
    """The gate's finding, and what to measure next when it is still open."""

    verdict: GateVerdict
    more: str | None = None  # "both": one more pass each; "parent": the parent alone; None: decided
    paired: PairedDelta | None = None


def judge(
    parent: Clusters,
    candidate: Clusters,
    rule: Rule,
    *,
    passes_left: bool,
    history: History | None = None,
    missing: Sequence[str] = (),
) -> Verdict:
    """Keep only when the interval's upper end is below zero (below +margin for a consolidation)."""
    confidence = rule.confidence
    if missing:
        why = f"gate: unmeasured: rolled back (validation work {', '.join(sorted(missing))} failed on a retry too)"
        return Verdict(GateVerdict(None, None, 0, "rollback", why, confidence=confidence))
    p = paired_delta(parent, candidate, rule.nominal, history=history, deterministic=rule.deterministic)
    if p is None:
        none = GateVerdict(None, None, 0, "none", "gate: validation failed; no verdict", confidence=confidence)
        return Verdict(none, None)
    target = -EPSILON if rule.margin is None else rule.margin - EPSILON
    how = "; ".join(x for x in (p.rests_on, rule.describe()) if x)
    head = f"gate: val {p.before:.3f} -> {p.after:.3f}, {p.text}, n={p.clusters} calls ({how})"
    more: str | None = None
    spread = p.low is not None and p.high is not None and p.high - p.low > EPSILON
    thin = passes_left and spread and not rule.deterministic and 0 < p.df < rule.min_df
    lone = passes_left and spread and not rule.deterministic and _passes(parent) < rule.min_parent
    if thin:
        advice, why, more = "rollback", f"unclear: the spread rests on df {p.df}, fewer than {rule.min_df}", "parent"
    elif p.low is not None and p.high is not None and p.high < target and lone:
        advice, why, more = "rollback", f"unclear: the parent rests on {_passes(parent)} pass", "parent"
    elif p.low is not None and p.high is not None and p.high < target:
        advice = "keep"
        why = "better" if rule.margin is None else f"no worse than +{rule.margin:g}: kept"
    elif p.low is not None and p.low > EPSILON and rule.margin is None:
        advice, why = "rollback", "worse"
    elif p.low is not None and p.high is not None and p.high - p.low <= EPSILON:
        advice, why = "rollback", "tie, rolled back"  # zero spread: the point is the truth
    elif p.low is None:
        advice, why = "rollback", "unclear: no spread measured"
        more = "parent" if passes_left or not rule.deterministic else None
    elif rule.margin is not None and p.low > rule.margin:
        advice, why = "rollback", f"worse by more than +{rule.margin:g}"
    elif passes_left and _futile(p, rule):
        advice, why = "rollback", "not better: stopped early (it showed no improvement; more passes seldom would)"
    else:
        advice = "rollback"
        more = "both" if passes_left else None
        goal = "better" if rule.margin is None else f"within +{rule.margin:g}"
        why = f"not shown {goal} after the passes allowed, rolled back"
    verdict = GateVerdict(
        before=round(p.before, 4),
        after=round(p.after, 4),
        works=len({k[0] for k in candidate} & {k[0] for k in parent}),
        advice=advice,  # type: ignore[arg-type]
        reason=f"{head}: {why}",
        n=p.clusters,
        delta=round(p.delta, 4),
        low=None if p.low is None else round(p.low, 4),
        high=None if p.high is None else round(p.high, 4),
        confidence=confidence,
        passes=min(_passes(candidate), _passes(parent)),
        level=p.confidence,  # what low/high were computed at: each look's nominal level, not `confidence`
    )
    return Verdict(verdict, more, p)


def _futile(p: PairedDelta, rule: Rule) -> bool:
    """An update (not a consolidation) whose delta is not below -futility SEs: more passes would seldom keep it."""
    if rule.futility is None or rule.margin is not None or not p.se:
        return False
    return p.delta >= -rule.futility * p.se


def plan(found: Verdict, passes: int, parent_passes: int, max_passes: int) -> tuple[int, int] | None:
    """What to measure next after `found`: (candidate passes, parent passes), or None when it is decided.

    A parent alone gets one pass ahead when no spread was measured: the writer's luck on it
    stands in, so a clear effect is decided without paying for the candidate's second pass.
    """
    if found.more == "parent" and parent_passes <= passes:
        return passes, passes + 1
    if found.more is None or passes >= max_passes:
        return None
    return passes + 1, max(passes + 1, parent_passes)


def _passes(clusters: Clusters) -> int:
    per: dict[str, int] = {}
    for work, _ in clusters:
        per[work] = per.get(work, 0) + 1
    return min(per.values()) if per else 0
