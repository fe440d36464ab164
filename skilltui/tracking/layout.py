"""What one skilltui run is in an experiment tracker, followed event by event: `RunLayout.apply(event)`.

The layout is the same live (each line as `events.jsonl` gains it) and afterwards (the whole
file): it folds every event into a `RunView`, the one fold every interface renders, and keeps
beside it only what the view does not hold but a tracker wants at each step's end.

- **Metrics by global step** (epoch × steps + step), one point per finished step: each work's
  train and validation loss and their means with the works they cover, taken from `compare`'s
  own curves (`curves_of`, `curve_points`), so the tracker shows exactly what `compare --json`
  prints; the mean of each loss part over the works scored; cost and tokens so far; the pool's
  size; and how many micro-steps were kept, rolled back, rerun or skipped so far.
- **A step is logged when it finishes**, and its figures are the ones it finished with: a
  resumed run walks its finished steps again (each stage says "skipped") and its cost has grown
  since, so the first end of a step is the one kept.
- **Every decision** is a row with the gate's figures beside it (before, after, works, advice).
- **Epochs**: an epoch has ended once a later epoch starts or the run finishes; the pool commit
  it ended on is the one exported for it.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any

from ..model import events as ev
from ..model.at import StepKey
from ..model.view import RunView
from ..runs.compare import curve_points, curves_of
from ..runs.export import notes_at
from ..store.micro_steps import Decided, Told
from ..store.run_folder import Run, read_json

MLFLOW_NAME = re.compile(r"[^\w\-. :/]")


def metric_name(*parts: str) -> str:
    """A metric key MLflow accepts (letters, digits, `_-. :/`): a work's folder name may hold others."""
    return "/".join(MLFLOW_NAME.sub("_", part) for part in parts)


def params_of(config: dict[str, Any]) -> dict[str, str]:
    """Every setting in config.json as a flat string param; a table of settings becomes `name.key`."""
    params: dict[str, str] = {}
    for name, value in config.items():
        if isinstance(value, dict):
            for key, sub in value.items():
                params[metric_name(f"{name}.{key}")] = str(sub)
            if not value:
                params[name] = "{}"
        elif isinstance(value, list):
            params[name] = ", ".join(map(str, value))
        else:
            params[name] = str(value)
    return params


@dataclass(frozen=True)
class StepEnd:
    """What a step finished with, beside its losses (those the view keeps)."""

    time: _dt.datetime | None
    cost: float
    tokens: int
    head: str | None
    kept: int
    rolled_back: int
    rerun: int
    skipped: int
    parts: dict[str, float]


@dataclass
class RunLayout:
    """A run as a tracker shows it; `apply` every event in order, then read `metrics()` and the rest."""

    run: Run
    view: RunView = field(init=False)
    config: dict[str, Any] = field(init=False)
    ends: dict[StepKey, StepEnd] = field(default_factory=dict)
    told: Told = field(default_factory=Told)  # the micro-steps as the log tells them (store.micro_steps)
    epoch_heads: dict[int, str | None] = field(default_factory=dict)  # ended epochs -> pool commit
    ended: str | None = None  # how the latest session ended; None while one trains
    backend: str = ""
    models: dict[str, str] = field(default_factory=dict)
    head: str | None = None  # the pool's commit as the events tell it (None: where the run started)
    _scores: dict[StepKey, dict[str, dict[str, float]]] = field(default_factory=dict)
    _skipped: set[tuple[int, int, int]] = field(default_factory=set)
    _sizes: dict[str, tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.view = RunView.of(self.run.id, self.run.root)
        self.config = read_json(self.run.config_path)

    @property
    def steps_per_epoch(self) -> int:
        return int(self.config.get("steps") or 1)

    def global_step(self, key: StepKey) -> int:
        return key[0] * self.steps_per_epoch + key[1]

    def apply(self, event: ev.Event) -> None:
        self.view.apply(event)
        self.told.apply(event)
        match event:
            case ev.RunStarted():
                self.ended, self.backend, self.models = None, event.backend or self.backend, dict(event.models)
            case ev.StepStarted():
                self._end_epochs(before=event.epoch)
            case ev.Loss():
                self._scores.setdefault(event.at.step_key, {})[event.work] = dict(event.scores)
            case ev.PoolChanged():
                self.head = event.head
            case ev.HistoryAction():
                self.head = event.after
            case ev.MicroStepSkipped():
                self._skipped.add((event.epoch, event.step, event.group))
            case ev.StepFinished():
                self._step_end(event)
            case ev.RunFinished():
                self.ended = event.status
                if event.status == "finished":
                    self._end_epochs(before=None)

    def _step_end(self, event: ev.StepFinished) -> None:
        key = event.at.step_key
        if key in self.ends:
            return  # walked again by a resumed session: the first end is the step's
        scored = self._scores.get(key, {})
        parts: dict[str, list[float]] = {}
        for scores in scored.values():
            for name, value in scores.items():
                parts.setdefault(name, []).append(value)
        decided = self.view.decisions
        self.ends[key] = StepEnd(
            time=self.view.steps[key].ended,
            cost=round(self.view.cost, 6),
            tokens=self.view.tokens,
            head=self.head,
            kept=decided.get("approve", 0),
            rolled_back=decided.get("rollback", 0),
            rerun=decided.get("rerun", 0),
            skipped=len(self._skipped),
            parts={name: sum(values) / len(values) for name, values in parts.items()},
        )

    def _end_epochs(self, before: int | None) -> None:
        for epoch in sorted({e for e, _ in self.ends}):
            if (before is None or epoch < before) and epoch not in self.epoch_heads:
                last = max(key for key in self.ends if key[0] == epoch)
                self.epoch_heads[epoch] = self.ends[last].head

    def _row(self, decided: Decided) -> dict[str, Any]:
        """One decision as a row of the table, the gate's figures beside it."""
        event, gate = decided.event, decided.gate
        return {
            "global_step": self.global_step(event.at.step_key),
            "epoch": event.epoch,
            "step": event.step,
            "group": event.group,
            "attempt": event.attempt,
            "label": decided.label,
            "decision": event.decision,
            "by": event.by,
            "note": event.note,
            "reason": event.reason,
            "before": event.before,
            "after": event.after,
            "gate_before": gate.before if gate else None,
            "gate_after": gate.after if gate else None,
            "gate_works": gate.works if gate else None,
            "gate_advice": gate.advice if gate else None,
            "gate_reason": gate.reason if gate else None,
            "gate_cost_usd": gate.cost_usd if gate else None,
        }

    # -- what a tracker reads ----------------------------------------------------------------

    def params(self) -> dict[str, str]:
        return params_of(self.config)

    def started(self) -> _dt.datetime | None:
        """When the run's first session started, from its record."""
        try:
            return _dt.datetime.fromisoformat(self.view.first_started or "")
        except ValueError:
            return None

    def tags(self) -> dict[str, str]:
        models = ", ".join(f"{role}={model}" for role, model in sorted(self.models.items()))
        return {
            "skilltui.run_id": self.run.id,
            "backend": self.backend or str(self.config.get("backend", "")),
            "models": models or "(backend default)",
            "run_folder": str(self.run.root),
            # The key of the MLflow run with the run id: two folders with the same settings
            # derive the same id, and must not be merged into one MLflow run.
            "skilltui.run_folder": str(self.run.root.resolve()),
            "skilltui.status": self.ended or "running",
            # A fold of `skilltui crossval`: its folder beside the others, so the folds can be found together.
            **(
                {"skilltui.crossval": self.run.root.parent.name}
                if (self.run.root.parent / "folds.json").exists()
                else {}
            ),
        }

    def decision_table(self) -> dict[str, Any]:
        """Every decision in run order, as the columns and rows of a table (pandas' "split" layout)."""
        rows = [self._row(self.told.decided[key]) for key in sorted(self.told.decided)]
        columns = list(rows[0]) if rows else ["global_step", "decision"]
        return {"columns": columns, "data": [[row[c] for c in columns] for row in rows]}

    def metrics(self) -> dict[str, dict[int, tuple[float, _dt.datetime | None]]]:
        """metric -> global step -> (value, when the step ended), for every finished step."""
        out: dict[str, dict[int, tuple[float, _dt.datetime | None]]] = {}

        def put(name: str, key: StepKey, value: float) -> None:
            out.setdefault(name, {})[self.global_step(key)] = (float(value), self.ends[key].time)

        curves = curves_of(self.view, self.run.id)
        # Each work's own loss at each step, as the run model holds it (what compare averages per epoch).
        for key, scored in self.view.steps.items():
            if key not in self.ends:
                continue
            for work, loss in scored.losses.items():
                put(metric_name("train_loss", work), key, loss)
            for work, loss in scored.val_losses.items():
                put(metric_name("val_loss", work), key, loss)
        for kind, points in curve_points(curves).items():
            for epoch, step, mean, works in points:
                if (epoch, step) in self.ends:
                    put(f"{kind}_loss/mean", (epoch, step), mean)
                    put(f"{kind}_loss/works_in_mean", (epoch, step), works)
        for key, end in self.ends.items():
            notes, size = self.pool_size(end.head)
            for name, value in (
                ("cost_usd", end.cost),
                ("tokens", end.tokens),
                ("pool/notes", notes),
                ("pool/bytes", size),
                ("decisions/kept", end.kept),
                ("decisions/rolled_back", end.rolled_back),
                ("decisions/rerun", end.rerun),
                ("decisions/skipped", end.skipped),
            ):
                put(name, key, value)
            for part, value in end.parts.items():
                put(metric_name("loss_part", part), key, value)
        self._test_metrics(out)
        return out

    def _test_metrics(self, out: dict[str, dict[int, tuple[float, _dt.datetime | None]]]) -> None:
        """The test points (`--test-work`): the start pool's loss, and per epoch the trained pool's, the
        paired delta and its interval, at the epoch's last step (the start point at step 0); the last
        points are the run's final test delta with its interval."""
        for test in self.view.tests:
            at = 0 if test.epoch is None else (test.epoch + 1) * self.steps_per_epoch - 1
            when = _dt.datetime.fromisoformat(test.time.replace("Z", "+00:00"))
            figure = test.figure or {"start": test.start}
            for name in ("start", "trained", "delta", "low", "high"):
                if figure.get(name) is not None:
                    out.setdefault(f"test/{name}", {})[at] = (float(figure[name]), when)

    def commit(self, head: str | None) -> str:
        """The pool commit `head` stands for; None is where the run's pool started."""
        if head is not None:
            return head
        pool = self.run.pool
        first = pool.repo.git.rev_list("--reverse", "--first-parent", "HEAD").split()
        seeded = len(first) > 1 and pool.subject(first[1]).startswith("pool: seed ")
        return first[1] if seeded else first[0]

    def pool_size(self, head: str | None) -> tuple[int, int]:
        """(notes, bytes of notes) of the pool at `head`."""
        commit = self.commit(head)
        if commit not in self._sizes:
            notes = notes_at(self.run, commit)
            self._sizes[commit] = (len(notes), sum(len(data) for data in notes.values()))
        return self._sizes[commit]
