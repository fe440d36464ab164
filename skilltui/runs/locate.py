"""Finding the run a history command was pointed at: a run folder, or a run id under --runs-dir."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..store import migrations
from ..store.run_folder import RUN_ID, Run, is_locked


def is_run(folder: Path) -> bool:
    """A folder is a run when it holds the settings the engine writes first and a pool."""
    return (folder / "config.json").is_file() and (folder / "memory" / ".git").is_dir()


def _not_a_run(folder: Path, runs_dir: Path) -> str:
    """What to say of a folder that is no run: a crossval folder (or any folder of runs) names its runs."""
    try:
        inner = sorted((f for f in folder.iterdir() if is_run(f)), key=lambda f: f.name)
    except OSError:
        inner = []
    if not inner:
        return f"{folder} is a folder but not a skilltui run (no config.json); {lister(runs_dir)} lists runs"
    # A crossval folder holds one run per fold: the history is each fold's.
    crossval = (folder / "folds.json").is_file()
    what = "a crossval folder (folds.json): each fold is a run" if crossval else "a folder of runs, not a run"
    return f"{folder} is {what}; name one: {folder / inner[0].name} ({', '.join(f.name for f in inner)})"


def lister(runs_dir: Path) -> str:
    """The command that lists the runs in `runs_dir`, for error messages that say what to do."""
    return "`skilltui runs`" if Path(runs_dir) == Path("runs") else f"`skilltui runs --runs-dir {runs_dir}`"


def find_run(spec: str, runs_dir: Path) -> Run:
    """The run named by `spec` (a path to a run folder, or an id under `runs_dir`); UsageError if none."""
    runs_dir = Path(runs_dir).expanduser()
    candidates = [Path(spec).expanduser()]
    if RUN_ID.match(spec):
        candidates.append(runs_dir / spec)
    for folder in candidates:
        if is_run(folder):
            return migrations.opened(Run(folder.resolve()))
    for folder in candidates:
        if (folder / "config.json").is_file():
            raise UsageError(f"run {folder} has no pool (memory/ is not a git repository); there is no history to read")
        if folder.is_dir():
            raise UsageError(_not_a_run(folder, runs_dir))
    if not RUN_ID.match(spec) or Path(spec).name != spec:
        # A path, not an id: it names a folder, and --runs-dir has nothing to do with it.
        raise UsageError(f"{spec}: no such run folder; {lister(runs_dir)} lists the runs")
    raise UsageError(f"no run named {spec} in {runs_dir}/; {lister(runs_dir)} lists them")


def marks(run: Run) -> tuple[Any, ...]:
    """What changes whenever the run's history could have changed: the pool's HEAD and kept
    refs, the events file's size and whether a trainer holds the lock. Cheap enough to poll, so
    `skilltui review` (which may read a run another process is training) reloads only then."""
    pool = run.pool
    try:
        size = os.stat(run.events_path).st_size
    except OSError:
        size = -1
    return pool.head(), pool.kept_refs(), size, is_locked(run.root)
