"""What `skilltui train` was asked to do: the settings, their bounds, and the part that names a run.

`Settings.check` refuses a bad value before anything is written, and `identity` is the part
of the settings a reopened run must share (what it computes, not how fast or how it is paid
for), so `open_run` can refuse a resume with other settings in one line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from .data.test_works import test_identity
from .data.works import DEFAULT_MAX_SCRIPT_KB, Work, covers, unbroken

# The default bound on lines one micro-step may add plus remove: two full notes' worth.
DEFAULT_MAX_EDIT_LINES = 80
# The default bound on the pool's size in tokens (core.tokens): what a writer can still read whole.
DEFAULT_POOL_BUDGET = 4000
_BACKWARD = {"consolidate": "backward"}  # a role that calls another's model and backend unless given its own


# Each candidate is a whole backward call and a working copy of the pool, and a person
# weighs them side by side: past 16 a round costs more than any review can use.
MAX_CANDIDATES = 16
CANDIDATES_BOUND = (
    f"--candidates takes a whole number from 1 to {MAX_CANDIDATES} (backward attempts per micro-step; each is a "
    "full backward call and a working copy of the pool, and more than a reviewer can weigh side by side)"
)


@dataclass
class Settings:
    """Everything `skilltui train` was asked to do."""

    works: list[Path]
    steps: int = 3
    episodes_per_step: int = 2
    epochs: int = 1
    workers: int = 4
    group_size: int = 4
    no_backward: bool = False
    init_pool: Path | None = None
    backend: str = "offline"
    model: str | None = None
    role_models: dict[str, str] = field(default_factory=dict)
    role_backends: dict[str, str] = field(default_factory=dict)  # --role-model ROLE=BACKEND:MODEL
    base_url: str | None = None  # --base-url, the openai backend's server: how a run reaches it, not what it computes
    runs_dir: Path = Path("runs")
    run_id: str | None = None
    prompts: Path | None = None
    offline_latency: float = 0.0
    auto: bool = False
    max_cost: float | None = None
    val_works: list[Path] = field(default_factory=list)
    gate: bool = False
    # Removed: the interval rule replaced it. Kept as a field only to refuse it with a pointer.
    gate_tolerance: float | None = None
    gate_confidence: float = 0.9
    gate_max_repeats: int = 3
    val_repeats: int = 1
    val_episodes: int | None = None
    offline_noise: float = 0.0
    offline_noise_call: float = 0.0
    consolidate_margin: float = 0.01  # gate.DEFAULT_MARGIN: what a consolidation may cost in validation loss
    judge_weight: float = 0.0
    # Send the loss judge and reduce calls through the Message Batches API (half price, slower).
    # How a run is paid for, not what it computes, so a run may resume with or without it.
    batch: bool = False
    # Per-role call timeouts in seconds (the seeds' defaults); reduce shares the loss bound.
    forward_timeout: float = 2400.0
    loss_timeout: float = 1800.0
    backward_timeout: float = 5400.0
    backward_retries: int = 2
    # Backward attempts per micro-step from the same parent; the reviewer keeps one or none.
    candidates: int = 1
    strict: bool = False
    max_edit_lines: int = DEFAULT_MAX_EDIT_LINES
    max_script_kb: int = DEFAULT_MAX_SCRIPT_KB  # how far a run goes, not what it computes: no identity
    pool_budget: float = DEFAULT_POOL_BUDGET
    # An epoch that kept an update ends with a consolidation micro-step (consolidation.py).
    consolidate: bool = True
    consolidate_edit_lines: int | None = None  # its edit budget; None: 4 x --max-edit-lines
    test_works: list[Path] = field(default_factory=list)  # --test-work: only the writer's forward sees them
    test_episodes: int | None = None  # episodes 1..N of each (None: --episodes-per-step)
    test_repeats: int = 2  # passes per side at each test point
    test_every: str = "epoch"  # a test point after every epoch, or only at the "end"

    @property
    def consolidation_budget(self) -> int:
        return self.consolidate_edit_lines or 4 * self.max_edit_lines

    def check(self) -> None:
        for name in ("steps", "episodes_per_step", "epochs", "workers", "max_script_kb"):
            if getattr(self, name) < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
        if self.group_size < 0:
            raise UsageError("--group-size must be 0 (every work in one group) or more")
        # nan compares false with everything, so each bound is written to fail for it too.
        if not (math.isfinite(self.offline_latency) and self.offline_latency >= 0):
            raise UsageError("--offline-latency must be 0 or more seconds")
        if not 0.0 <= self.judge_weight <= 1.0:
            raise UsageError("--judge-weight must be between 0 (the engine's loss alone) and 1 (the rubric's alone)")
        if self.max_cost is not None and not (math.isfinite(self.max_cost) and self.max_cost > 0):
            raise UsageError("--max-cost must be a positive number of US dollars")
        for role in ("forward", "loss", "backward"):
            if not (math.isfinite(getattr(self, f"{role}_timeout")) and getattr(self, f"{role}_timeout") > 0):
                raise UsageError(f"--{role}-timeout must be a positive number of seconds")
        if self.backward_retries < 0:
            raise UsageError("--backward-retries must be 0 (no retry) or more")
        if not (isinstance(self.candidates, int) and 1 <= self.candidates <= MAX_CANDIDATES):
            raise UsageError(CANDIDATES_BOUND)
        if self.max_edit_lines < 1:
            raise UsageError("--max-edit-lines must be at least 1 (lines one micro-step may add and remove)")
        if self.consolidate_edit_lines is not None and self.consolidate_edit_lines < 1:
            raise UsageError("--consolidate-edit-lines must be at least 1 (lines a consolidation may add and remove)")
        if not (math.isfinite(self.pool_budget) and self.pool_budget >= 1):
            raise UsageError("--pool-budget must be a positive number of tokens (default 4000)")
        if self.gate and not self.val_works:
            raise UsageError("--gate judges each update on validation; name a held-out work with --val-work DIR")
        if self.gate and self.no_backward:
            raise UsageError("--gate judges updates and --no-backward makes none; drop one of the two")
        self._check_gate()

    def _check_gate(self) -> None:
        """The gate's and validation's numbers; each bound is written so that nan fails it too."""
        if self.gate_tolerance is not None:
            raise UsageError(
                "--gate-tolerance is gone: the gate keeps an update only when its interval is below zero; "
                "set how sure it must be with --gate-confidence C (default 0.9)"
            )
        if not (math.isfinite(self.gate_confidence) and 0.5 <= self.gate_confidence < 1.0):
            raise UsageError("--gate-confidence must be at least 0.5 and below 1, e.g. 0.9 for a 90% interval")
        if self.val_repeats < 1:
            raise UsageError("--val-repeats must be at least 1 (passes over the validation works per measurement)")
        if self.gate and self.gate_max_repeats < self.val_repeats:  # without --gate no pass is added
            raise UsageError(
                f"--gate-max-repeats must be at least --val-repeats ({self.val_repeats}): "
                "the passes the gate may add when unsure"
            )
        if self.val_episodes is not None and self.val_episodes < 1:
            raise UsageError("--val-episodes must be at least 1 (episodes of each validation work per pass)")
        if not (math.isfinite(self.offline_noise) and 0.0 <= self.offline_noise <= 1.0):
            raise UsageError("--offline-noise must be between 0 (a deterministic writer) and 1 (every paragraph)")
        if not (math.isfinite(self.offline_noise_call) and 0.0 <= self.offline_noise_call <= 1.0):
            raise UsageError("--offline-noise-call must be between 0 (no bad calls) and 1 (every call skims)")
        if not (math.isfinite(self.consolidate_margin) and 0.0 <= self.consolidate_margin < 1.0):
            raise UsageError("--consolidate-margin must be at least 0 and below 1 (a loss it may cost), e.g. 0.01")

    @property
    def val_last(self) -> int:
        """The last episode every validation pass writes."""
        return self.val_episodes or self.episodes_per_step

    def timeout_for(self, role: str) -> float:
        """The bound on one call of `role`: reduce folds loss reports, so it shares the loss bound."""
        if role == "forward":
            return self.forward_timeout
        if role == "backward":
            return self.backward_timeout
        return self.loss_timeout

    def check_works(self, works: list[Work]) -> None:
        """A run whose first step no work can fill would 'finish' having trained nothing."""
        per = self.episodes_per_step
        if any(covers(w, 1, per) for w in works):
            return
        longest = max(unbroken(w) for w in works)
        fewer = f", or pass --episodes-per-step {longest} or less" if longest else ""
        gapped = [w for w in works if max(w.episodes) >= per]
        if gapped:
            # The episodes are there in number but not in order: say which one is missing.
            work = gapped[0]
            missing = unbroken(work) + 1
            numbers = ", ".join(str(n) for n in work.episodes)
            raise UsageError(
                f"{work.root} has no episode {missing} (its episodes are {numbers}), so no work has all of "
                f"episodes 1-{per} for the first step; add episode {missing} to human/{fewer}"
            )
        raise UsageError(
            f"--episodes-per-step {per} is more than any work has (the longest has {longest} episodes), "
            f"so no step could run; add episodes to human/{fewer}"
        )

    def model_for(self, role: str) -> str | None:
        # A consolidation is a backward micro-step of another kind: backward's model unless given its own.
        return self.role_models.get(role) or self.role_models.get(_BACKWARD.get(role, role), self.model)

    def backend_for(self, role: str) -> str:
        """The backend a role's calls go to: its --role-model BACKEND, else --backend."""
        return self.role_backends.get(role) or self.role_backends.get(_BACKWARD.get(role, role), self.backend)

    def models_by_role(self, backend_model: str | None) -> dict[str, str]:
        """The model each training role calls: its --role-model, else --model, else the backend's default."""
        return {
            role: self.model_for(role) or backend_model or "default"
            for role in ("forward", "loss", "reduce", "backward")
        }

    def identity(self, works: list[Work], val_works: list[Work] | None = None) -> dict[str, Any]:
        """The settings that decide what a run computes. Reopening with others is refused.

        Workers, latency, auto, the cost cap, timeouts, retries and --strict change how fast
        or how far a run goes, never what it computes, so they may differ between sessions
        of one run. The edit budget is the learning rate: it is part of the identity, but
        only when it is not the default, so runs started before it existed still resume.
        """
        identity: dict[str, Any] = {
            "works": sorted(w.name for w in works),
            "work_paths": {w.name: str(w.root) for w in sorted(works, key=lambda w: w.name)},
            "steps": self.steps,
            "episodes_per_step": self.episodes_per_step,
            "epochs": self.epochs,
            "group_size": self.group_size,
            "no_backward": self.no_backward,
            "init_pool": str(Path(self.init_pool).resolve()) if self.init_pool else None,
            "backend": self.backend,
            "model": self.model,
            "role_models": dict(sorted(self.role_models.items())),
            "prompts": str(Path(self.prompts).resolve()) if self.prompts else None,
            # Only when set, so runs started before these flags existed still reopen.
            **({"judge_weight": self.judge_weight} if self.judge_weight else {}),
            **({"role_backends": dict(sorted(self.role_backends.items()))} if self.role_backends else {}),
        }
        if self.max_edit_lines != DEFAULT_MAX_EDIT_LINES:
            identity["max_edit_lines"] = self.max_edit_lines
        if self.pool_budget != DEFAULT_POOL_BUDGET:  # like the edit budget: a bound on what training keeps
            identity["pool_budget"] = self.pool_budget
        if not self.consolidate or self.consolidate_edit_lines is not None:  # only when not the default
            identity["consolidate"] = self.consolidation_budget if self.consolidate else False
        if val_works:
            # Only present when used, so runs made before validation existed reopen as they were.
            identity["val_works"] = sorted(w.name for w in val_works)
            identity["val_work_paths"] = {w.name: str(w.root) for w in sorted(val_works, key=lambda w: w.name)}
            identity["gate"] = self.gate
            if self.gate:
                identity["gate_confidence"] = self.gate_confidence
                identity["gate_max_repeats"] = self.gate_max_repeats
                if self.consolidate_margin != 0.01:  # only when set, so older runs reopen as they were
                    identity["consolidate_margin"] = self.consolidate_margin
            # Only when not the default, so runs made before these flags existed reopen as they were.
            if self.val_repeats != 1:
                identity["val_repeats"] = self.val_repeats
            if self.val_episodes is not None:
                identity["val_episodes"] = self.val_episodes
        if self.offline_noise:
            identity["offline_noise"] = self.offline_noise
        if self.offline_noise_call:
            identity["offline_noise_call"] = self.offline_noise_call
        identity.update(test_identity(self))  # only when used, so earlier runs reopen as they were
        return identity
