"""What the Output pane shows per work: the agents' streamed text, with a line for each stage, tool and result.

A renderer, not a fold of the run: it turns each event into text in the bounded buffer of
the works it concerns (a group's reduce and backward write to every work of the group).
The run's facts (stages, losses, decisions) live in the `RunView`; this only says them.
"""

from __future__ import annotations

from pathlib import Path

from ...core.words import counted
from ...model import events as ev
from ...model.commits import SIGNS
from ...model.view import RunView
from .output import OUTPUT_LIMIT, KeptTranscripts, OutputBuffer
from .scores_comment import ScoresFilter, without_scores


class OutputFeed:
    """One `OutputBuffer` per work; `feed(event)` writes what the event says; `grown` names the works that changed."""

    def __init__(self, view: RunView, limit: int = OUTPUT_LIMIT) -> None:
        self.view = view
        self.limit = limit
        self.buffers: dict[str, OutputBuffer] = {}
        self.grown: set[str] = set()
        self.transcripts = KeptTranscripts()  # what a stage an earlier session finished had written
        self.filters: dict[tuple[str | None, int | None, str], ScoresFilter] = {}  # per agent streaming

    def recall(self, history: list[ev.Event]) -> None:
        """Earlier sessions' calls: a stage they finished is skipped now, and shows what it wrote then."""
        for event in history:
            if isinstance(event, ev.Call):
                self.transcripts.record(event)

    def buffer(self, work: str) -> OutputBuffer:
        if work not in self.buffers:
            self.buffers[work] = OutputBuffer(self.limit)
        return self.buffers[work]

    def _targets(
        self, work: str | None, group: int | None, epoch: int | None = None, step: int | None = None
    ) -> list[str]:
        if work is not None:
            return [] if work in self.view.val_works else [work]
        key = (epoch, step) if epoch is not None and step is not None else self.view.current
        found = self.view.steps.get(key) if key is not None else None
        if found is None or group is None or not 1 <= group <= len(found.groups):
            return []
        return found.groups[group - 1]

    def _say(self, targets: list[str], text: str) -> None:
        for name in targets:
            self.buffer(name).line(text)
            self.grown.add(name)

    def short(self, path: str) -> str:
        """A tool path as the person thinks of it: relative to the run (or the pool), not the disk."""
        try:
            relative = Path(path).relative_to(self.view.run_dir)
        except ValueError:
            return path
        parts = relative.parts
        return str(Path(*parts[1:])) if parts and parts[0] == "memory" and len(parts) > 1 else str(relative)

    def feed(self, e: ev.Event) -> None:
        match e:
            case ev.Delta():
                text = self.filters.setdefault((e.work, e.group, e.role), ScoresFilter()).take(e.text)
                for name in self._targets(e.work, e.group) if text else []:
                    self.buffer(name).write(text)
                    self.grown.add(name)
            case ev.Stage(status="started"):
                step = self.view.steps.get((e.epoch, e.step))
                span = f" · episodes {step.first}-{step.last}" if e.work and step is not None else ""
                group = f" group {e.group}" if e.group else ""
                attempt = f" attempt {e.attempt}" if e.attempt else ""
                where = f"epoch {e.epoch} step {e.step}"
                self._say(
                    self._targets(e.work, e.group, e.epoch, e.step), f"── {e.stage}{group}{attempt} · {where}{span} ──"
                )
            case ev.Stage(status="skipped"):
                targets, group = self._targets(e.work, e.group, e.epoch, e.step), f" group {e.group}" if e.group else ""
                self._say(
                    targets, f"── {e.stage}{group} · epoch {e.epoch} step {e.step} · done in an earlier session ──"
                )
                for text in self.transcripts.texts(e.work, e.group, e.stage, (e.epoch, e.step), self.short):
                    self._say(targets, without_scores(text))
            case ev.Call():
                self.transcripts.record(e)
            case ev.Stage(status="failed"):
                self._say(self._targets(e.work, e.group, e.epoch, e.step), f"✗ {e.stage} failed: {e.error}")
            case ev.ToolUsed():
                tail = "" if e.ok else f": {e.error}"
                self._say(
                    self._targets(e.work, e.group), f"  {'▸' if e.ok else '✗'} {e.tool} {self.short(e.path)}{tail}"
                )
            case ev.Loss():
                scores = ", ".join(f"{k} {v:.2f}" for k, v in e.scores.items())
                self._say(self._targets(e.work, None), f"◆ loss {e.loss:.3f}" + (f" ({scores})" if scores else ""))
            case ev.Summary():
                self._say(self._targets(None, e.group, e.epoch, e.step), f"  commonality report: {self.short(e.path)}")
            case ev.MicroStep():
                counts = f"+{len(e.added)} ~{len(e.changed)} -{len(e.removed)}"
                self._say(
                    self._targets(None, e.group, e.epoch, e.step), f"✎ commit {e.after[:7]} {e.subject} ({counts})"
                )
            case ev.MicroStepSkipped():
                label = e.label or f"group {e.group}"
                self._say(
                    self._targets(None, e.group, e.epoch, e.step),
                    f"⊘ {label}: skipped after {counted(e.attempts, 'failed attempt')}, "
                    f"the pool stays as it was ({e.reason})",
                )
            case ev.DecisionMade():
                note = f": {e.note}" if e.note else ""
                self._say(
                    self._targets(None, e.group, e.epoch, e.step),
                    f"{SIGNS.get(e.decision, '?')} {e.decision} by {e.by}{note}",
                )
            case ev.Warning_() if e.work:
                self._say(self._targets(e.work, None), f"! {e.message}")
