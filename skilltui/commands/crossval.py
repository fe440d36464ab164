"""`skilltui crossval`: k-fold cross-validation over works, each fold a run tested on the works it left out.

Every fold is checked (its settings, works, stories, prompts) before anything is written, by
the same forecast `--estimate` prints, so bad input costs one line and leaves no folder. The
folds live under one crossval folder (`RUNS_DIR/<id>/fold<k>/`, with `folds.json`), so the
same command resumes all of them: a finished fold is read, never trained again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from . import command

if TYPE_CHECKING:
    from ..engine.settings import Settings
    from ..engine.validation.test_split import TestFigure

    # A fold: its name, its test works, its settings and its estimate (estimate.plan.estimate_run).
    FoldPlan = tuple[str, list[str], Settings, dict[str, Any]]


def register(sub: argparse._SubParsersAction) -> None:
    from .training import add_train_flags

    p = command(sub, "crossval", cmd_crossval)
    add_train_flags(p)
    p.add_argument("--folds", type=int, required=True, metavar="K", help="folds of the works (2 or more)")
    p.add_argument("--seed", type=int, default=0, help="the seed of the fold assignment (default 0)")
    p.add_argument(
        "--fold-correlation",
        type=float,
        metavar="RHO",
        help="the correlation between folds' test deltas that the mean's and a new work's intervals assume, "
        "at least 0 and below 1 (default Nadeau-Bengio's n_test/n_train, about 1/K). The folds share "
        "training works, the validation work, the start pool and the writer, which no fold's delta shows; "
        "if these move them together more, state more: a higher value widens both intervals",
    )
    p.add_argument("--json", action="store_true", help="print the folds and the mean as JSON at the end")


def cmd_crossval(args: argparse.Namespace) -> int:
    """Cross-validate training over works: K folds, each trained on the others and tested on itself.

    The works are dealt into K folds (a fixed assignment from --seed, printed and kept). For
    each fold a run trains on the other works with the fold as its --test-work; the folds
    train at once within --workers and share --max-cost. It reports each fold's paired test
    delta with its interval and the mean delta over folds with an interval across folds, which
    holds at its level only if the folds correlate as it assumes and names (--fold-correlation).
    The same command resumes every fold; a finished fold is never trained again. The folds
    have no review screen: every update is approved by the automatic reviewer, so --auto is
    required (as it is for `train` without a terminal); --estimate needs none.
    """
    from ..engine.data.works import load_works
    from ..engine.validation.crossval import assign_folds, check_fold_correlation
    from ..estimate.plan import estimate_run
    from ..estimate.text import estimate_lines
    from .tracking import spec_from
    from .training import default_model, settings_from
    from .unattended import require_auto

    base = settings_from(args)
    base.check()
    check_fold_correlation(args.fold_correlation)
    if not args.estimate:
        require_auto("crossval", base.auto)
    spec_from(args)  # --mlflow without the extra is refused before anything is written
    if base.test_works:
        raise UsageError("crossval chooses the test works itself (each fold in turn); drop --test-work")
    works = load_works(base.works, max_script_kb=base.max_script_kb)
    by_name = {w.name: w.root for w in works}
    folds = assign_folds(list(by_name), args.folds, args.seed)
    key = hashlib.sha256(json.dumps([sorted(by_name), args.folds, args.seed]).encode()).hexdigest()[:8]
    root = Path(base.runs_dir).expanduser() / (args.run_id or f"crossval-{key}")
    # The folds share --workers and --max-cost, train unattended, and keep their runs under one folder.
    workers = max(1, base.workers // len(folds))
    max_cost = None if base.max_cost is None else base.max_cost / len(folds)
    plans: list[FoldPlan] = []
    for k, names in enumerate(folds, 1):
        rest = [by_name[n] for n in sorted(by_name) if n not in names]
        tests = [by_name[n] for n in names]
        s = replace(
            base,
            works=rest,
            test_works=tests,
            run_id=f"fold{k}",
            runs_dir=root,
            auto=True,
            workers=workers,
            max_cost=max_cost,
        )
        plans.append((f"fold{k}", names, s, estimate_run(s, default_model(s.backend))))  # checks all, writes nothing
    _check_assignment(root, folds)
    if args.estimate:
        for name, names, _, data in plans:
            print(f"{name}: test on {', '.join(names)}")
            print("\n".join("  " + line for line in estimate_lines(data)))
        total = [d["usd"] for *_, d in plans]
        print(f"crossval: {len(plans)} folds" + (f", ${sum(total):.2f} in all" if None not in total else ""))
        return 0
    for name, names, *_ in plans:
        print(f"{name}: test on {', '.join(names)}; train on the other works")
    print(f"crossval folder {root}")
    return _train_and_report(root, plans, args)


def _check_assignment(root: Path, folds: list[list[str]]) -> None:
    kept = root / "folds.json"
    if kept.exists() and json.loads(kept.read_text(encoding="utf-8"))["folds"] != folds:
        raise UsageError(
            f"{root} was dealt other folds (see its folds.json); give the same works, --folds and --seed, "
            "or another --run-id"
        )


def _train_and_report(root: Path, plans: list[FoldPlan], args: argparse.Namespace) -> int:
    """Open every unfinished fold, train them together, then read every fold's test figure from its record."""
    from ..agents.redact import env_secrets
    from ..core.durable import write_atomic
    from ..drivers.folds import train_folds
    from ..engine.opening import AlreadyFinished, open_run
    from ..engine.validation.crossval import across_folds
    from ..engine.validation.test_split import TestFigure
    from ..model.parse import read_run
    from ..model.view import RunView
    from .run_backends import backend_for_run
    from .tracking import spec_from
    from .training import write_estimate

    if not (root / "folds.json").exists():
        root.mkdir(parents=True, exist_ok=True)
        write_atomic(root / "folds.json", json.dumps({"folds": [names for _, names, *_ in plans], "seed": args.seed}))
    tracking = spec_from(args)
    to_train, locks, trackers = [], [], []
    try:
        for name, _, s, _ in plans:
            try:
                opened = open_run(s, refuse_finished=True)
            except AlreadyFinished:
                print(f"[{name}] finished earlier: not trained again")
                continue
            locks.append(opened.lock)
            if tracking is not None:  # each fold its own MLflow run, tagged with the crossval it belongs to
                from ..tracking.live import LiveTracker, to_stderr

                trackers.append(LiveTracker(opened.run, tracking, say=to_stderr))
                trackers[-1].start()
            backend = backend_for_run(s)  # the run's backends (--role-model too) and its noise, as train makes them
            write_estimate(opened, backend)
            to_train.append((name, opened, backend))
        code = train_folds(to_train, secrets=env_secrets())[1] if to_train else 0
    finally:
        for tracker in trackers:
            tracker.close()
        for lock in locks:
            lock.release()
    rows: list[_FoldRow] = []
    for name, names, *_ in plans:
        view = RunView().fold(read_run(root / name / "events.jsonl").events)
        last = next((t for t in reversed(view.tests) if t.figure), None)
        figure = TestFigure.from_dict(last.figure) if last is not None and last.figure else None
        # A fold that did not finish tested a pool it had not finished training: shown, not averaged.
        done = view.status == "finished"
        rows.append(_FoldRow(name, names, view.status, figure, done))
    unfinished = [r.fold for r in rows if r.status != "finished"]
    works = sum(len(names) for _, names, *_ in plans)
    finished = [r.figure for r in rows if r.figure and r.in_mean]
    confidence, rho = base_confidence(plans), args.fold_correlation
    mean = across_folds(finished, confidence, works=works, left_out=tuple(unfinished), correlation=rho)
    if args.json:
        out = [r.to_dict() for r in rows]
        print(json.dumps({"folder": str(root), "folds": out, "mean": mean.to_dict() if mean else None}, indent=1))
    else:
        for r in rows:
            shown = r.figure.text() if r.figure else r.status
            if r.figure and not r.in_mean:
                shown += f" ({r.status}, not finished: left out of the mean)"
            print(f"{r.fold} ({', '.join(r.test_works)}): {shown}")
        print(mean.text() if mean else "crossval: no finished fold has a test figure yet")
    if tracking is not None:
        from ..tracking.crossval_runs import log_across_folds

        log_across_folds(tracking, root, mean, finished=not unfinished and not code)
    if code:
        return code
    if unfinished:
        print(f"skilltui: {', '.join(unfinished)} did not finish; run the same command to resume", file=sys.stderr)
        return 1
    return 0


@dataclass(frozen=True)
class _FoldRow:
    """One fold's line of the report: its test works, how its run ended and its test figure."""

    fold: str
    test_works: list[str]
    status: str
    figure: TestFigure | None
    in_mean: bool  # the fold finished, so its figure counts in the mean

    def to_dict(self) -> dict[str, Any]:
        figure = self.figure.to_dict() if self.figure else None
        return {
            "fold": self.fold,
            "test_works": self.test_works,
            "status": self.status,
            "figure": figure,
            "in_mean": self.in_mean,
        }


def base_confidence(plans: list[FoldPlan]) -> float:
    return plans[0][2].gate_confidence
