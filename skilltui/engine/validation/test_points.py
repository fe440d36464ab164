"""A run's test split (`--test-work DIR`): the figure a person may quote, measured where nothing else looks.

Test works are held out from everything but the writer's forward pass. Their material is
kept under the run's `test/` folder (stories, scripts, scores), which no backward, reduce
or consolidation sandbox names and no prompt lists; they are scored by the engine's loss
alone (no judge reads them); their figures go into `test` events that the backward
prompt's feedback, the rejected buffer and the gate never read.

```
test/stories/<work>.md               the story the writer reads
test/trees/<tree>/                   the notes of a measured pool, written out from git
test/<point>/start|trained/pass<k>/  each side's scripts and scores
test/points/<point>.json             the point's figure: recorded once, never measured again
```

Points: `start` before the first update (the pool training started from), then `e<E>`
after the last step (and consolidation) of every epoch, or only the last with
`--test-every end`. An epoch point writes the pool as it stands and the start pool again,
pass by pass in the same session, so the delta is paired and both sides share the
session's luck; the interval is the test split's statistics (`test_split.paired_test_delta`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ...model import events as ev
from ...model.at import At
from ...model.parse import parse_event, read_run
from ...store import val_store
from ...store.run_folder import read_json, write_json
from ..data.works import Work
from ..stages.context import Context
from .test_split import Sampler, Side, Wait, mean_loss, paired_test_delta


class TestPoints:
    """Measures and records a run's test points; `fatal` exceptions (a stop, a refused key) propagate."""

    __test__ = False

    def __init__(
        self,
        ctx: Context,
        works: list[Work],
        *,
        wait: Wait,
        limit: asyncio.Semaphore,
        fatal: tuple[type[BaseException], ...],
    ) -> None:
        s = ctx.settings
        self.ctx, self.fatal = ctx, fatal
        self.root = ctx.run.root / "test"
        self._told: set[str] | None = None  # the points the event log tells, once read
        self.works = sorted(works, key=lambda w: w.name)
        self.passes = s.test_repeats
        self.deterministic = ctx.calls.backend.deterministic
        stories = {w.name: self.root / "stories" / f"{w.name}.md" for w in self.works}
        last = s.test_episodes or s.episodes_per_step
        self.sampler = Sampler(ctx, self.works, stories, 1, last, limit, wait, self._stage)
        self._at = At(0, 0)

    def due(self, epoch: int) -> bool:
        """Whether epoch `epoch` ends with a test point (every epoch, or only the last with `--test-every end`)."""
        s = self.ctx.settings
        return s.test_every == "epoch" or epoch == s.epochs - 1

    async def measure(self, epoch: int | None) -> None:
        """The point before the first update (`epoch` None) or after epoch `epoch`: recorded once, then skipped."""
        name = "start" if epoch is None else f"e{epoch}"
        marker = self.root / "points" / f"{name}.json"
        if marker.exists():
            untold = await asyncio.to_thread(self._untold, name, marker)
            if untold is not None:
                self.ctx.bus.emit(untold)
            return
        self._at = At(epoch or 0, 0)
        start = await asyncio.to_thread(self._start_commit)
        commit = start if epoch is None else await asyncio.to_thread(self._commit_of, name)
        sides = [await self._side(start, name, "start")]
        if epoch is not None:
            sides.append(await self._side(commit, name, "trained"))
        costs: list[float] = []
        mine = str(self.root / name) + "/"

        def count(event: ev.Event) -> None:
            if isinstance(event, ev.Call) and event.cost_usd is not None and (event.transcript or "").startswith(mine):
                costs.append(event.cost_usd)

        unsubscribe = self.ctx.bus.subscribe(count)
        try:
            await self.sampler.compare(sides, self.passes, self._at)
        except self.fatal:
            raise
        except Exception as exc:  # noqa: BLE001 - a test pass that fails costs this point, never the run
            self.ctx.bus.emit(
                ev.Warning_(message=f"test point {name} not measured ({type(exc).__name__}: {exc}); resume measures it")
            )
            return
        finally:
            unsubscribe()
        found = [await asyncio.to_thread(self.sampler.samples, side, self.passes) for side in sides]
        figure = (
            paired_test_delta(found[0], found[1], self.ctx.settings.gate_confidence, deterministic=self.deterministic)
            if len(found) == 2
            else None
        )
        event = ev.TestMeasured(
            point=name,
            epoch=epoch,
            commit=commit,
            start=mean_loss(found[0]),
            figure=figure.to_dict() if figure else None,
            text=figure.text() if figure else f"test: start {mean_loss(found[0]):.3f} before any update",
            cost_usd=round(sum(costs), 6),
        )
        await asyncio.to_thread(write_json, marker, event.to_dict())
        self.ctx.bus.emit(event)

    def _untold(self, name: str, marker: Path) -> ev.Event | None:
        """A point recorded but never told (the run stopped between its record and its event): its event.

        The log is read once a session, at the first recorded point: what this session tells
        it is told by `measure` itself.
        """
        if self._told is None:
            events = read_run(self.ctx.run.events_path).events
            self._told = {e.point for e in events if isinstance(e, ev.TestMeasured)}
        if name in self._told:
            return None
        self._told.add(name)
        return parse_event(read_json(marker))

    async def _side(self, commit: str, point: str, label: str) -> Side:
        tree = await asyncio.to_thread(self.ctx.run.pool.git, "rev-parse", f"{commit}^{{tree}}")
        notes = await asyncio.to_thread(val_store.write_tree, self.ctx.run.pool.root, self.root, tree)
        return Side(notes, self.root / point / label)

    def _start_commit(self) -> str:
        """The pool training started from: its first commit (the donor's notes with --init-pool)."""
        roots = self.ctx.run.pool.git("rev-list", "--max-parents=0", "HEAD").split()
        return roots[-1]

    def _commit_of(self, point: str) -> str:
        """The commit a point measures: the pool's HEAD when it first ran, kept so a resume measures the same."""
        kept = self.root / point / "commit.json"
        if kept.exists():
            return str(read_json(kept)["commit"])
        commit = self.ctx.run.pool.head()
        write_json(kept, {"commit": commit})
        return commit

    def _stage(self, status: str, work: str) -> None:
        self.ctx.stage("test", status, self._at.to(work=work))
