"""The rejected-update buffer: what the backward agent proposed and was refused, with the evidence.

An optimizer told only "rolled back" proposes the same edit again. Before each micro-step
the backward prompt lists the last `SHOWN` rejected attempts (rolled back, sent back for a
rerun, or a candidate dropped for a better one): their subject, the notes they touched, the
gate's delta and interval when there was a gate, and who rejected them and why. The
figures are numbers only: no validation work, script or report is named (the gate's
reason says "val", never which work).

Read from each attempt's `checked.json` and `review.json`, which the micro-step writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..model.view import StepKey
from .run import Run, read_json
from .settled import SettledCache, settled_and_live, step_keys

SHOWN = 8
ATTEMPT = re.compile(r"epoch(\d+)/step(\d+)/backward/g(\d+)/attempt(\d+)/review\.json")


@dataclass(frozen=True)
class Rejected:
    epoch: int
    step: int
    group: int
    attempt: int
    subject: str
    touched: list[str]
    decision: str  # rollback, rerun, or dropped (a candidate another candidate was chosen over)
    by: str
    why: str
    gate: dict | None

    def line(self) -> str:
        word = {"rollback": "rolled back", "dropped": "not chosen (another candidate was kept)"}.get(
            self.decision, "sent back for a rerun"
        )
        notes = ", ".join(self.touched) or "no note (an empty commit)"
        text = (
            f'- e{self.epoch}s{self.step} micro {self.group} attempt {self.attempt}: "{self.subject}" touched {notes}'
        )
        text += f"; {word} by {self.by or '?'}"
        if self.gate and self.gate.get("delta") is not None:
            g = self.gate
            if g.get("low") is not None and g.get("high") is not None:
                text += (
                    f"; validation Δ {g['delta']:+.3f} [{g['low']:+.3f}, {g['high']:+.3f}] "
                    f"at {float(g.get('confidence') or 0):.0%}, n={g.get('n')}"
                )
            else:
                text += f"; validation Δ {g['delta']:+.3f} (spread not measured), n={g.get('n')}"
        if self.why:
            text += f"\n  - why: {self.why}"
        return text


# A settled step's attempts are decided and their review.json never changes: they are read
# once per process (`settled.py`), so each micro-step reads only the live newest step (a long
# run would otherwise scan and read every earlier attempt at every micro-step).
_SETTLED: SettledCache[list[Rejected]] = SettledCache(list)


def _rejected_of(run: Run, key: StepKey) -> list[Rejected]:
    step = run.root / f"epoch{key[0]}" / f"step{key[1]}" / "backward"
    found = [_read_rejected(run, path) for path in sorted(step.glob("g*/attempt*/review.json"))]
    return [r for r in found if r is not None]


def rejected_updates(run: Run) -> list[Rejected]:
    """Every rejected attempt of the run, oldest first."""
    with _SETTLED.lock:
        fold = _SETTLED.get(run.root)
        settled, live = settled_and_live(step_keys(run.root), fold.through, None)
        for key in settled:
            fold.state.extend(_rejected_of(run, key))
            fold.through = key
        found = fold.state + [r for key in live for r in _rejected_of(run, key)]
    return sorted(found, key=lambda r: (r.epoch, r.step, r.group, r.attempt))


def _read_rejected(run: Run, review_path: Path) -> Rejected | None:
    where = ATTEMPT.fullmatch(review_path.relative_to(run.root).as_posix())
    if where is None:
        return None
    epoch, step, group, attempt = map(int, where.groups())
    checked_path = review_path.parent / "checked.json"
    try:
        review = read_json(review_path)
        checked = read_json(checked_path) if checked_path.exists() else {}
    except (ValueError, OSError):
        return None
    if not isinstance(review, dict) or review.get("decision") not in ("rollback", "rerun", "dropped"):
        return None
    message = str(checked.get("message") or "")
    headline = next((line.strip() for line in message.splitlines() if line.strip()), "")
    touched = [f"+{p}" for p in checked.get("added", [])] + [f"~{p}" for p in checked.get("changed", [])]
    touched += [f"-{p}" for p in checked.get("removed", [])]
    return Rejected(
        epoch,
        step,
        group,
        attempt,
        headline or str(checked.get("subject", "")),
        touched,
        str(review["decision"]),
        str(review.get("by") or ""),
        str(review.get("note") or review.get("reason") or ""),
        review.get("gate"),
    )


def rejected_text(run: Run) -> str:
    """The prompt section, or "" when nothing was rejected yet."""
    found = rejected_updates(run)
    if not found:
        return ""
    shown = found[-SHOWN:]
    lines = ["Rejected updates (the last ones first proposed and refused; do not propose them again as they were):"]
    if len(found) > len(shown):
        lines.append(f"({len(found) - len(shown)} earlier rejected updates not shown.)")
    return "\n".join(lines + [r.line() for r in shown])
