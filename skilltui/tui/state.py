"""What the terminal app shows, folded from the engine's events. No Textual in here.

The app's sink only queues events; a timer folds the queue into a `RunState` and redraws
the panes it marked dirty. Folding is pure bookkeeping, so the same state can be rebuilt
from a finished run's `events.jsonl` (that is how a resumed run gets its loss curve and
its decisions back, and how `skilltui review` can reuse the panes) and tested without a
screen. Every collection that grows with the length of a run is either small per step (one
loss per work) or bounded (agent output keeps its last characters only), so the app's
memory stays flat however many steps go by."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..commits import SIGNS, Commit, Mark
from .output import OUTPUT_LIMIT, KeptTranscripts, OutputBuffer

__all__ = ["OUTPUT_LIMIT", "Commit", "Mark", "OutputBuffer", "RunState", "StepKey", "WorkRow"]

StepKey = tuple[int, int]
NOTICE_LIMIT = 50
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")


@dataclass
class WorkRow:
    """One row of the works pane."""

    name: str
    stage: str = "waiting"  # waiting, forward, loss, done, failed, sits out
    episodes: int = 0
    needed: int = 0
    loss: float | None = None
    tokens: int = 0
    cost: float | None = None
    error: str | None = None


class RunState:
    """The facts every pane shows, folded event by event; `take_dirty()` says what changed."""

    def __init__(self, run_id: str, run_dir: Path, works: list[str], output_limit: int = OUTPUT_LIMIT) -> None:
        self.run_id = run_id
        self.run_dir = Path(run_dir)
        self.output_limit = output_limit
        self.rows: dict[str, WorkRow] = {name: WorkRow(name) for name in works}
        self.outputs: dict[str, OutputBuffer] = {name: OutputBuffer(output_limit) for name in works}
        self.transcripts = KeptTranscripts()  # what a stage a resumed session skips had written
        self.epoch: int | None = None
        self.step: int | None = None
        self.first: int | None = None
        self.last: int | None = None
        self.groups: list[list[str]] = []
        self.tokens = 0
        self.cost = 0.0
        self.cost_known = True
        self.status = "starting"  # starting, running, review, finished, stopped, failed
        self.reason = ""
        self.paused = False
        self.reviewing: str | None = None
        self.steps: list[StepKey] = []
        self.losses: dict[str, dict[StepKey, float]] = {name: {} for name in works}
        self.reports: dict[str, dict[StepKey, str]] = {name: {} for name in works}
        self.means: dict[StepKey, float] = {}
        # Which works each step's mean covers (scheduled, less the failed), so the curve can
        # say when two points are means over different sets of works.
        self.step_works: dict[StepKey, frozenset[str]] = {}
        self.mean_works: dict[StepKey, frozenset[str]] = {}
        self.val_works: set[str] = set()
        self.val_losses: dict[str, dict[StepKey, float]] = {}
        self.val_means: dict[StepKey, float] = {}
        self.val_counts: dict[StepKey, int] = {}
        self.val_cost = 0.0
        self.marks: dict[str, Mark] = {}
        # Per note: passes that read it, mean loss with / without it (the latest attribution event).
        self.attribution: dict[str, dict[str, Any]] = {}
        self.head: str | None = None
        self.notices: deque[str] = deque(maxlen=NOTICE_LIMIT)
        self.throttled = False  # the API rate-limited the key: fewer calls in flight for a while
        self.batch = ""  # the latest Message Batch's state (--batch), "" when none is pending
        self.models: dict[str, str] = {}
        self._dirty: set[str] = set()
        self._output_dirty: set[str] = set()

    # -- reading ----------------------------------------------------------------------

    def take_dirty(self) -> tuple[set[str], set[str]]:
        """(panes to redraw, works whose output grew) since the last call."""
        dirty, outputs = self._dirty, self._output_dirty
        self._dirty, self._output_dirty = set(), set()
        return dirty, outputs

    @property
    def active(self) -> bool:
        return self.status in ("starting", "running", "review")

    def loss_steps(self, work: str) -> list[StepKey]:
        """The steps that have a loss report for `work`, in run order."""
        have = self.reports.get(work, {})
        return [key for key in self.steps if key in have]

    # -- folding ----------------------------------------------------------------------

    def apply(self, event: dict[str, Any], *, replay: bool = False) -> None:
        """Fold one event (as `Event.to_dict()` or an events.jsonl line) into the state.

        `replay` folds an earlier session's events: its numbers and decisions count, its
        stages and output do not, because the live session will say where things stand.
        """
        handler = getattr(self, f"_on_{event.get('kind')}", None)
        if handler is not None:
            handler(event, replay)

    def _row(self, name: str | None) -> WorkRow | None:
        if name is None or name in self.val_works:
            return None  # validation works have no row: they never train, their numbers are the val curve
        if name not in self.rows:
            self.rows[name] = WorkRow(name)
            self.outputs[name] = OutputBuffer(self.output_limit)
            self.losses[name] = {}
            self.reports[name] = {}
        return self.rows[name]

    def _group_works(self, group: int | None) -> list[str]:
        if group is None or not 1 <= group <= len(self.groups):
            return []
        return self.groups[group - 1]

    def _say(self, work: str | None, group: int | None, text: str) -> None:
        targets = [work] if work else self._group_works(group)
        for name in targets:
            if self._row(name) is not None:
                self.outputs[name].line(text)
                self._output_dirty.add(name)

    def _on_run_started(self, e: dict[str, Any], replay: bool) -> None:
        self.val_works |= set(e.get("val_works") or [])
        for name in e.get("works", []):
            self._row(name)
        if replay:
            return
        self.run_id = e.get("run_id", self.run_id)
        self.status = "running"
        self.reason = ""
        self.paused = False
        for row in self.rows.values():
            row.stage, row.episodes, row.error = "waiting", 0, None
        self._dirty |= {"header", "works"}

    def _on_step_started(self, e: dict[str, Any], replay: bool) -> None:
        key = (e["epoch"], e["step"])
        if key not in self.steps:
            self.steps.append(key)
        self.step_works[key] = frozenset(e.get("works", []))
        self.groups = [list(g) for g in e.get("groups", [])]
        if replay:
            return
        self.epoch, self.step, self.first, self.last = e["epoch"], e["step"], e["first"], e["last"]
        active = set(e.get("works", []))
        for name in active:
            self._row(name)
        for name, row in self.rows.items():
            row.stage = "waiting" if name in active else "sits out"
            row.episodes, row.needed, row.error = 0, e["last"] - e["first"] + 1, None
        self._dirty |= {"header", "works", "curve"}

    def _on_stage(self, e: dict[str, Any], replay: bool) -> None:
        if replay:
            return
        stage, status, work = e["stage"], e["status"], e.get("work")
        where = f"epoch {e['epoch']} step {e['step']}"
        row = self._row(work)
        if row is not None:
            if status == "started":
                row.stage = stage
            elif status == "failed":
                row.stage, row.error = "failed", e.get("error")
            elif stage == "loss":
                row.stage = "done"
            self._dirty.add("works")
        group = f" group {e['group']}" if e.get("group") else ""
        if status == "started":
            attempt = f" attempt {e['attempt']}" if e.get("attempt") else ""
            span = f" · episodes {self.first}-{self.last}" if work and self.first is not None else ""
            self._say(work, e.get("group"), f"── {stage}{group}{attempt} · {where}{span} ──")
        elif status == "skipped":
            self._say(work, e.get("group"), f"── {stage}{group} · {where} · done in an earlier session ──")
            for text in self.transcripts.texts(work, e.get("group"), stage, (e["epoch"], e["step"]), self._short):
                self._say(work, e.get("group"), text)
        elif status == "failed":
            self._say(work, e.get("group"), f"✗ {stage} failed: {e.get('error')}")
            self.notices.append(f"{stage} {work or 'group ' + str(e.get('group'))} failed: {e.get('error')}")
            self._dirty.add("notices")

    def _on_delta(self, e: dict[str, Any], replay: bool) -> None:
        text = e.get("text", "")
        targets = [e["work"]] if e.get("work") else self._group_works(e.get("group"))
        for name in targets:
            if self._row(name) is not None:
                self.outputs[name].write(text)
                self._output_dirty.add(name)

    def _on_tool(self, e: dict[str, Any], replay: bool) -> None:
        if replay:
            return
        path = self._short(e.get("path", ""))
        if e.get("ok"):
            self._say(e.get("work"), e.get("group"), f"  ▸ {e['tool']} {path}")
        else:
            self._say(e.get("work"), e.get("group"), f"  ✗ {e['tool']} {path}: {e.get('error')}")

    def _short(self, path: str) -> str:
        """A tool path as the person thinks of it: relative to the run (or the pool), not the disk."""
        try:
            relative = Path(path).relative_to(self.run_dir)
        except ValueError:
            return path
        parts = relative.parts
        return str(Path(*parts[1:])) if parts and parts[0] == "memory" and len(parts) > 1 else str(relative)

    def _on_episode_written(self, e: dict[str, Any], replay: bool) -> None:
        row = self._row(e["work"])
        if row is not None and not replay:
            row.episodes += 1
            self._dirty.add("works")

    def _on_call(self, e: dict[str, Any], replay: bool) -> None:
        self.transcripts.record(e)
        tokens = sum(e.get(k) or 0 for k in TOKEN_FIELDS)
        cost = e.get("cost_usd")
        if e.get("work") in self.val_works and cost is not None:
            self.val_cost += cost
        self.tokens += tokens
        if cost is None:
            self.cost_known = False
        else:
            self.cost += cost
        row = self._row(e.get("work"))
        if row is not None:
            row.tokens += tokens
            if cost is not None:
                row.cost = (row.cost or 0.0) + cost
            self._dirty.add("works")
        self._dirty.add("header")

    def _on_loss(self, e: dict[str, Any], replay: bool) -> None:
        row = self._row(e["work"])
        key = (e["epoch"], e["step"])
        if key not in self.steps:
            self.steps.append(key)
        assert row is not None
        row.loss = e["loss"]
        self.losses[row.name][key] = e["loss"]
        self.reports[row.name][key] = e["report"]
        if not replay:
            scores = ", ".join(f"{k} {v:.2f}" for k, v in e.get("scores", {}).items())
            self._say(row.name, None, f"◆ loss {e['loss']:.3f}" + (f" ({scores})" if scores else ""))
        self._dirty |= {"works", "curve", "report"}

    def _on_summary(self, e: dict[str, Any], replay: bool) -> None:
        if not replay:
            self._say(None, e.get("group"), f"  commonality report: {self._short(e.get('path', ''))}")

    def _on_micro_step(self, e: dict[str, Any], replay: bool) -> None:
        if replay:
            return
        counts = f"+{len(e['added'])} ~{len(e['changed'])} -{len(e['removed'])}"
        self._say(None, e["group"], f"✎ commit {e['after'][:7]} {e['subject']} ({counts})")
        self._dirty |= {"pool", "commits"}

    def _on_attribution(self, e: dict[str, Any], replay: bool) -> None:
        self.attribution = dict(e.get("notes") or {})
        self._dirty.add("pool")

    def _on_micro_step_skipped(self, e: dict[str, Any], replay: bool) -> None:
        if replay:
            return
        message = (
            f"{e.get('label') or 'group ' + str(e['group'])}: skipped after {e['attempts']} failed attempt(s), "
            f"the pool stays as it was ({e['reason']})"
        )
        self._say(None, e["group"], f"⊘ {message}")
        self.notices.append(message)
        self._dirty.add("notices")

    def _on_review_requested(self, e: dict[str, Any], replay: bool) -> None:
        if replay:
            return
        self.status, self.reviewing = "review", e["label"]
        self._dirty.add("header")

    def _on_decision(self, e: dict[str, Any], replay: bool) -> None:
        self.marks[e["after"]] = Mark(e["decision"], e["by"])
        if not replay:
            if self.status == "review":
                self.status = "running"
            self.reviewing = None
            note = f": {e['note']}" if e.get("note") else ""
            sign = SIGNS.get(e["decision"], "?")
            self._say(None, e["group"], f"{sign} {e['decision']} by {e['by']}{note}")
        self._dirty |= {"header", "commits"}

    def _on_pool_changed(self, e: dict[str, Any], replay: bool) -> None:
        self.head = e["head"]
        self._dirty |= {"pool", "commits"}

    def _on_history(self, e: dict[str, Any], replay: bool) -> None:
        self._dirty |= {"pool", "commits"}

    def _on_step_finished(self, e: dict[str, Any], replay: bool) -> None:
        key = (e["epoch"], e["step"])
        if e.get("mean_loss") is not None:
            self.means[key] = e["mean_loss"]
            self.mean_works[key] = self.step_works.get(key, frozenset()) - set(e.get("failed") or [])
            self._dirty.add("curve")
        if e.get("val_mean_loss") is not None:
            self.val_means[key] = e["val_mean_loss"]
            self.val_counts[key] = int(e.get("val_works_in_mean") or 0)
            self._dirty.add("curve")

    def _on_val_loss(self, e: dict[str, Any], replay: bool) -> None:
        if e.get("point") == "step":
            self.val_losses.setdefault(e["work"], {})[(e["epoch"], e["step"])] = e["loss"]
            self._dirty.add("curve")

    def _on_paused(self, e: dict[str, Any], replay: bool) -> None:
        if not replay:
            self.paused = bool(e["paused"])
            self._dirty.add("header")

    def _on_warning(self, e: dict[str, Any], replay: bool) -> None:
        if not replay:
            self.notices.append(e["message"])
            if e.get("work"):
                self._say(e["work"], None, f"! {e['message']}")
            self._dirty.add("notices")

    def _on_throttle(self, e: dict[str, Any], replay: bool) -> None:
        if replay:
            return
        if e["throttled"] != self.throttled:
            self.notices.append(("throttled: " if e["throttled"] else "throttle lifted: ") + e.get("reason", ""))
            self._dirty.add("notices")
        self.throttled = bool(e["throttled"])
        self._dirty.add("header")

    def _on_batch(self, e: dict[str, Any], replay: bool) -> None:
        if replay:
            return
        counts = ", ".join(f"{e.get(k, 0)} {k}" for k in ("processing", "succeeded", "errored", "expired") if e.get(k))
        self.batch = (
            "" if e["state"] == "ended" else f"batch {e['purpose']} {e['state']}" + (f" ({counts})" if counts else "")
        )
        self.notices.append(
            f"batch {e['batch_id']} for {e['purpose']} e{e['epoch']} s{e['step']}: {e['state']}"
            + (f" ({counts})" if counts else "")
        )
        self._dirty |= {"header", "notices"}

    def _on_run_finished(self, e: dict[str, Any], replay: bool) -> None:
        if replay:
            return
        self.status, self.reason, self.reviewing = e["status"], e.get("reason", ""), None
        self._dirty |= {"header", "notices"}
        self.notices.append(f"run {e['status']}" + (f": {e['reason']}" if e.get("reason") else ""))
