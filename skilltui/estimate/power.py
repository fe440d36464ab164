"""What a gated run's validation set can detect, said before the first call.

A gate on two validation episodes rolls back almost every real improvement as unclear, and
a person only finds out after paying for the run. So the estimate states, from the
validation set's size and the gate's budget alone, the smallest true improvement the gate
keeps 80% of the time, and what it would take to detect half of it.

Nothing is measured yet, so the writer's luck is assumed (`EPISODE_SD`, `CALL_SD`, the
figures the gate's bench uses; docs/gate-statistics.md). One pass's mean over a work's E
episodes varies by `v = sd_e^2 / E + sd_call^2`; the mean delta over W works at P passes a
side has standard error `sqrt(2 v / (W P))`; the smallest change kept with power 0.8 at a
one-sided level a is `(z_{1-a} + z_{0.8}) * se` (stats.detectable), each look at the
level the gate uses for its last one (Pocock's, `gate.Rule.nominal`). Halving it needs a
quarter of the variance: four times the works, or (only when the call-to-call part is
below a quarter of v) enough episodes per work.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..engine.settings import Settings
from ..engine.validation.gate import Rule
from ..engine.validation.stats import detectable

EPISODE_SD = 0.05  # one episode's loss from pass to pass
CALL_SD = 0.025  # a shift shared by every episode one writing call wrote
LARGE_DF = 1000  # nothing measured: the normal quantile, the best case for the set's size


@dataclass(frozen=True)
class Power:
    """The smallest improvement the gate keeps 80% of the time, and what would halve it."""

    smallest: float
    works: int
    episodes: int
    passes: int
    works_for_half: int
    episodes_for_half: int | None  # None: no number of episodes halves it (the call-to-call part is too large)

    @property
    def text(self) -> str:
        more = f"{self.works_for_half} validation works of {self.episodes} episodes"
        if self.episodes_for_half is not None:
            more += f", or {self.episodes_for_half} episodes (--val-episodes) on each of the {self.works}"
        else:
            more += " (more episodes alone cannot: one call's shared luck is too large a part)"
        return (
            f"the gate can detect an improvement in validation loss of about {self.smallest:.3f} "
            f"(kept 80% of the time) on {self.works} validation work{'s' * (self.works != 1)} of "
            f"{self.episodes} episodes at up to {self.passes} passes a side; to detect half that "
            f"({self.smallest / 2:.3f}) would take {more} (assumes a writer whose episode losses vary by "
            f"{EPISODE_SD:g} from pass to pass and whose calls shift by {CALL_SD:g})"
        )


def gate_power(
    works: int, episodes: int, passes: int, nominal: float, episode_sd: float = EPISODE_SD, call_sd: float = CALL_SD
) -> Power:
    """The gate's detectable improvement for `works` validation works of `episodes` at `passes` a side."""
    if works < 1 or episodes < 1 or passes < 1:
        raise ValueError("works, episodes and passes must each be at least 1")
    v = episode_sd**2 / episodes + call_sd**2
    smallest = detectable(math.sqrt(v), works, passes, nominal, LARGE_DF)
    room = v / 4 - call_sd**2
    more_episodes = math.ceil(episode_sd**2 / room - 1e-9) if room > 0 else None
    return Power(smallest, works, episodes, passes, 4 * works, more_episodes)


def gate_statement(settings: Settings, works: int) -> str:
    """What `works` validation works can detect at the gate's settings: looks, candidates, episodes."""
    passes = max(settings.max_repeats, settings.val_repeats)
    nominal = Rule(settings.gate_confidence, passes - settings.val_repeats + 1, max(settings.candidates, 1)).nominal
    return gate_power(works, settings.val_episodes or settings.episodes_per_step, passes, nominal).text
