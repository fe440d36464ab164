"""The review protocol: what a reviewer is asked about one micro-step, and what it answers.

The engine awaits `reviewer.review(request)` after a backward micro-step passed its checks
and acts on the `Decision` it returns (approve, rerun, rollback). `--auto` plugs in the
engine's `AutoReviewer`; the live app plugs in a person through its review screen.

These types live in the run model, below the engine, because they are the one place where
an interface talks back to training: the engine, the drivers' wire and the app all use
them, and each of those sits above the model in the layers contract (pyproject.toml).
Like the events, they are plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

from .plain import plain_fields

Action = Literal["approve", "rerun", "rollback"]
ACTIONS: tuple[Action, ...] = ("approve", "rerun", "rollback")


@dataclass(frozen=True)
class GateVerdict:
    """What `--gate` found: mean validation loss before and after the micro-step, and its advice.

    `delta` is the mean of the paired deltas (after - before, unit by unit and pass by pass),
    `low`/`high` the interval on it at `level` (None when no spread was measured), `n`
    how many deltas, `passes` how many passes each side had. A verdict recorded before the
    interval rule has none of them. `confidence` is the whole decision's (`--gate-confidence`);
    `level` is each look's two-sided level, higher with more looks or candidates (gate.Rule),
    so a label that said `confidence` would claim a narrower interval than was computed.
    None in verdicts recorded before it was kept: their level is unknown.
    """

    before: float | None
    after: float | None
    works: int
    advice: Literal["keep", "rollback", "none"]
    reason: str
    cost_usd: float = 0.0
    n: int = 0
    delta: float | None = None
    low: float | None = None
    high: float | None = None
    confidence: float | None = None
    passes: int = 0
    level: float | None = None


@dataclass(frozen=True)
class CandidateView:
    """One of several candidates of a micro-step (`--candidates K`): its commit, diff, verdict and reads."""

    number: int  # 1..K: the candidate's ref is refs/skilltui/candidates/<epoch>-<step>-<group>/<number>
    attempt: int
    after: str
    subject: str
    patch: str
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    message: str = ""
    reads: list[str] = field(default_factory=list)  # the notes its backward agent opened
    gate: GateVerdict | None = None
    lands: dict[str, str] = field(default_factory=dict)  # as ReviewRequest.lands, for this candidate


@dataclass(frozen=True)
class ReviewRequest:
    """Everything a reviewer needs to judge one micro-step, with no need to open the run."""

    run_dir: Path
    epoch: int
    step: int
    group: int
    attempt: int
    label: str
    works: list[str]
    before: str
    after: str
    subject: str
    patch: str
    evidence: str
    reports: dict[str, str]
    lint_ok: bool
    lint_problems: list[str]
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    message: str = ""
    gate: GateVerdict | None = None
    # With --candidates K above 1: every candidate that passed its checks, ranked best first
    # (the first is the one the fields above describe). Empty for one candidate.
    candidates: list[CandidateView] = field(default_factory=list)
    # A rerun's attempt: the reviewers' notes its prompt carried, oldest first (they asked for it).
    reviewer_notes: list[str] = field(default_factory=list)
    # The commit a person's decision keeps, by action: `after` stamped with its trailers, the id
    # history shows (approve: the pool's next HEAD; rollback, rerun: kept under refs/skilltui).
    # `after` is the agent's own commit, which no history holds once decided.
    lands: dict[str, str] = field(default_factory=dict)

    def showing(self, attempt: int) -> ReviewRequest:
        """This request as it reads with the candidate made by `attempt` in front."""
        c = next((c for c in self.candidates if c.attempt == attempt), None)
        if c is None:
            return self
        fields = ("after", "subject", "patch", "added", "changed", "removed", "message", "gate", "attempt", "lands")
        return replace(self, **{name: getattr(c, name) for name in fields})


def landing(request: ReviewRequest, action: str) -> str:
    """The commit `action` by a person keeps, or the agent's when the request does not say (an older trainer)."""
    return request.lands.get(action, request.after)


@dataclass(frozen=True)
class Decision:
    action: Action
    by: Literal["human", "auto"]
    note: str = ""
    reason: str = ""
    # Which candidate an approve keeps, by its attempt; None keeps the one the request shows first.
    attempt: int | None = None

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown review action {self.action!r}; expected one of {ACTIONS}")


class Reviewer(Protocol):
    async def review(self, request: ReviewRequest) -> Decision: ...


# -- across a process boundary: the app's trainer process sends requests (drivers/messages.py) --


def level_text(level: float) -> str:
    """`90%`, `95.4%`: a level to the tenth it was computed at (Pocock's nominal levels are not round)."""
    text = f"{100 * level:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"


def interval_text(low: float | None, high: float | None, level: float | None) -> str:
    """A gate interval as every view labels it: `[-0.060, -0.022] at 95.4%`, at the level it was computed at.

    The one place the label is made (review screen, report, commit trailers, the backward
    prompt's rejected list), so no view can call a per-look interval the decision's.
    """
    if low is None or high is None:
        return "spread not measured"
    shown = f"[{low:+.3f}, {high:+.3f}]"
    return f"{shown} (level not recorded)" if level is None else f"{shown} at {level_text(level)}"


def delta_text(delta: float, low: float | None, high: float | None, level: float | None, n: int | None) -> str:
    """A gate verdict's figures as the review screen and the report print them:
    `Δ -0.041 [-0.060, -0.022] at 95.4%, n=6`, or `spread not measured` in place of the interval."""
    return f"Δ {delta:+.3f} {interval_text(low, high, level)}, n={n}"


def request_to_dict(request: ReviewRequest) -> dict[str, Any]:
    """A request as JSON-ready data (paths as strings); `drivers.messages` reads it back, checked."""
    data = plain_fields(request)
    data["run_dir"] = str(request.run_dir)
    return data
