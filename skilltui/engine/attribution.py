"""Per-note attribution from the read traces: which notes the writer used, and how it went.

Every forward pass keeps, per episode, the notes it had opened before it wrote that
episode (`reads.json`), and the loss stage keeps each episode's scores. Joining the two
gives, for every note:

- `passes`: the forward passes (one work, one step) that opened it;
- `mean_with`: the mean loss of the episodes written after it had been opened;
- `mean_without`: the mean loss of every other scored episode of the run.

It is evidence, not proof: a note read mostly on hard episodes looks worse than it is.
The backward prompt shows it so "prefer editing a note the writer read; remove a note
that misled" can be acted on; the app's pool pane and `skilltui review` show the same
numbers. Only training works count: validation lives outside `epoch*/step*/works`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

from .run import Run, read_json
from .scores import combine

_CACHE: dict[tuple[str, int, int, str, int, int], tuple[Episode, ...]] = {}


@dataclass(frozen=True)
class NoteStats:
    path: str
    passes: int
    with_n: int
    mean_with: float | None
    without_n: int
    mean_without: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "passes": self.passes,
            "with": self.mean_with,
            "with_n": self.with_n,
            "without": self.mean_without,
            "without_n": self.without_n,
        }

    @property
    def short(self) -> str:
        """`3 reads · 0.412 vs 0.455`: how the pane and the review list show it."""
        w = "-" if self.mean_with is None else f"{self.mean_with:.3f}"
        wo = "-" if self.mean_without is None else f"{self.mean_without:.3f}"
        return f"{self.passes} read{'s' if self.passes != 1 else ''} · {w} vs {wo}"


@dataclass(frozen=True, slots=True)
class Episode:
    """One written episode: its loss and the notes opened before it was written."""

    epoch: int
    step: int
    work: str
    number: int
    loss: float
    notes: frozenset[str]


def episode_reads(trace: Any, numbers: list[int]) -> dict[int, list[str]]:
    """Notes read before each episode, from a `reads.json` (a flat list in older runs: every note, every episode)."""
    if isinstance(trace, list):
        return {n: list(trace) for n in numbers}
    per = trace.get("episodes", {}) if isinstance(trace, dict) else {}
    every = trace.get("notes", []) if isinstance(trace, dict) else []
    # An episode the trace does not list was written after every read (the writer wrote it last).
    return {n: list(per.get(str(n), every)) for n in numbers}


def episode_losses(scores: dict[str, Any]) -> dict[int, float]:
    """Each episode's loss, from a loss stage's scores file."""
    given = scores.get("episode_losses")
    if isinstance(given, dict):
        return {int(n): float(v) for n, v in given.items()}
    return {int(n): combine(parts) for n, parts in scores.get("episodes", {}).items()}


def _load(path: Path) -> Any:
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def _scored(
    root: str, epoch: int, step: int, work: str, trace_path: Path, scores_path: Path
) -> tuple[Episode, ...] | None:
    """One work-step's scored episodes, or None while it is not scored.

    Cached by the two files' sizes, since a finished stage's files never change: every
    micro-step joins the whole run again. Only the episodes are kept, not the files' JSON
    (the scores file's counts and rubric are most of it and grew the process every step),
    and a note's name is one string however many episodes read it.
    """
    try:
        key = (root, epoch, step, work, trace_path.stat().st_size, scores_path.stat().st_size)
    except OSError:
        return None
    if key not in _CACHE:
        scores, trace = _load(scores_path), _load(trace_path)
        if not isinstance(scores, dict) or trace is None:
            return None
        losses = episode_losses(scores)
        reads = episode_reads(trace, sorted(losses))
        if len(_CACHE) > 50_000:
            _CACHE.clear()
        _CACHE[key] = tuple(
            Episode(epoch, step, work, n, loss, frozenset(sys.intern(note) for note in reads.get(n, [])))
            for n, loss in losses.items()
        )
    return _CACHE[key]


def episodes(run: Run, upto: tuple[int, int] | None = None) -> list[Episode]:
    """Every scored training episode of the run with its read trace, up to step `upto` included."""
    found: list[Episode] = []
    root = sys.intern(str(run.root))  # the cache's keys share one string per run
    for trace_path in run.root.glob("epoch*/step*/works/*/reads.json"):
        work = trace_path.parent.name
        step_dir = trace_path.parent.parent.parent
        try:
            epoch = int(step_dir.parent.name.removeprefix("epoch"))
            step = int(step_dir.name.removeprefix("step"))
        except ValueError:
            continue
        if upto is not None and (epoch, step) > upto:
            continue
        found += _scored(root, epoch, step, work, trace_path, run.loss_scores(epoch, step, work)) or ()
    return sorted(found, key=lambda e: (e.epoch, e.step, e.work, e.number))


def _pass_of(e: Episode) -> tuple[int, int, str]:
    return (e.epoch, e.step, e.work)


def attribute(found: list[Episode], notes: list[str] | None = None) -> dict[str, NoteStats]:
    """Per note: passes that read it, mean loss of episodes written with and without it."""
    names = set(notes or [])
    # A count per note, one forward pass at a time: a set of passes per note held a tuple for
    # every note every episode read, which grew with the run and was built at every micro-step.
    passes: dict[str, int] = {}
    for _, episodes_of_pass in groupby(sorted(found, key=_pass_of), key=_pass_of):
        read = frozenset().union(*(e.notes for e in episodes_of_pass))
        names |= read
        for note in read:
            passes[note] = passes.get(note, 0) + 1
    stats: dict[str, NoteStats] = {}
    for note in sorted(names):
        with_ = [e.loss for e in found if note in e.notes]
        without = [e.loss for e in found if note not in e.notes]
        stats[note] = NoteStats(
            path=note,
            passes=passes.get(note, 0),
            with_n=len(with_),
            mean_with=round(sum(with_) / len(with_), 4) if with_ else None,
            without_n=len(without),
            mean_without=round(sum(without) / len(without), 4) if without else None,
        )
    return stats


def run_attribution(
    run: Run, notes: list[str] | None = None, upto: tuple[int, int] | None = None
) -> dict[str, NoteStats]:
    return attribute(episodes(run, upto), notes)


def attribution_table(stats: dict[str, NoteStats], present: list[str]) -> str:
    """The markdown table the backward prompt shows: notes in the pool first, then notes since removed."""
    if not stats:
        return "(no forward pass has been scored yet)"
    rows = [
        "| note | forward passes that read it | mean loss with it (episodes) | without it (episodes) |",
        "|---|---|---|---|",
    ]
    gone = [n for n in stats if n not in present]
    for note in [n for n in present if n in stats] + gone:
        s = stats[note]
        w = "-" if s.mean_with is None else f"{s.mean_with:.3f} ({s.with_n})"
        wo = "-" if s.mean_without is None else f"{s.mean_without:.3f} ({s.without_n})"
        rows.append(f"| {note}{' (removed)' if note in gone else ''} | {s.passes} | {w} | {wo} |")
    return "\n".join(rows)
