"""`skilltui eval`: two pools compared on works, paired, with an interval (engine/validation/evaluate.py).

Everything a person names is checked before anything is written: the pools exist and hold
notes, the works have their stories and the episodes asked for. A repeat of the same
command reads its samples back from the eval folder and makes no model call.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

from ..core.errors import UsageError
from . import command
from .settings_flags import add_setting_flags, settings_from

EVAL_SETTINGS = ("works", "backend", "model", "base_url", "runs_dir", "workers", "max_cost", "offline_noise")
EVAL_MEANS = {
    "works": "a work to write and score (repeatable)",
    "workers": "passes written at once (default {default})",
    "max_cost": "stop once this much is spent",
    "offline_noise": "the offline writer's noise",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "eval", cmd_eval)
    p.add_argument(
        "--pool",
        action="append",
        default=[],
        metavar="POOL",
        help="a run (its final pool), RUN@COMMIT, an exported skill folder or a folder of notes; give it once "
        "(A, compared with the empty pool) or twice (A, then B)",
    )
    # The settings eval shares with train, from the same declaration; what some mean here differs.
    add_setting_flags(p, EVAL_SETTINGS, about=EVAL_MEANS)
    add_eval_flags(p)
    p.add_argument(
        "--eval-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where samples are kept (default RUNS_DIR/evals): a repeat pays nothing twice",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def add_eval_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--episodes", type=int, default=2, metavar="N", help="episodes 1..N of every work (default 2)")
    p.add_argument("--repeats", type=int, default=2, metavar="R", help="passes per pool (default 2)")
    p.add_argument("--confidence", type=float, default=0.9, metavar="C", help="the interval's confidence (0.9)")


def check_counts(episodes: int, repeats: int, confidence: float, *, prefix: str = "--") -> None:
    if episodes < 1:
        raise UsageError(f"{prefix}episodes must be at least 1")
    if repeats < 1:
        raise UsageError(f"{prefix}repeats must be at least 1 (passes per pool)")
    if not (math.isfinite(confidence) and 0.5 <= confidence < 1):
        raise UsageError("--confidence must be at least 0.5 and below 1, e.g. 0.9")


def cmd_eval(args: argparse.Namespace) -> int:
    """Compare two pools on works: each writes the episodes, the engine scores them, paired.

    Pool A (and B, the empty pool unless given) write episodes 1..N of every work, pass by
    pass; the engine's loss scores them (no judge call), and the paired delta A - B with its
    interval is printed per work and overall. Samples are kept under the eval folder, so the
    same command again makes no model call, and a stopped eval resumes. A work the pool's run
    trained on or selected with is warned of: its delta is not held-out evidence.
    """
    import asyncio

    from ..agents import make_backend
    from ..engine.data.works import load_works
    from ..engine.validation.evaluate import EvalPlan, eval_text, resolve_pool, run_eval, trained_on

    if not 1 <= len(args.pool) <= 2:
        raise UsageError("give --pool A once (compared with the empty pool) or twice (--pool A --pool B)")
    check_counts(args.episodes, args.repeats, args.confidence)
    # One step of N episodes per pass, with nobody to review (eval edits no notes).
    settings = replace(settings_from(args), steps=1, episodes_per_step=args.episodes, auto=True)
    settings.check()
    a = resolve_pool(args.pool[0], args.runs_dir)
    b = resolve_pool(args.pool[1] if len(args.pool) > 1 else None, args.runs_dir)
    if a.key == b.key:
        raise UsageError("--pool A and B hold the same notes; compare two different pools")
    works = load_works(args.works)
    if len({w.name for w in works}) < len(works):
        raise UsageError("two --work folders have the same name; an eval keys works by folder name")
    for work in works:
        missing = [n for n in range(1, args.episodes + 1) if n not in work.episodes]
        if missing:
            raise UsageError(f"--work {work.root} has no episode {missing[0]}; lower --episodes or add it")
    settings = replace(settings, works=[w.root for w in works])
    for spec in args.pool:
        roles = trained_on(spec, args.runs_dir)
        for work in (w for w in works if w.name in roles):
            print(
                f"skilltui: warning: --work {work.name} is one of {spec}'s {roles[work.name]} works: its delta is "
                "not held-out evidence; give a work the run never saw (or train with --test-work) for that",
                file=sys.stderr,
            )
    backend = make_backend(
        settings.backend, settings.model, offline_noise=settings.offline_noise, base_url=settings.base_url
    )
    root = args.eval_dir or (args.runs_dir / "evals")
    plan = EvalPlan(a, b, works, args.episodes, args.repeats, args.confidence, root)
    result = asyncio.run(run_eval(plan, settings, backend))
    if args.json:
        print(json.dumps(result.to_dict(plan), indent=1))
    else:
        print(f"eval: A = {a.label}, B = {b.label}; samples in {result.folder}")
        for name, figure in result.per_work.items():
            print(f"  {name}: {eval_text(figure) if figure else 'not measured'}")
        print(f"overall: {eval_text(result.overall) if result.overall else 'not measured'}")
        print(f"model calls this time: {result.calls} (${result.cost:.2f})")
        if result.stopped:
            print(f"eval stopped: {result.stopped}; run the same command to resume")
    return 0
