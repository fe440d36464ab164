"""Provenance of a micro-step's commit, as git trailers a person and `git log` can read.

Every commit training keeps (or keeps under a ref: a rerun, a roll back, a candidate not
chosen) ends with a trailer block:

```
Skilltui-Step: e1 s2 g1 a2
Skilltui-Evidence: alpha ep 1-2 (loss 0.412), beta ep 1-2 (loss 0.380)
Skilltui-Val: 0.402 → 0.391 (Δ -0.011, [-0.020, -0.002] at 95.4%, n 8)
Skilltui-Cost: $0.0123
Skilltui-Kind: consolidation
Skilltui-Decision: kept by auto
```

`git log --format='%(trailers)'` prints them. The engine writes them once, when the
micro-step is decided and every figure is known (`engine/update/provenance.py`); a decision made
after that (a revert in `skilltui review`) is a git note under `refs/notes/skilltui`, so a
commit never changes after the fact. A commit made before trailers existed has none, and
every reader treats that as "not recorded", never as an error.

Plain data and words, no git: the engine writes with it, `skilltui blame` and the commit
body parser read with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..core.safe_text import message_lines
from .review import GateVerdict, interval_text

PREFIX = "Skilltui-"
NOTES_REF = "refs/notes/skilltui"  # where decisions made later are written (git notes)
KEYS = ("Step", "Evidence", "Val", "Cost", "Kind", "Decision")
TRAILER = re.compile(rf"^{PREFIX}([A-Za-z]+):\s*(.*)$")
# What the trailer says of each review decision: the words a person reads in `git log`.
DECISIONS = {"approve": "kept", "rerun": "rerun", "rollback": "rolled back", "dropped": "dropped"}


@dataclass(frozen=True)
class Provenance:
    """The trailers of one commit, by key without the prefix ("Step", "Val", ...); {} when it has none."""

    values: dict[str, list[str]]

    def get(self, key: str) -> str:
        """The last value given for `key` ("" when none): a git note may add a newer decision."""
        found = self.values.get(key, [])
        return found[-1] if found else ""

    def all(self, key: str) -> list[str]:
        return list(self.values.get(key, []))

    def __bool__(self) -> bool:
        return bool(self.values)


def is_trailer(line: str) -> bool:
    return TRAILER.match(line.strip()) is not None


# What an agent's line must not look like: a Skilltui trailer in any case, spacing or separator.
LOOKALIKE = re.compile(rf"^\W*{PREFIX}[\w-]*\s*[:=]", re.IGNORECASE)


def agent_message(text: str) -> str:
    """An agent's commit message as the engine keeps it: one kind of line end, no control character,
    and no line that looks like a trailer, since only the engine writes provenance (engine/update/provenance.py)."""
    lines = message_lines(text).split("\n")
    return "\n".join(line for line in lines if not LOOKALIKE.match(line)).strip("\n")


def parse(*texts: str) -> Provenance:
    """The Skilltui trailers of a commit message and of its git notes, in the order given."""
    values: dict[str, list[str]] = {}
    for text in texts:
        for line in text.splitlines():
            found = TRAILER.match(line.strip())
            if found:
                values.setdefault(found.group(1), []).append(found.group(2).strip())
    return Provenance(values)


def block(pairs: Iterable[tuple[str, str]]) -> str:
    """The trailer lines for (key, value) pairs; a value is kept to one line, as a trailer must be."""
    return "\n".join(f"{PREFIX}{key}: {' '.join(value.split())}" for key, value in pairs)


def decision_value(action: str, by: str, why: str = "") -> str:
    words = f"{DECISIONS.get(action, action)} by {by}" if by else DECISIONS.get(action, action)
    return f"{words} ({why})" if why else words


def val_value(verdict: GateVerdict) -> str:
    """'0.402 → 0.391 (Δ -0.011, [-0.020, -0.002] at 95.4%, n 8)'; 'not measured' without figures."""
    v = verdict
    if v.before is None or v.after is None:
        return "not measured"
    text = f"{v.before:.3f} → {v.after:.3f}"
    facts = []
    if v.delta is not None:
        facts.append(f"Δ {v.delta:+.3f}")
    if v.low is not None and v.high is not None:
        facts.append(interval_text(v.low, v.high, v.level))
    if v.n:
        facts.append(f"n {v.n}")
    return f"{text} ({', '.join(facts)})" if facts else text


def cost_value(cost_usd: float | None, calls: int) -> str:
    if calls == 0:
        return "no call recorded"
    if cost_usd is None:
        return f"unknown ({calls} call{'s' if calls != 1 else ''}, no price for the model)"
    return f"${cost_usd:.4f} ({calls} call{'s' if calls != 1 else ''})"
