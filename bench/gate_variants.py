"""Rules the power bench weighs against the gate's own: the rule before issue 49, and a sign-flip test.

- `before()`: the engine's rule as it was at commit d2fe112 (one pass-to-pass spread pooled
  over the works and trees, `--gate-max-repeats 3`), read from git and run as it was, so the
  bench compares the two rules on the same draws without a copy of either.
- `signflip`: a cluster-level randomization test that needs no spread at all: per work and
  pass k, the candidate's pass mean minus the parent's pass k mean is one paired cluster;
  under a null update each is symmetric about zero, so the exact one-sided p is the share
  of the 2^n sign flips whose mean is at least as low as the one seen. It is kept at each
  look's Pocock level, like the gate's t.
"""

from __future__ import annotations

import contextlib
import itertools
import subprocess
import sys
import types
from dataclasses import replace
from pathlib import Path

from skilltui.engine.validation import gate
from skilltui.engine.validation.gate import Rule, Verdict, judge
from skilltui.engine.validation.stats import Clusters

BEFORE = "d2fe112"  # the tree before issue 49 and issue 51's item 5
ROOT = Path(__file__).resolve().parents[1]


def _old_stats() -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{BEFORE}:skilltui/engine/validation/stats.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("stats_before_issue_49")
    sys.modules[module.__name__] = module
    exec(compile(source, f"{BEFORE}:stats.py", "exec"), module.__dict__)  # noqa: S102 - the project's own file
    return module


@contextlib.contextmanager
def before():
    """While inside, `gate.judge` computes its interval with the arithmetic of commit `BEFORE`."""
    old = _old_stats()
    saved = gate.paired_delta
    gate.paired_delta = old.paired_delta
    try:
        yield
    finally:
        gate.paired_delta = saved


def _means(clusters: Clusters) -> dict[tuple[str, int], float]:
    return {k: sum(v) / len(v) for k, v in clusters.items() if v}


def signflip_p(diffs: list[float]) -> float:
    """The exact one-sided p of a mean this low under sign flips (every one of the 2^n)."""
    seen = sum(diffs)
    low = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        low += sum(s * d for s, d in zip(signs, diffs, strict=True)) <= seen + 1e-12
    return low / 2 ** len(diffs)


def signflip(parent: Clusters, candidate: Clusters, rule: Rule, *, passes_left: bool, history=None, missing=()):
    """The gate's loop with the sign-flip test deciding: keep when p <= each look's one-sided level."""
    found = judge(parent, candidate, rule, passes_left=passes_left, history=history, missing=missing)
    before, after = _means(parent), _means(candidate)
    diffs = [after[k] - before[k] for k in sorted(set(before) & set(after))]
    if not diffs:
        return found
    level = (1 - rule.nominal) / 2
    if signflip_p(diffs) <= level:
        advice, more = "keep", None
    elif signflip_p([-d for d in diffs]) <= level:
        advice, more = "rollback", None
    else:
        advice, more = "rollback", ("both" if passes_left else None)
    return Verdict(replace(found.verdict, advice=advice), more, found.paired)
