"""The gate's statistics: a paired delta whose unit of evidence is a writing call.

Validation decides what the notes keep, so its interval has to mean what it says. One
forward call writes every validation episode of a work in a pass, and a real writer has
good and bad calls (it skims the notes, writes every episode a little shorter): the
episodes of one call move together. Counting episodes as independent replicates makes the
interval far too narrow. Here a *cluster* is one (work, pass): the per-episode losses one
call produced, and what replicates is the cluster's mean:

- per work, the delta is the mean of the candidate's pass means minus the mean of the
  parent's (the same episodes on both sides, so an episode's own difficulty cancels);
- each work's pass-to-pass spread is the pooled variance of its pass means about their
  (tree, work) mean: this comparison's own passes, plus every other tree the run measured
  with two or more passes (`Spread`, pooled with its degrees of freedom), so a comparison
  with one pass a side still has a spread that does not rest on two passes agreeing by
  chance; per work, so a noisier work is not averaged with a calmer one;
- the interval is Student's t on the Welch-Satterthwaite degrees of freedom of that sum, at
  a confidence the caller may raise per look (`pocock`) so that a sequential rule spends its
  error rate once.

Nothing here reads files or runs a model: tests and the bench check it as a procedure.
`scipy.special` gives the quantiles (the very functions `scipy.stats`' t and normal call, at a
third of its import: a trainer process imports it for its first test point or gate), and
`scipy.stats` the binomial intervals and the sequential boundaries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

EPSILON = 1e-9  # losses are stored to 4 places: a variance below this is no spread at all

Cluster = tuple[str, int]  # (validation work, pass number): one writing call
Clusters = Mapping[Cluster, Sequence[float]]  # that call's per-episode losses, in episode order


@dataclass(frozen=True)
class Spread:
    """A writer's pass-to-pass spread: squares of pass means about their (tree, work) mean, and their df."""

    squares: float = 0.0
    df: int = 0

    def __add__(self, other: Spread) -> Spread:
        return Spread(self.squares + other.squares, self.df + other.df)

    @property
    def variance(self) -> float | None:
        """The variance of one pass's mean over a work's episodes; None without a degree of freedom."""
        return self.squares / self.df if self.df > 0 else None


def _means(clusters: Clusters) -> dict[str, list[float]]:
    """Work -> the mean of each of its passes, in pass order."""
    found: dict[str, list[tuple[int, float]]] = {}
    for (work, k), losses in clusters.items():
        if losses:
            found.setdefault(work, []).append((k, math.fsum(losses) / len(losses)))
    return {w: [m for _, m in sorted(v)] for w, v in found.items()}


def spreads_of(clusters: Clusters) -> dict[str, Spread]:
    """Work -> the spread one tree's passes of it show: its pass means about their mean (df = passes - 1)."""
    found: dict[str, Spread] = {}
    for work, means in _means(clusters).items():
        if len(means) > 1:
            centre = math.fsum(means) / len(means)
            found[work] = Spread(math.fsum((m - centre) ** 2 for m in means), len(means) - 1)
    return found


def spread_of(clusters: Clusters) -> Spread:
    """The spread one tree's passes show, pooled over its works."""
    return sum(spreads_of(clusters).values(), Spread())


History = Mapping[str, Spread] | Spread  # per validation work; one Spread stands for every work's


@dataclass(frozen=True)
class PairedDelta:
    """A candidate against its parent: mean delta (negative is better), its interval and what it rests on."""

    delta: float
    low: float | None  # None: no spread measured (one pass a side and no history)
    high: float | None
    clusters: int  # writing calls on both sides
    episodes: int  # per-episode losses on both sides
    df: int  # of the spread the interval rests on, `borrowed` of them from other trees
    confidence: float  # the interval's two-sided confidence
    before: float = 0.0  # the parent's mean over the works both sides have
    after: float = 0.0
    borrowed: int = 0
    se: float | None = None  # the standard error of `delta`

    @property
    def measured(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def text(self) -> str:
        """`Δ -0.041 [-0.060, -0.022] at 90%`, or the mean delta alone when no spread was measured."""
        if self.low is None or self.high is None:
            return f"Δ {self.delta:+.3f} [spread not measured]"
        return f"Δ {self.delta:+.3f} [{self.low:+.3f}, {self.high:+.3f}] at {_pct(self.confidence)}"

    @property
    def rests_on(self) -> str:
        """What the interval rests on, for the verdict's reason."""
        calls = f"{self.episodes} episodes"
        if self.df == 0:
            return f"{calls}, a deterministic writer" if self.measured else f"{calls}, no call-to-call spread yet"
        own = self.df - self.borrowed
        history = f" + {self.borrowed} from earlier trees" if self.borrowed else ""
        return f"{calls}, call-to-call spread on df {own}{history}"


def _pct(confidence: float) -> str:
    text = f"{100 * confidence:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"


def paired_delta(
    parent: Clusters,
    candidate: Clusters,
    confidence: float,
    *,
    history: History | None = None,
    deterministic: bool = False,
) -> PairedDelta | None:
    """The candidate's mean delta over the works both sides measured, with a cluster-robust interval.

    Each work weighs by its episodes and has its own pass-to-pass spread: its passes here and
    `history`'s for it (other trees of the run). A writer that says it is deterministic has
    no spread: its interval is the point. None when no work has passes on both sides.
    """
    before_m, after_m = _means(parent), _means(candidate)
    works = sorted(set(before_m) & set(after_m))
    if not works:
        return None
    size = {w: _episodes(parent, candidate, w) for w in works}
    total = sum(size.values())
    weight = {w: size[w] / total for w in works}
    before = math.fsum(weight[w] * math.fsum(before_m[w]) / len(before_m[w]) for w in works)
    after = math.fsum(weight[w] * math.fsum(after_m[w]) / len(after_m[w]) for w in works)
    delta = after - before
    mine, theirs = spreads_of(parent), spreads_of(candidate)
    own = {w: mine.get(w, Spread()) + theirs.get(w, Spread()) for w in works}
    past = {w: history if isinstance(history, Spread) else (history or {}).get(w, Spread()) for w in works}
    spread = {w: own[w] + past[w] for w in works}
    borrowed = sum(past.values(), Spread()) if not isinstance(history, Spread) else history
    n_clusters = sum(len(before_m[w]) + len(after_m[w]) for w in works)
    n_episodes = sum(size[w] * (len(before_m[w]) + len(after_m[w])) for w in works)
    df = sum(x.df for x in own.values()) + borrowed.df

    def paired(low: float | None, high: float | None, df: int, se: float | None) -> PairedDelta:
        return PairedDelta(
            delta,
            low,
            high,
            n_clusters,
            n_episodes,
            df,
            confidence,
            before=before,
            after=after,
            borrowed=borrowed.df,
            se=se,
        )

    if deterministic and df == 0:
        return paired(delta, delta, 0, se=0.0)
    if any(x.variance is None for x in spread.values()):
        return paired(None, None, 0, se=None)
    # Each work's own spread (a noisier work is not averaged away), its delta's variance the
    # sum of its sides' means of passes; the df of the sum by Welch-Satterthwaite.
    parts = [weight[w] ** 2 * (spread[w].variance or 0.0) * (1 / len(before_m[w]) + 1 / len(after_m[w])) for w in works]
    variance = math.fsum(parts)
    se = math.sqrt(variance)
    effective = welch_df([(a, spread[w].df) for a, w in zip(parts, works, strict=True)], fallback=df)
    spread_seen = any((x.variance or 0.0) > EPSILON for x in spread.values())
    half = t_quantile((1 + confidence) / 2, max(effective, 1.0)) * se if spread_seen else 0.0
    return paired(delta - half, delta + half, df, se=se)


def _episodes(parent: Clusters, candidate: Clusters, work: str) -> int:
    """The episodes a work's calls wrote; both sides must have written the same ones to be paired."""
    counts = {len(v) for k, v in (*parent.items(), *candidate.items()) if k[0] == work and v}
    if len(counts) != 1:
        raise ValueError(f"validation work {work}: passes of different episode counts {sorted(counts)} cannot pair")
    return counts.pop()


# -- quantiles, boundaries, intervals -------------------------------------------------------


def _stats() -> ModuleType:
    """scipy.stats, imported on first use: seconds of start-up a deterministic writer never needs."""
    from scipy import stats

    return stats


def _special() -> ModuleType:
    """scipy.special, imported on first use: `scipy.stats.t` and `norm` compute with its functions."""
    from scipy import special

    return special


def t_quantile(p: float, df: float) -> float:
    """The t value below which a share `p` of Student's t with `df` lies."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be strictly between 0 and 1")
    if df < 1:
        raise ValueError("df must be at least 1")
    return float(_special().stdtrit(df, p))  # what scipy.stats.t.ppf(p, df) computes


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df`."""
    if df < 1:
        raise ValueError("df must be at least 1")
    return float(_special().stdtr(df, t))  # scipy.stats.t.cdf(t, df)


def normal_quantile(p: float) -> float:
    return float(_special().ndtri(p))  # scipy.stats.norm.ppf(p)


@lru_cache(maxsize=64)
def pocock(confidence: float, looks: int) -> float:
    """The two-sided confidence each of `looks` equally spaced looks uses, so the whole rule has `confidence`.

    A one-sided decision (keep when the upper end is below zero) at every look: Pocock's
    constant boundary c with P(max_k Z_k > c) = (1 - confidence) / 2 for the Brownian
    z-statistics of equal information increments (corr(Z_j, Z_k) = sqrt(j / k)).
    """
    if looks < 1:
        raise ValueError("looks must be at least 1")
    alpha = (1 - confidence) / 2
    if looks == 1:
        return confidence

    def excess(c: float) -> float:
        return _crossing(c, looks) - alpha

    from scipy import optimize

    c = optimize.brentq(excess, normal_quantile(1 - alpha), normal_quantile(1 - alpha / looks), xtol=1e-6)
    return 1 - 2 * float(_stats().norm.sf(c))


def _crossing(c: float, looks: int, step: float = 0.01) -> float:
    """P(S_k > c sqrt(k) for some k <= looks), S a sum of standard normal increments.

    The density of S over a grid is carried look to look, convolved with one increment
    and cut at the boundary (Armitage, McPherson & Rowe's recursion): deterministic, and
    exact to the grid's accuracy, unlike a randomised multivariate normal integral.
    """
    import numpy as np

    stats = _stats()
    grid = np.arange(-12 * math.sqrt(looks), c * math.sqrt(looks) + step, step)
    kernel_x = np.arange(-8, 8 + step, step)
    kernel = stats.norm.pdf(kernel_x) * step
    density = stats.norm.pdf(grid) * step
    density[grid > c] = 0.0
    for k in range(2, looks + 1):
        density = np.convolve(density, kernel, mode="same")  # the kernel is odd-length, centred on 0
        density[grid > c * math.sqrt(k)] = 0.0
    return 1.0 - float(density.sum())


def binomial_interval(hits: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval on a rate seen `hits` times in `trials`."""
    if trials <= 0:
        return (0.0, 1.0)
    ci = _stats().binomtest(hits, trials).proportion_ci(confidence_level=confidence, method="exact")
    return (float(ci.low), float(ci.high))


def across_works(spreads: dict[str, Spread]) -> tuple[float, float] | None:
    """One pass's sd and its df for a mean over works each with its own spread: the works' mean
    variance, on the Welch-Satterthwaite df of their sum (None when no work has a spread).

    A pooled spread weighs each work by its df, so a noisy work measured less often would be
    diluted by a calm one measured often, and the set would look able to see smaller effects
    than it can; this is the spread `paired_delta`'s interval uses, with the works weighted alike.
    """
    found = [(v, x.df) for x in spreads.values() if (v := x.variance) is not None]
    if not found:
        return None
    total = math.fsum(v for v, _ in found)
    return math.sqrt(total / len(found)), welch_df(found, fallback=sum(df for _, df in found))


def welch_df(parts: list[tuple[float, int]], fallback: float) -> float:
    """The Welch-Satterthwaite degrees of freedom of a sum of variances, each with its own df.

    Fewer than the df added up when one part dominates; `fallback` when every part is zero.
    """
    total = math.fsum(v for v, _ in parts)
    tail = math.fsum(v * v / df for v, df in parts)
    return total * total / tail if tail > 0 else float(fallback)


def detectable(pass_sd: float, works: int, passes: int, confidence: float, df: float, power: float = 0.8) -> float:
    """The smallest true improvement the gate keeps with `power` at `passes` a side (one-sided t at `confidence`)."""
    se = pass_sd * math.sqrt(2 / passes / max(works, 1))
    return (t_quantile((1 + confidence) / 2, max(df, 1)) + normal_quantile(power)) * se
