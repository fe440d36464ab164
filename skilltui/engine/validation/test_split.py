"""The test split's measurement: a pool's notes written forward on test works, scored by the engine alone.

Three sets, three jobs (DESIGN §7): training works feed the optimizer, selection
(validation) works decide what the gate keeps, and test works give the one figure a person
may quote. A test work is touched by nothing but the writer's forward pass: its episodes
are scored here by the engine's loss (deterministic, no model call), so no judge ever reads
them, and nothing here writes where a backward, reduce or consolidation prompt looks.

A comparison is always paired: both pools (the one training started from and the one it
made, or any two pools under `skilltui eval`) are written forward pass by pass in the same
session, the same episodes, the same number of passes, and their per-episode losses are
compared by the gate's statistics (`paired_test_delta`, the one place they are called).

A sample is kept per (side, work, pass) under the folder its caller names; one already on
disk is read back, not paid for again, so a killed measurement resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...model.at import At
from ...store.places import Place
from ...store.run_folder import read_json, write_json
from ..data.works import Work
from ..loss.score_pool import score_in_worker
from ..stages.context import Context
from ..stages.gather import all_or_none
from ..stages.passes import forward, written_episodes
from .stats import Clusters, paired_delta
from .validator import episode_losses

Unit = tuple[str, int]  # (test work, episode)
Samples = dict[Unit, list[float]]  # one loss per pass, in pass order
Wait = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class TestFigure:
    """The paired comparison of two pools on the test works: what a person may quote."""

    __test__ = False  # a test module that imports it must not take it for a test class

    start: float  # the first pool's mean loss (the start pool, or eval's --pool B)
    trained: float  # the second pool's mean loss
    delta: float  # trained - start, over the same units and passes
    low: float | None  # None: no spread measured (one pass of a writer that may vary)
    high: float | None
    confidence: float
    works: int
    episodes: int  # test episodes (work x episode units)
    passes: int

    @property
    def excludes_zero(self) -> bool:
        return self.low is not None and self.high is not None and (self.high < 0 or self.low > 0)

    def text(self, start: str = "start", trained: str = "trained") -> str:
        """`test: start 0.412 -> trained 0.371, Δ -0.041 [-0.060, -0.022] at 90%, works 2, episodes 12, passes 3`."""
        if self.low is None or self.high is None:
            interval = "[spread not measured: use 2 or more passes]"
        else:
            interval = f"[{self.low:+.3f}, {self.high:+.3f}] at {self.confidence:.0%}"
        return (
            f"test: {start} {self.start:.3f} -> {trained} {self.trained:.3f}, Δ {self.delta:+.3f} {interval}, "
            f"works {self.works}, episodes {self.episodes}, passes {self.passes}"
        )

    def to_dict(self) -> dict[str, float | int | None]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, data: Mapping) -> TestFigure:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def paired_test_delta(
    start: Mapping[Unit, Sequence[float]],
    trained: Mapping[Unit, Sequence[float]],
    confidence: float,
    *,
    deterministic: bool = False,
) -> TestFigure | None:
    """The one call of the paired statistics for test figures; None when nothing pairs.

    The unit of evidence is a writing call, not an episode: one forward call writes every
    test episode of a work in a pass, and a real writer's good and bad calls move all of
    them together, so counting episodes as replicates would leave 0 out of the interval far
    more often than it says (bench/bench_test_split.py; docs/test-split.md). So each (work,
    pass) becomes its mean over the episodes both sides wrote, and the gate's paired statistics
    run on those, a work's passes as its replicates: the gate's own cluster-aware interval
    (`stats.paired_delta`).
    """
    units = sorted(u for u in trained if u in start and trained[u] and start[u])
    if not units:
        return None
    before, after = by_call(start, units), by_call(trained, units)
    p = paired_delta(before, after, confidence, deterministic=deterministic)
    if p is None:
        return None

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    passes = max(k for _, k in before)
    works = len({u[0] for u in units})
    return TestFigure(
        round(p.before, 4),
        round(p.after, 4),
        round(p.delta, 4),
        r(p.low),
        r(p.high),
        confidence,
        works,
        len(units),
        passes,
    )


def by_call(samples: Mapping[Unit, Sequence[float]], units: list[Unit]) -> Clusters:
    """The gate's clusters: (work, pass) -> that writing call's losses over `units`, in episode order.

    Both sides get the passes every unit of a work has, so a call's episodes pair one to one.
    """
    out: dict[tuple[str, int], list[float]] = {}
    for work in sorted({u[0] for u in units}):
        mine = [u for u in units if u[0] == work]
        passes = min(len(samples[u]) for u in mine)
        for k in range(passes):
            out[(work, k + 1)] = [samples[u][k] for u in mine]
    return out


@dataclass(frozen=True)
class Side:
    """One pool a comparison writes with: its notes folder and where its passes are kept."""

    notes: Path
    out: Path  # <out>/pass<k>/works/<work>/ and <out>/pass<k>/loss/<work>.json

    def place(self, tag: str, story: Path, k: int) -> Place:
        base = self.out / f"pass{k}"
        return Place(base / "works" / tag, story, base / "loss", validation=True, notes=self.notes)

    def scores_path(self, tag: str, k: int) -> Path:
        return self.out / f"pass{k}" / "loss" / f"{tag}.json"


@dataclass
class Sampler:
    """Writes and scores passes for one caller (a run's test points, an eval), bounded by `limit`.

    `stories` maps a work's name to the copy of its story the writer reads; `tags` to the
    folder name its samples are kept under (default its name; eval adds a hash of the story
    and episodes, so a changed work is measured again); `stage` tells the watchers a pass
    started or ended (the run's `Stage` events; eval passes a no-op).
    """

    ctx: Context
    works: list[Work]
    stories: dict[str, Path]
    first: int
    last: int
    limit: asyncio.Semaphore
    wait: Wait
    stage: Callable[..., None]
    tags: dict[str, str] = field(default_factory=dict)

    def tag(self, work: Work) -> str:
        return self.tags.get(work.name, work.name)

    async def pass_of(self, side: Side, work: Work, k: int, at: At) -> None:
        """One pass of one work with one pool: the writer's forward, then the engine's loss, each once."""
        scores_path = side.scores_path(self.tag(work), k)
        if scores_path.exists():
            return
        place = side.place(self.tag(work), self.stories[work.name], k)
        async with self.limit:
            await self.wait()
            self.stage("started", work.name)
            await forward(self.ctx, work, at, (self.first, self.last), place)
            written = await asyncio.to_thread(written_episodes, place.work_dir / "scripts", self.first, self.last)
            human = {n: work.episode_text(n) for n in range(self.first, self.last + 1)}
            # The engine's loss only: a judge call would put the test work's episodes in a prompt.
            scores = await score_in_worker(written, human)
            await asyncio.to_thread(write_json, scores_path, scores)
            self.stage("finished", work.name)

    async def compare(self, sides: Sequence[Side], passes: int, at: At) -> None:
        """Every side's passes 1..`passes`, interleaved pass by pass so the sides share one session's luck.

        The works of a pass run at once; the sides of one work one after the other, because
        their events (the stage, every file the writer opens) name the work and not the pool:
        written in the same millisecond they were the same line twice, which the event log's
        reader drops as an exact copy.
        """
        for k in range(1, passes + 1):
            await all_or_none([self._sides_of(sides, work, k, at) for work in self.works])

    async def _sides_of(self, sides: Sequence[Side], work: Work, k: int, at: At) -> None:
        for side in sides:
            await self.pass_of(side, work, k, at)

    def samples(self, side: Side, passes: int) -> Samples:
        """The per-episode losses of `side`'s passes 1..`passes` that are on disk (blocking)."""
        found: Samples = {}
        for work in self.works:
            for k in range(1, passes + 1):
                path = side.scores_path(self.tag(work), k)
                if not path.exists():
                    break
                for episode, value in episode_losses(read_json(path)).items():
                    found.setdefault((work.name, episode), []).append(value)
        return found


def mean_loss(samples: Samples) -> float | None:
    values = [v for passes in samples.values() for v in passes]
    return round(statistics.fmean(values), 4) if values else None
