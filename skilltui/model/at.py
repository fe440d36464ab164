"""The one coordinate of a place in a run: epoch, step, and as far down as the place goes.

A run is a grid: epochs of steps; a step's works (forward, loss) and its groups (reduce,
backward); a group's micro-step attempts; with `--candidates`, an attempt's candidates.
Every event, wire message, view key, validation point and record names a place in it, and
`At` is the one way to name it, so no two of them can disagree about a place: frozen,
hashable, ordered the way the run goes, and read from and written to the shapes already on
disk (event fields, a validation point's id, a trailer's `e0 s1 g0 a2`), so a run recorded
before it still reads.

No imports from the rest of the package: every layer stands on it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from functools import total_ordering
from typing import Any

StepKey = tuple[int, int]  # (epoch, step): `At.step_key`, how views and figures index a step
MicroKey = tuple[int, int, int, int]  # (epoch, step, group, attempt): `At.micro_key`, a micro-step attempt

# A validation point's id (`e0-s1`, `e0-s1-g0-a2-micro`): the name of its file under val/points/.
_POINT_ID = re.compile(r"^e(\d+)-s(\d+)(?:-g(\d+))?(?:-a(\d+))?(?:-(micro|before))?$")
# A commit trailer's step (`e0 s1 g0 a2`), as `git log` shows a micro-step.
_TRAILER = re.compile(r"^e(\d+) s(\d+) g(\d+) a(\d+)$")


class BadPlace(ValueError):
    """A text that names no place in a run (a malformed point id or trailer)."""


@total_ordering
@dataclass(frozen=True)
class At:
    """A place in a run; the fields below `step` are None where the place stops above them.

    Ordered as the run goes: by epoch, step, group, attempt, candidate, then work; a place
    that stops higher comes before the places inside it (a step before its groups).
    """

    epoch: int
    step: int
    group: int | None = None
    attempt: int | None = None
    candidate: int | None = None
    work: str | None = None

    # -- projections -----------------------------------------------------------------------

    @property
    def step_key(self) -> StepKey:
        """The step this place is in, as views and figures index steps."""
        return (self.epoch, self.step)

    @property
    def micro_key(self) -> MicroKey:
        """The micro-step attempt this place is in; a place above one has none."""
        if self.group is None or self.attempt is None:
            raise ValueError(f"{self} is not inside a micro-step attempt")
        return (self.epoch, self.step, self.group, self.attempt)

    @property
    def group_index(self) -> int:
        """The group of a place inside a micro-step (where its records are); a place above one has none."""
        if self.group is None:
            raise ValueError(f"{self} is not inside a micro-step")
        return self.group

    @property
    def at_step(self) -> At:
        return At(self.epoch, self.step)

    @property
    def micro(self) -> At:
        """The micro-step attempt, without candidate or work: what a review is about."""
        return At(self.epoch, self.step, *self.micro_key[2:])

    def to(self, **changes: Any) -> At:
        """This place with some coordinates changed (`at.to(attempt=2)`)."""
        return replace(self, **changes)

    def _order(self) -> tuple[Any, ...]:
        def low(value: int | None) -> int:
            return -1 if value is None else value

        return (self.epoch, self.step, low(self.group), low(self.attempt), low(self.candidate), self.work or "")

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, At):
            return NotImplemented
        return self._order() < other._order()

    # -- the shapes on disk and on the wire ------------------------------------------------

    def fields(self) -> dict[str, Any]:
        """The coordinates this place has, as keyword arguments of an event (`ev.Stage(**at.fields(), ...)`).

        Only the ones set: an event kind without a `group` field takes a step's place.
        """
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    def where(self) -> dict[str, Any]:
        """The coordinates below the step, the keywords of an agent's events (`work`, `group`, `attempt`)."""
        return {k: v for k, v in self.fields().items() if k in ("work", "group", "attempt")}

    @classmethod
    def of(cls, source: Mapping[str, Any] | object) -> At:
        """The place an event, a review request or an event's JSON object names.

        It reads `epoch` and `step` (required) and whichever of `group`, `attempt`,
        `candidate`, `work` the source has; `BadPlace` when it has no epoch or step.
        """
        get = source.get if isinstance(source, Mapping) else lambda name: getattr(source, name, None)
        epoch, step = get("epoch"), get("step")
        if not isinstance(epoch, int) or not isinstance(step, int):
            raise BadPlace(f"no place in a run: epoch {epoch!r}, step {step!r}")
        return cls(epoch, step, get("group"), get("attempt"), get("candidate"), get("work"))

    @classmethod
    def of_micro_key(cls, key: MicroKey | list[int]) -> At:
        """The attempt a `(epoch, step, group, attempt)` names (how the wire carries a review's key)."""
        if len(key) != 4 or not all(isinstance(n, int) and not isinstance(n, bool) for n in key):
            raise BadPlace(f"a micro-step is four whole numbers (epoch, step, group, attempt), not {key!r}")
        return cls(*key)

    @property
    def slug(self) -> str:
        """The place as a file or ref name: `e0-s1`, `e0-s1-g2`, `e0-s1-g2-a3` (validation points, kept refs)."""
        name = f"e{self.epoch}-s{self.step}"
        if self.group is not None:
            name += f"-g{self.group}"
        if self.attempt is not None:
            name += f"-a{self.attempt}"
        return name

    def point_id(self, kind: str = "step") -> str:
        """A validation point's id: `e0-s1` after a step, `e0-s1-g0-a2-micro` after an attempt."""
        return self.slug if kind == "step" else f"{self.slug}-{kind}"

    @classmethod
    def parse_point_id(cls, text: str) -> tuple[At, str]:
        """The place and kind (step, micro, before) of a validation point's id."""
        match = _POINT_ID.match(text)
        if match is None:
            raise BadPlace(f"not a validation point's id: {text!r}")
        e, s, g, a, kind = match.groups()
        return cls(int(e), int(s), _int(g), _int(a)), kind or "step"

    def trailer(self) -> str:
        """A micro-step attempt as its commit trailer says it: `e0 s1 g0 a2`."""
        e, s, g, a = self.micro_key
        return f"e{e} s{s} g{g} a{a}"

    @classmethod
    def parse_trailer(cls, text: str) -> At:
        match = _TRAILER.match(text.strip())
        if match is None:
            raise BadPlace(f"not a micro-step trailer (e<epoch> s<step> g<group> a<attempt>): {text!r}")
        epoch, step, group, attempt = map(int, match.groups())
        return cls(epoch, step, group, attempt)

    def __str__(self) -> str:
        parts = [f"epoch {self.epoch}", f"step {self.step}"]
        parts += [f"{name} {value}" for name, value in self.fields().items() if name not in ("epoch", "step")]
        return " ".join(parts)


def _int(text: str | None) -> int | None:
    return None if text is None else int(text)
