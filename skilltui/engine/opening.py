"""Opening a run: check every input first, then create or reopen the run folder.

All validation happens before anything is written, so bad input (a missing story, a
re-noised work, other settings on reopen, a bad --init-pool) costs one line on stderr and
leaves `runs/` exactly as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core.durable import clean_temps, write_atomic
from ..core.errors import UsageError
from ..core.json_read import BadJSON, read_json
from ..model.bus import repair_tail
from ..model.parse import read_run
from ..model.view import RunView
from ..pool.notes import donor_notes
from ..store import migrations
from ..store.reconcile import reconcile
from ..store.run_folder import Run, RunLock, check_config, check_run_id, check_runs_dir, derive_run_id, write_json
from .data.test_works import copy_stories, load_test_works
from .data.works import DEFAULT_MAX_SCRIPT_KB, Work, ignored_notice, load_works
from .prompts import Prompts
from .settings import Settings
from .settings_fields import LEGACY_GATE_MAX_REPEATS


@dataclass
class OpenedRun:
    run: Run
    works: list[Work]
    settings: Settings
    prompts: Prompts
    config: dict[str, Any]
    resumed: bool
    lock: RunLock
    # What reopening found and did (a cut events line, uncommitted edits kept under a ref, a
    # pool moved outside training): one line each, emitted as warnings when training starts.
    notices: list[str] = field(default_factory=list)
    pool_moved_to: str | None = None
    val_works: list[Work] = field(default_factory=list)
    spent: float = 0.0  # what earlier sessions' calls cost, as their records say
    test_works: list[Work] = field(default_factory=list)
    # How the person resumes this run, said wherever a session stops short: running `demo`
    # again starts a fresh demo, so a demo names the `train` command instead.
    resume: str = "run the same command to resume"


def open_run(settings: Settings, *, refuse_finished: bool = False) -> OpenedRun:
    """Validate, then create or reopen the run. Raises UsageError before writing anything.

    With `refuse_finished` (the `train` command), a run whose last session finished raises
    `AlreadyFinished` before anything is written: there is nothing left to train.
    """
    settings.check()
    works = load_works(settings.works, max_script_kb=settings.max_script_kb)
    val_works = load_val_works(settings.val_works, works, settings.val_last, settings.max_script_kb)
    test_works = load_test_works(settings, works + val_works)
    settings.check_works(works)
    prompts = Prompts(settings.prompts)
    prompts.check()
    runs_dir = check_runs_dir(Path(settings.runs_dir).expanduser())
    settings = _started_schedule(settings, works, val_works, runs_dir)
    config = settings.identity(works, val_works)
    run_id = check_run_id(settings.run_id) if settings.run_id else derive_run_id(config)
    run = Run(runs_dir.resolve() / run_id)
    if (run.config_path).is_file():
        migrations.check(run.root, resuming=True)  # a newer format, or a run under a rule since replaced
    resumed = check_config(run.root, config)
    if resumed:
        for work in works:
            _check_story_unchanged(run, work)
        for work in val_works:
            _check_story_unchanged(run, work, run.val_story_path(work.name))
    if refuse_finished and resumed and finished_already(run):
        raise AlreadyFinished(
            f"run {run.id} is finished; nothing to train. See it with `skilltui review {run.root}`, "
            f"or take its notes with `skilltui export {run.root} --to DIR`"
        )
    if settings.init_pool and not resumed:
        donor_notes(Path(settings.init_pool))

    run.root.mkdir(parents=True, exist_ok=True)
    lock = RunLock(run.root)
    lock.acquire()
    notices: list[str] = []
    try:
        # The lock is ours, so any temporary file in the run is a dead writer's.
        clean_temps(run.root, all_dead=True)
        cut = repair_tail(run.events_path)
        if cut:
            notices.append(f"events.jsonl ended in a line cut short ({cut} bytes); removed it")
        if not resumed:
            write_json(run.config_path, config)
            migrations.stamp(run)  # a kill before this leaves a version-0 run, which `migrate` stamps
        notices += migrations.migrate(run)
        pool = run.pool
        if not pool.has_commit():
            pool.init(seed=Path(settings.init_pool) if settings.init_pool else None)
        pool.check_intact()  # the notes training starts from; damage deeper in history stops the run when read
        # The one read of the records on reopen: what it left out is said once, before training.
        record = read_run(run.events_path)
        if skipped := record.warning():
            notices.append(skipped)
        found = reconcile(run, record.events)
        notices += found.notices
        notices += [line for work in [*works, *val_works] if (line := ignored_notice(work))]
        spent = RunView().fold(record.events).cost
        for work in works:
            destination = run.story_path(work.name)
            if not destination.exists():
                write_atomic(destination, work.story_path.read_bytes())
        for work in val_works:
            destination = run.val_story_path(work.name)
            if not destination.exists():
                write_atomic(destination, work.story_path.read_bytes())
        copy_stories(run.root, test_works)
    except BaseException:
        lock.release()
        raise
    return OpenedRun(
        run, works, settings, prompts, config, resumed, lock, notices, found.moved_to, val_works, spent, test_works
    )


def _started_schedule(settings: Settings, works: list[Work], val_works: list[Work], runs_dir: Path) -> Settings:
    """The settings with the gate's passes a run was started with, when it was started before the default moved.

    A gated run records `gate_max_repeats`, and before the default was GATE_MAX_REPEATS it
    recorded LEGACY_GATE_MAX_REPEATS: the same command, with no --gate-max-repeats, must
    still find that run (its id may be the settings' digest) and resume it with its own rule.
    """
    if not settings.gate or settings.gate_max_repeats is not None:
        return settings
    legacy = replace(settings, gate_max_repeats=LEGACY_GATE_MAX_REPEATS)
    config = legacy.identity(works, val_works)
    path = runs_dir.resolve() / (check_run_id(settings.run_id) if settings.run_id else derive_run_id(config))
    try:
        started = (path / "config.json").is_file() and read_json(path / "config.json") == config
    except (BadJSON, OSError):
        started = False  # not that run: check_config says what is wrong with it
    return legacy if started else settings


class AlreadyFinished(Exception):
    """The run trained to its end with these settings: `train` says so and changes nothing."""


def finished_already(run: Run) -> bool:
    """True when the run's last session ended with every step done (not stopped, not failed)."""
    view = RunView().fold(read_run(run.events_path).events)
    return view.status == "finished"


def load_val_works(
    paths: list[Path], works: list[Work], episodes_per_step: int, max_script_kb: int = DEFAULT_MAX_SCRIPT_KB
) -> list[Work]:
    """The held-out works, checked before anything is written.

    Validation always runs episodes 1..--episodes-per-step of each validation work, so
    every point of its curve measures the same text; a work without them cannot be one.
    A work that is also trained on would not be held out, so it is refused too.
    """
    if not paths:
        return []
    val_works = load_works(paths, max_script_kb=max_script_kb)
    trained = {w.root: w for w in works}
    names = {w.name for w in works}
    for work in val_works:
        if work.root in trained:
            raise UsageError(
                f"--val-work {work.root} is also a --work; a validation work must be one training never sees"
            )
        if work.name in names:
            raise UsageError(
                f"--val-work {work.root} has the same folder name as a training work ({work.name!r}); "
                "a run keys works by folder name, so rename one folder"
            )
        missing = [n for n in range(1, episodes_per_step + 1) if n not in work.episodes]
        if missing:
            raise UsageError(
                f"--val-work {work.root} has no episode {missing[0]}; validation runs episodes 1-{episodes_per_step} "
                "(--val-episodes, else --episodes-per-step) of every validation work: add them or lower that number"
            )
    return val_works


def _check_story_unchanged(run: Run, work: Work, kept: Path | None = None) -> None:
    """The run trains on its own copy of each story; a re-noised work would make its history a lie."""
    kept = kept or run.story_path(work.name)
    if kept.exists() and kept.read_bytes() != work.story_path.read_bytes():
        raise UsageError(
            f"{work.name} was re-noised after run {run.id} started (its story.md differs from the run's copy); "
            "pass a new --run-id to train on the new story"
        )
