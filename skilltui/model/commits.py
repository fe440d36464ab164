"""One commit of the pool and one record of a micro-step, as every view shows them: the live
app's Commits tab, `skilltui review`, the evidence pages, the report and the backward prompt
take these records, so a decision reads the same everywhere.

Git says what a commit changed (`pool.repo` fills sha, parents, time, message and files); the
run's records say why and what came of it (`runs.records` joins the micro-step, the
decision and the loss around it; the live app adds the review mark as decisions arrive).
Nothing here reads a file or imports Textual: it is plain data and the words used for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .at import MicroKey
from .trailers import is_trailer

# The one map from a review decision to the sign and the words every view uses for it.
# "dropped" is a candidate of several (--candidates) that the reviewer did not choose.
SIGNS = {"approve": "✓", "rerun": "↻", "rollback": "↶", "dropped": "×", "pending": "…"}
DECISION_WORDS = {
    "approve": "approved",
    "rerun": "rerun",
    "rollback": "rolled back",
    "dropped": "dropped",
    "pending": "awaiting review",
}
LABEL = re.compile(r"epoch (\d+) step (\d+) micro (\d+)/(\d+)")


def decision_words(decision: str | None, by: str | None = None) -> str:
    """'approved by auto', 'rolled back by human', 'awaiting review' (no decision yet)."""
    word = DECISION_WORDS.get(decision or "pending", decision or "awaiting review")
    return f"{word} by {by}" if by and decision in SIGNS and decision != "pending" else word


# The sections of a commit body the backward agent writes, read back by the prompt and the views.
SECTIONS = ("observed", "changed", "prediction")
_SECTION = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(observed|changed|prediction)(?:\*\*)?\s*:\s*(.*)$", re.IGNORECASE)


def parse_body(message: str) -> dict[str, str]:
    """`Observed:` / `Changed:` / `Prediction:` sections of a commit message ("" where missing)."""
    found: dict[str, list[str]] = {name: [] for name in SECTIONS}
    current: str | None = None
    for line in message.splitlines()[1:]:
        if is_trailer(line):
            break  # the provenance trailers close the body (trailers.py); they are no section's text
        match = _SECTION.match(line)
        if match:
            current = match.group(1).lower()
            if match.group(2).strip():
                found[current].append(match.group(2).strip())
        elif current and line.strip():
            found[current].append(line.strip())
    return {name: " ".join(lines) for name, lines in found.items()}


@dataclass(frozen=True)
class Mark:
    """How a reviewer decided about the commit a micro-step made; `pending` while the review waits."""

    decision: str
    by: str = ""
    label: str = ""

    @property
    def sign(self) -> str:
        return SIGNS.get(self.decision, "?")

    @property
    def words(self) -> str:
        return decision_words(self.decision, self.by)


PENDING = Mark("pending")


@dataclass(frozen=True)
class MicroStepRecord:
    """One backward attempt of a micro-step and what came of it, as the run recorded it.

    The one record of a micro-step: the store's one reader (`store.micro_steps`) builds it
    and every view shows it. From an attempt's files (`checked.json`, `review.json` and the
    group's `batch.json`): what the history app, `review`, `blame`, the evidence pages and the
    prompt's rejected updates show; from a micro-step's `commit.txt`: its outcome, which the
    backward prompt's feedback lists; from the `micro_step` and `decision` events: what the
    report shows. Each fills what its source records and leaves the rest at its default (a
    `commit.txt` names no works). The losses
    around it are not kept here: they are the run model's figures for its step
    (`model.figures`), which each view looks up by `(epoch, step)`.
    """

    epoch: int
    step: int
    group: int
    attempt: int  # its number; in a micro-step's final record (`commit.txt`), how many attempts it took
    label: str
    folder: Path  # backward/g<G>
    works: list[str] = field(default_factory=list)  # whose loss reports it acted on
    decision: str | None = None  # approve, rerun, rollback, dropped, skipped; None while it awaits review
    by: str | None = None
    note: str = ""  # the reviewer's note on this attempt
    subject: str = ""  # its commit's subject, `train <label>`
    message: str = ""  # its commit message as recorded (what the agent wrote)
    after: str = ""  # the commit it made
    prediction: str = ""  # what its commit body said would happen
    reason: str = ""  # why it was skipped, or the reason given with its decision (the gate's)
    rerun_notes: tuple[str, ...] = ()  # the reviewer's notes on the attempts sent back before it
    added: tuple[str, ...] = ()  # the notes it added, changed and removed
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    gate: dict[str, Any] | None = None  # the gate's figures beside the decision (delta, low, high, n)

    @property
    def headline(self) -> str:
        """What the update did, in one line: the first line of its message that says something.

        A training commit's subject is only `train <label>`; the message the agent wrote says
        what changed. The subject stands in for a record that kept no message.
        """
        return next((line.strip() for line in self.message.splitlines() if line.strip()), "") or self.subject

    @property
    def short_label(self) -> str:
        if self.label.endswith(" consolidation"):  # an epoch's consolidation (engine/update/consolidation.py)
            return f"e{self.epoch} consolidation" + (f" a{self.attempt}" if self.attempt > 1 else "")
        m = LABEL.search(self.label)
        micro = f"{m.group(3)}/{m.group(4)}" if m else str(self.group)
        return f"e{self.epoch} s{self.step} m{micro}" + (f" a{self.attempt}" if self.attempt > 1 else "")

    @property
    def attempt_dir(self) -> Path:
        return self.folder / f"attempt{self.attempt}"

    @property
    def mark(self) -> Mark:
        return Mark(self.decision or "pending", self.by or "", self.label)


def plain_label(epoch: int, step: int, group: int) -> str:
    """A micro-step's label where the run's own (its `micro_step` event's, with the step's count of
    micro-steps) is not at hand."""
    return f"epoch {epoch} step {step} micro {group}"


def attempt_record(
    at: MicroKey, label: str, folder: Path, checked: dict[str, Any], review: dict[str, Any]
) -> MicroStepRecord:
    """The record of a checked attempt at `at` (epoch, step, group, attempt) from its own files:
    `checked.json` (what it committed) and `review.json` (how it was decided; {} while it waits),
    as `store.micro_steps` reads them."""
    return MicroStepRecord(
        *at,
        label=label,
        folder=folder,
        decision=review.get("decision"),
        by=review.get("by"),
        note=str(review.get("note") or ""),
        subject=str(checked.get("subject", "")),
        message=str(checked.get("message") or ""),
        # The commit that carries the decision's trailers once decided (engine/update/provenance.py);
        # the agent's own while it waits, and in runs from before trailers.
        after=str(review.get("commit") or checked.get("after") or ""),
        reason=str(review.get("reason") or ""),
        added=tuple(checked.get("added", [])),
        changed=tuple(checked.get("changed", [])),
        removed=tuple(checked.get("removed", [])),
        gate=review.get("gate"),
    )


@dataclass
class Commit:
    """One commit of the pool with everything known about it; a live list fills only what it has."""

    sha: str
    message: str = ""
    parents: list[str] = field(default_factory=list)
    time: int = 0
    files: list[tuple[str, str]] = field(default_factory=list)  # (A/M/D, path)
    in_history: bool = True  # reachable from HEAD: part of the pool as it stands
    mark: Mark | None = None  # the review decision about it, or PENDING while one waits
    micro: MicroStepRecord | None = None
    decision: str = ""  # what the decision column says: "approved by auto", "revert by human", ...
    loss_before: float | None = None
    loss_after: float | None = None
    # The works loss_before and loss_after are over: its step's, which may be more than its evidence.
    loss_works: tuple[str, ...] = ()
    kept_as: list[str] = field(default_factory=list)
    # Earlier attempts that produced this very commit (a deterministic agent reruns to the same one).
    earlier: list[MicroStepRecord] = field(default_factory=list)
    reverts: str | None = None
    reverted_by: str | None = None
    rerun_as: str | None = None  # the commit the rerun of this micro-step made instead
    # The commit body's prediction, and the mean of each loss part around the micro-step (what then happened).
    prediction: str = ""
    parts_before: dict[str, float] = field(default_factory=dict)
    parts_after: dict[str, float] = field(default_factory=dict)

    @property
    def short(self) -> str:
        return self.sha[:7]

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]

    @property
    def summary(self) -> str:
        """What the commit did in one line: a training commit's subject is only its micro-step's label
        (shown in a column of its own), so its first body line says it instead."""
        subject = self.subject
        if LABEL.fullmatch(subject.removeprefix("train ")):
            for line in self.message.splitlines()[1:]:
                line = line.strip().removeprefix("- ").strip()
                if line and not LABEL.fullmatch(line.removeprefix("train ")):
                    return line
        return subject

    def loss_scope(self) -> str:
        """Which works the loss figures are over: `over dead-air, night-oven (a step mean; its evidence
        is dead-air)` when they cover more than the works whose reports the micro-step read."""
        if not self.loss_works:
            return ""
        said = f"over {', '.join(self.loss_works)}"
        evidence = tuple(sorted(self.micro.works)) if self.micro is not None else ()
        if evidence and set(self.loss_works) != set(evidence):
            said += f" (a step mean; its evidence is {', '.join(evidence)})"
        return said

    @property
    def paths(self) -> list[str]:
        return [path for _, path in self.files]

    @property
    def outcome(self) -> str:
        """What the decision about it led to, in the few characters of a list column."""
        before = f"{self.loss_before:.3f}" if self.loss_before is not None else "?"
        decision = self.mark.decision if self.mark else ""
        if decision == "pending":
            return "awaiting review"
        if decision == "rollback":
            return f"{before} undone"
        if decision == "rerun":
            return f"→ {self.rerun_as[:7]}" if self.rerun_as else "rerun pending"
        if self.loss_before is None and self.loss_after is None:
            # A training commit whose step has not finished: its figures are still to come.
            return "…" if self.micro is not None else ""
        after = f"{self.loss_after:.3f}" if self.loss_after is not None else "…"
        return f"{before}→{after}"
