"""What `skilltui train` was asked to do: the settings, their checks, and the part that names a run.

The fields, each with its default, flag, help and bound, are declared once in
settings_fields.py; this class is what is done with them. `Settings.check` refuses a bad
value before anything is written (a field's own bound, then what only fields together can
say), and `identity` is the part of the settings a reopened run must share (what it
computes, not how fast or how it is paid for), so `open_run` can refuse a resume with other
settings in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..core.flags import flag_name, flag_of
from .data.test_works import test_identity
from .data.works import Work, covers, unbroken
from .settings_fields import DEFAULT_MARGIN, DEFAULT_MAX_EDIT_LINES, DEFAULT_POOL_BUDGET, GATE_MAX_REPEATS, Fields

__all__ = ["DEFAULT_MAX_EDIT_LINES", "DEFAULT_POOL_BUDGET", "Settings"]

_BACKWARD = {"consolidate": "backward"}  # a role that calls another's model and backend unless given its own


@dataclass
class Settings(Fields):
    """Everything `skilltui train` was asked to do: the fields (settings_fields.py) and their use."""

    @property
    def consolidation_budget(self) -> int:
        return self.consolidate_edit_lines or 4 * self.max_edit_lines

    @property
    def max_repeats(self) -> int:
        """The gate's most passes a side: `--gate-max-repeats`, else the shipped default."""
        return GATE_MAX_REPEATS if self.gate_max_repeats is None else self.gate_max_repeats

    def check(self) -> None:
        """Refuse, in one line, a value outside its field's bound, then what no single field can say."""
        for f in fields(self):
            spec, value = flag_of(f), getattr(self, f.name)
            if value is None:  # not given: nothing to check
                continue
            if spec.choices and value not in spec.choices:
                raise UsageError(f"{flag_name(f)} must be one of {', '.join(spec.choices)}")
            if spec.bound is not None and not spec.bound(value):
                raise UsageError(f"{flag_name(f)} {spec.problem}")
        if self.gate and not self.val_works:
            raise UsageError("--gate judges each update on validation; name a held-out work with --val-work DIR")
        if self.gate and self.no_backward:
            raise UsageError("--gate judges updates and --no-backward makes none; drop one of the two")
        if self.batch and {self.backend_for("loss"), self.backend_for("reduce")} != {"anthropic"}:
            raise UsageError(
                "--batch needs --backend anthropic (the Message Batches API); drop --batch or switch backend"
            )
        if self.gate and self.max_repeats < self.val_repeats:  # without --gate no pass is added
            raise UsageError(
                f"--gate-max-repeats must be at least --val-repeats ({self.val_repeats}): "
                "the passes the gate may add when unsure"
            )

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
                identity["gate_max_repeats"] = self.max_repeats
                if self.consolidate_margin != DEFAULT_MARGIN:  # only when set, so older runs reopen as they were
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
