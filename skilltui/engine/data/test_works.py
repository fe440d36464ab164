"""Which works a run tests on (`--test-work`), checked before anything is written, and the run's copy of their stories.

`settings` is the run's `Settings`: the session imports this module, so it is not named here.

A test work is held out from every other set: a work that is also trained on or used for
selection would not be a test of anything. The rest of the test split is engine/validation/test_points.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.durable import write_atomic
from ...core.errors import UsageError
from .works import Work, load_works


def load_test_works(settings: Any, others: list[Work]) -> list[Work]:
    """The test works, checked before anything is written: held out from every other set, with their episodes.

    Their counts were checked with every other setting (`Settings.check`, before this is called).
    """
    if not settings.test_works:
        return []
    last = settings.test_episodes or settings.episodes_per_step
    works = load_works(settings.test_works, max_script_kb=settings.max_script_kb)
    roots = {w.root.resolve(): w for w in others}
    names = {w.name for w in others}
    for work in works:
        if work.root.resolve() in roots:
            raise UsageError(
                f"--test-work {work.root} is also a --work or --val-work; a test work must be one nothing else touches"
            )
        if work.name in names:
            raise UsageError(
                f"--test-work {work.root} has the same folder name as another work ({work.name!r}); rename one folder"
            )
        missing = [n for n in range(1, last + 1) if n not in work.episodes]
        if missing:
            raise UsageError(
                f"--test-work {work.root} has no episode {missing[0]}; the test writes episodes 1-{last} "
                "(--test-episodes, else --episodes-per-step) of every test work: add them or lower that number"
            )
    if len({w.name for w in works}) < len(works):
        raise UsageError("two --test-work folders have the same folder name; rename one")
    return works


def copy_stories(root: Path, works: list[Work]) -> None:
    """The run's own copy of each test story, so a re-noised work cannot change what the run measured."""
    for work in works:
        kept = root / "test" / "stories" / f"{work.name}.md"
        if kept.exists() and kept.read_bytes() != work.story_path.read_bytes():
            raise UsageError(
                f"{work.name} was re-noised after run {root.name} started (its story.md differs from the run's copy); "
                "pass a new --run-id to test on the new story"
            )
        if not kept.exists():
            write_atomic(kept, work.story_path.read_bytes())


def test_identity(settings: Any) -> dict:
    """What a run's test measures, part of its identity (a resume with other test works is refused); {} without one."""
    if not settings.test_works:
        return {}
    return {
        "test": [
            sorted(map(str, settings.test_works)),
            settings.test_episodes,
            settings.test_repeats,
            settings.test_every,
        ]
    }
