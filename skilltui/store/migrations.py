"""The run folder's format version, and the one place an older run is brought to today's shape.

A run made by this code carries `format.json` (`{"format_version": N}`) beside its
`config.json`. A run without one was made before versions existed: it is version 0. The
version lives in a file of its own, not in `config.json`, because the settings are the
run's identity (its id is their digest and a resume must match them), and a run's format
is not a setting: a migrated run still resumes with the command that made it.

`migrate(run)` runs each step from the run's version up to `FORMAT_VERSION`, and writes
the new version after each one. Every step is idempotent and writes durably (a whole file
replaced atomically, `core.durable`), so a migration killed midway is finished by the
next open. A run newer than this code is refused before anything is touched (`check`).

What is not migrated, and why: `events.jsonl` is the run's record and is only ever
appended to; an event's fields dropped since are read with the typed events' defaults and
`retired` names (model/events.py). The validation samples' folders are named in those
events, so they keep their layout too. Notes' commits are history: a commit made before
trailers existed keeps none (model/trailers.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..core.json_read import BadJSON, read_json
from ..core.words import counted
from .run_folder import Run, RunLock, write_json

__all__ = ["FORMAT_FILE", "FORMAT_VERSION", "check", "format_version", "migrate", "opened", "stamp"]

FORMAT_VERSION = 1
FORMAT_FILE = "format.json"


def format_version(run_dir: Path) -> int:
    """The run's format version: 0 for a run made before versions (no `format.json`)."""
    path = Path(run_dir) / FORMAT_FILE
    if not path.exists():
        return 0
    try:
        data = read_json(path)
    except (BadJSON, OSError):
        data = None
    version = data.get("format_version") if isinstance(data, dict) else None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UsageError(f"{path} is damaged (no format_version); restore it from a copy of the run, or write 1")
    return version


def check(run_dir: Path, *, resuming: bool = False) -> int:
    """The version of a run this code can open; UsageError for one it cannot (nothing is written).

    `resuming`: the run is to train on. A run gated by the rule the interval rule replaced
    (its settings hold `gate_tolerance`) can be read, but cannot go on under another rule.
    """
    run_dir = Path(run_dir)
    version = format_version(run_dir)
    if version > FORMAT_VERSION:
        raise UsageError(
            f"run {run_dir.name} has format version {version}, newer than this skilltui reads "
            f"({FORMAT_VERSION}); update skilltui to open it"
        )
    config = _saved_settings(run_dir) if resuming else None
    if config is not None and "gate_tolerance" in config:
        raise UsageError(
            f"run {run_dir.name} was gated by the old rule (roll back when validation rose by more than "
            f"{config['gate_tolerance']}), which the interval rule replaced; it cannot go on under another rule: "
            f"see it with `skilltui review {run_dir}`, or take its notes with `skilltui export {run_dir} --to DIR` "
            "and start a new run with --init-pool DIR"
        )
    return version


def _saved_settings(run_dir: Path) -> dict[str, Any] | None:
    """The run's `config.json` when it is a JSON object; None otherwise (`check_config` says why)."""
    try:
        saved = read_json(run_dir / "config.json")
    except (BadJSON, OSError):
        return None
    return saved if isinstance(saved, dict) else None


def stamp(run: Run) -> None:
    """Mark a new run (its settings just written) as made in today's format."""
    write_json(run.root / FORMAT_FILE, {"format_version": FORMAT_VERSION})


def migrate(run: Run) -> list[str]:
    """Bring `run` to FORMAT_VERSION, one step at a time; a notice per step that changed something.

    The caller holds the run's lock (nothing else writes the folder meanwhile) and has
    `check`ed the version.
    """
    notices: list[str] = []
    version = format_version(run.root)
    while version < FORMAT_VERSION:
        changed = STEPS[version](run)
        if changed:
            notices.append(f"run {run.id} brought from format {version} to {version + 1}: {changed}")
        version += 1
        # After the step's own writes: a kill before this line runs the (idempotent) step again.
        write_json(run.root / FORMAT_FILE, {"format_version": version})
    return notices


def opened(run: Run) -> Run:
    """A run a reader (review, report, export, blame) opened: checked, and migrated when it is older.

    A reader migrates under the run's lock, as a trainer does. While a trainer holds the
    lock the run is already in today's format: the trainer migrated it when it opened it.
    """
    if check(run.root) == FORMAT_VERSION:
        return run
    lock = RunLock(run.root)
    try:
        lock.acquire()
    except UsageError:
        return run
    try:
        if format_version(run.root) < FORMAT_VERSION:
            migrate(run)
    except OSError as exc:
        raise UsageError(
            f"run {run.id} is in an older format and cannot be brought up to date ({exc}); "
            "copy it somewhere writable and open the copy"
        ) from None
    finally:
        lock.release()
    return run


def _v0_reads_per_episode(run: Run) -> str:
    """Reads traces as one flat list (every note, every episode) become the per-episode shape.

    A flat list said only which notes the writer opened, not before which episode, so every
    episode is taken to have read them all: the shape's `notes` with no `episodes`.
    """
    rewritten = 0
    for path in sorted([*run.root.glob("epoch*/step*/works/*/reads.json"), *run.val_dir.glob("**/reads.json")]):
        try:
            trace = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a damaged trace is the reader's to skip, as it was before
        if isinstance(trace, list):
            write_json(path, {"notes": trace, "episodes": {}})
            rewritten += 1
    return f"{counted(rewritten, 'reads trace')} given their per-episode shape" if rewritten else ""


# STEPS[v] brings a run from version v to v + 1; it returns what it changed ("" for nothing).
STEPS: dict[int, Callable[[Run], str]] = {0: _v0_reads_per_episode}
