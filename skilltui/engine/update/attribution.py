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

import os
import sys
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

from ...model.at import StepKey
from ...store.run_folder import Run, read_json
from ...store.settled import SettledCache, settled_and_live, step_keys
from ..loss.scores import combine


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
    """Notes read before each episode, from a `reads.json` (a run's older flat lists: store/migrations.py)."""
    per: dict[str, list[str]] = trace.get("episodes", {}) if isinstance(trace, dict) else {}
    every: list[str] = trace.get("notes", []) if isinstance(trace, dict) else []
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


def _scored(epoch: int, step: int, work: str, trace_path: Path, scores_path: Path) -> tuple[Episode, ...]:
    """One work-step's scored episodes in episode order; none while it is not scored.

    Only the episodes are kept, not the files' JSON (the scores file's counts and rubric are
    most of it), and a note's name is one string however many episodes read it.
    """
    scores, trace = _load(scores_path), _load(trace_path)
    if not isinstance(scores, dict) or trace is None:
        return ()
    try:
        losses = episode_losses(scores)
    except (TypeError, ValueError, AttributeError):  # a scores file edited by hand: no evidence
        return ()
    reads = episode_reads(trace, sorted(losses))
    return tuple(
        Episode(epoch, step, work, n, losses[n], frozenset(sys.intern(note) for note in reads.get(n, [])))
        for n in sorted(losses)
    )


def step_passes(run: Run, key: StepKey) -> list[tuple[Episode, ...]]:
    """The scored forward passes of one step, one per work in name order."""
    epoch, step = key
    works = run.step_dir(epoch, step) / "works"
    try:
        with os.scandir(works) as entries:
            names = sorted(e.name for e in entries if e.is_dir())
    except OSError:
        return []
    found = (_scored(epoch, step, w, works / w / "reads.json", run.loss_scores(epoch, step, w)) for w in names)
    return [p for p in found if p]


def episodes(run: Run, upto: StepKey | None = None) -> list[Episode]:
    """Every scored training episode of the run with its read trace, up to step `upto` included."""
    keys = [k for k in step_keys(run.root) if upto is None or k <= upto]
    return [e for key in keys for one in step_passes(run, key) for e in one]


class Tally:
    """Per note, the counts and sums attribution needs, added one forward pass at a time.

    A pass adds in time proportional to the notes its episodes read, so the run's tally is
    carried forward step by step instead of joined again from every trace at each
    micro-step. A count per note, not a set of passes: that held a tuple for every note
    every episode read.
    """

    def __init__(self) -> None:
        self.notes: dict[str, list[float]] = {}  # note -> [passes, episodes with it, their loss sum]
        self.count = 0
        self.total = 0.0

    def add(self, one_pass: tuple[Episode, ...]) -> None:
        for note in frozenset().union(*(e.notes for e in one_pass)):
            self.notes.setdefault(note, [0, 0, 0.0])[0] += 1
        for e in one_pass:
            self.count += 1
            self.total += e.loss
            for note in e.notes:
                tally = self.notes[note]
                tally[1] += 1
                tally[2] += e.loss

    def copy(self) -> Tally:
        other = Tally()
        other.notes = {note: list(t) for note, t in self.notes.items()}
        other.count, other.total = self.count, self.total
        return other

    def stats(self, notes: list[str] | None = None) -> dict[str, NoteStats]:
        out: dict[str, NoteStats] = {}
        for note in sorted(set(notes or []) | set(self.notes)):
            passes, with_n, with_sum = self.notes.get(note, (0, 0, 0.0))
            without_n, without_sum = self.count - int(with_n), self.total - with_sum
            out[note] = NoteStats(
                path=note,
                passes=int(passes),
                with_n=int(with_n),
                mean_with=round(with_sum / with_n, 4) if with_n else None,
                without_n=without_n,
                mean_without=round(without_sum / without_n, 4) if without_n else None,
            )
        return out


def _pass_of(e: Episode) -> tuple[int, int, str]:
    return (e.epoch, e.step, e.work)


def attribute(found: list[Episode], notes: list[str] | None = None) -> dict[str, NoteStats]:
    """Per note: passes that read it, mean loss of episodes written with and without it."""
    tally = Tally()
    for _, one_pass in groupby(sorted(found, key=lambda e: (*_pass_of(e), e.number)), key=_pass_of):
        tally.add(tuple(one_pass))
    return tally.stats(notes)


_SETTLED: SettledCache[Tally] = SettledCache(Tally)


def run_attribution(run: Run, notes: list[str] | None = None, upto: StepKey | None = None) -> dict[str, NoteStats]:
    """`attribute(episodes(run, upto), notes)`, reading only the steps that were not settled at the last look."""
    with _SETTLED.lock:
        fold = _SETTLED.get(run.root)
        if upto is not None and fold.through is not None and upto < fold.through:
            return attribute(episodes(run, upto), notes)  # an earlier point of the run: join it afresh
        settled, live = settled_and_live(step_keys(run.root), fold.through, upto)
        for key in settled:
            for one_pass in step_passes(run, key):
                fold.state.add(one_pass)
            fold.through = key
        tally = fold.state.copy() if live else fold.state
        for key in live:
            for one_pass in step_passes(run, key):
                tally.add(one_pass)
        return tally.stats(notes)


def attribution_table(stats: dict[str, NoteStats], present: list[str]) -> str:
    """The markdown table the backward prompt shows: notes in the pool first, then notes since removed."""
    if not stats:
        return "(no forward pass has been scored yet)"
    rows = [
        "| note | forward passes that read it | mean loss with it (episodes) | without it (episodes) |",
        "|---|---|---|---|",
    ]
    # Sets for the membership tests: a list made the table quadratic in the pool's size.
    here = set(present)
    gone = [n for n in stats if n not in here]
    removed = set(gone)
    for note in [n for n in present if n in stats] + gone:
        s = stats[note]
        w = "-" if s.mean_with is None else f"{s.mean_with:.3f} ({s.with_n})"
        wo = "-" if s.mean_without is None else f"{s.mean_without:.3f} ({s.without_n})"
        rows.append(f"| {note}{' (removed)' if note in removed else ''} | {s.passes} | {w} | {wo} |")
    return "\n".join(rows)
