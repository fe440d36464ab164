"""`skilltui demo` and `skilltui repair`: the bundled demo run, and putting a damaged pool back on an intact commit.

Both end in `train`'s own machinery: the demo trains like `train --backend offline` with the
settings below, and after a repair the same `train` command resumes the run.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import TypedDict

from ..agents import make_backend
from . import add_runs_dir, command
from .training import train
from .unattended import require_reviewer

DEMO_RUN = re.compile(r"demo(?:-(\d+))?")  # runs/demo, then runs/demo-2, demo-3, ...


class _DemoSettings(TypedDict):
    """The demo's own Settings fields (a TypedDict, so `Settings(**DEMO_SETTINGS)` is checked)."""

    steps: int
    episodes_per_step: int
    epochs: int
    group_size: int
    workers: int


DEMO_SETTINGS: _DemoSettings = {"steps": 3, "episodes_per_step": 2, "epochs": 1, "group_size": 2, "workers": 3}


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "demo", cmd_demo)
    p.add_argument("--auto", action="store_true", help="headless: approve every update automatically")
    p.add_argument(
        "--offline-latency",
        type=float,
        default=0.3,
        metavar="S",
        help="seconds each offline call takes, so the run looks live (default 0.3)",
    )
    add_runs_dir(p)

    p = command(sub, "repair", cmd_repair)
    p.add_argument("run", type=Path, metavar="RUN", help="the run folder, e.g. runs/my-run")


def _fresh_demo_id(runs_dir: Path, works: list[Path]) -> str:
    """`demo`, or the `demo-N` after the newest earlier demo; says where that one is.

    A demo shows training from the start, so a second `skilltui demo` starts over instead of
    resuming (or reporting as finished) the first; resuming a run is `train`'s job, and the
    line printed here is the command that does it.
    """
    numbers = [int(m[1] or 1) for p in runs_dir.glob("demo*") if (m := DEMO_RUN.fullmatch(p.name))]
    if not numbers:
        return "demo"
    earlier = "demo" if max(numbers) == 1 else f"demo-{max(numbers)}"
    fresh = f"demo-{max(numbers) + 1}"
    from ..engine.opening import finished_already
    from ..store.run_folder import Run

    where = shlex.quote(str(runs_dir / earlier))
    print(f"demo: an earlier demo is in {runs_dir / earlier}; this one is {runs_dir / fresh}", file=sys.stderr)
    if finished_already(Run(runs_dir / earlier)):  # nothing left to resume: only browsing it makes sense
        print(f"demo: the earlier one finished; browse it: skilltui review {where}", file=sys.stderr)
        return fresh
    resume = train_command(runs_dir, works, earlier)
    print(f"demo: to resume the earlier one: {resume}  (or browse it: skilltui review {where})", file=sys.stderr)
    return fresh


def train_command(runs_dir: Path, works: list[Path], run_id: str) -> str:
    """The `skilltui train` command that resumes the demo `run_id` (`demo` again would start a fresh one)."""
    flags = " ".join(f"--{key.replace('_', '-')} {value}" for key, value in DEMO_SETTINGS.items())
    work_flags = " ".join(f"--work {shlex.quote(str(w))}" for w in works)
    return (
        f"skilltui train {work_flags} {flags} --backend offline "
        f"--runs-dir {shlex.quote(str(runs_dir))} --run-id {run_id}"
    )


def cmd_repair(args: argparse.Namespace) -> int:
    """Point a damaged pool's main back at the newest intact commit its run recorded.

    When a run stops because its pool's repository is damaged (HEAD names no branch, a ref
    file is empty or cut short, an object cannot be read), this keeps the damaged state
    under refs/skilltui/damaged/<time>, points main (and HEAD) at the newest commit the run's
    records name whose every object reads, and leaves the files alone for the next train to
    keep. Nothing is deleted.
    """
    from ..store.repair import repair

    print(repair(args.run))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Train the bundled example works with the offline backend.

    Copy the bundled example works to ./runs/demo-works, write their stories and train them
    with the offline backend into ./runs/demo; a later demo is a fresh run (runs/demo-2, ...),
    and `train` resumes an earlier one.
    """
    from ..engine.data.diffuse import noise_work
    from ..engine.data.work_check import write_story
    from ..engine.data.works import load_work
    from ..engine.settings import Settings

    # Like `train`: piped or without stdin there is nobody to review, so say so before the demo
    # copies its works or opens a run; `--auto` is how to watch a demo train unattended.
    require_reviewer("demo", args.auto)
    target = args.runs_dir / "demo-works"
    examples = resources.files("skilltui") / "examples"
    works = []
    for source in sorted(Path(str(examples)).iterdir()):
        if not (source / "human").is_dir():
            continue
        copy = target / source.name
        if not copy.exists():
            shutil.copytree(source, copy)
        work = load_work(copy)
        if not work.story_path.exists():
            write_story(work, noise_work(work, seed=0, noise=0.3))
        works.append(copy)
    run_id = _fresh_demo_id(args.runs_dir, works)
    settings = Settings(
        works=works,
        backend="offline",
        runs_dir=args.runs_dir,
        run_id=run_id,
        offline_latency=args.offline_latency,
        auto=args.auto,
        **DEMO_SETTINGS,
    )
    settings.check()
    print(f"demo: {len(works)} works from {target}", file=sys.stderr)
    resume = f"resume it with: {train_command(args.runs_dir, works, run_id)}"
    return train(settings, make_backend("offline", offline_latency=settings.offline_latency), resume=resume)
