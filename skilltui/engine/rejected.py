"""The rejected-update buffer: what the backward agent proposed and was refused, with the evidence.

An optimizer told only "rolled back" proposes the same edit again. Before each micro-step
the backward prompt lists the last `SHOWN` rejected attempts (rolled back or sent back for
a rerun): their subject, the notes they touched, the gate's delta and interval when there
was a gate, and who rejected them and why. The figures are numbers only: no validation
work, script or report is named (the gate's reason says "val", never which work).

Read from each attempt's `checked.json` and `review.json`, which the micro-step writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .run import Run, read_json

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
    decision: str  # rollback or rerun
    by: str
    why: str
    gate: dict | None

    def line(self) -> str:
        word = "rolled back" if self.decision == "rollback" else "sent back for a rerun"
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


def rejected_updates(run: Run) -> list[Rejected]:
    """Every rejected attempt of the run, oldest first."""
    found: list[Rejected] = []
    for review_path in run.root.glob("epoch*/step*/backward/g*/attempt*/review.json"):
        where = ATTEMPT.fullmatch(review_path.relative_to(run.root).as_posix())
        if where is None:
            continue
        epoch, step, group, attempt = map(int, where.groups())
        checked_path = review_path.parent / "checked.json"
        try:
            review = read_json(review_path)
            checked = read_json(checked_path) if checked_path.exists() else {}
        except (ValueError, OSError):
            continue
        if review.get("decision") not in ("rollback", "rerun"):
            continue
        message = str(checked.get("message") or "")
        headline = next((line.strip() for line in message.splitlines() if line.strip()), "")
        touched = [f"+{p}" for p in checked.get("added", [])] + [f"~{p}" for p in checked.get("changed", [])]
        touched += [f"-{p}" for p in checked.get("removed", [])]
        found.append(
            Rejected(
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
        )
    return sorted(found, key=lambda r: (r.epoch, r.step, r.group, r.attempt))


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
