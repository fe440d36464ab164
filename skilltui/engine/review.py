"""The review protocol: after a backward micro-step passes its checks, a reviewer decides.

The engine awaits `reviewer.review(request)` and acts on the `Decision` it returns:

- approve: the commit stands and the loop goes on;
- rerun: the pool goes back to the commit before, the attempt stays on record, and the
  backward pass runs again with the reviewer's note in its prompt;
- rollback: the pool goes back to the commit before and the loop goes on without it.

`--auto` plugs in `AutoReviewer`; the terminal app plugs in a person. Nothing else differs
between the two modes, which is why this is a protocol and not a flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

Action = Literal["approve", "rerun", "rollback"]
ACTIONS: tuple[Action, ...] = ("approve", "rerun", "rollback")


@dataclass(frozen=True)
class GateVerdict:
    """What `--gate` found: mean validation loss before and after the micro-step, and its advice."""

    before: float | None
    after: float | None
    works: int
    tolerance: float
    advice: Literal["keep", "rollback", "none"]
    reason: str
    cost_usd: float = 0.0


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


@dataclass(frozen=True)
class Decision:
    action: Action
    by: Literal["human", "auto"]
    note: str = ""
    reason: str = ""

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown review action {self.action!r}; expected one of {ACTIONS}")


class Reviewer(Protocol):
    async def review(self, request: ReviewRequest) -> Decision: ...


class AutoReviewer:
    """The unattended reviewer of `--auto`: it approves every micro-step that passed its checks,
    except that with `--gate` it follows the gate: a micro-step that raised validation loss by
    more than the tolerance is rolled back."""

    def __init__(self, action: Action = "approve") -> None:
        self.action = action

    async def review(self, request: ReviewRequest) -> Decision:
        gate = request.gate
        if gate is not None and gate.advice == "rollback":
            return Decision("rollback", "auto", reason=gate.reason)
        return Decision(self.action, "auto", reason=gate.reason if gate is not None else "")
