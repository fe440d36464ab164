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
from pathlib import Path

from ...model.at import StepKey
from ...model.commits import MicroStepRecord, attempt_record, plain_label
from ...store.run import Run, read_json
from ...store.settled import SettledCache, settled_and_live, step_keys

SHOWN = 8
ATTEMPT = re.compile(r"epoch(\d+)/step(\d+)/backward/g(\d+)/attempt(\d+)/review\.json")


def rejected_line(r: MicroStepRecord) -> str:
    """One refused attempt as the prompt lists it: what it touched, who refused it, the gate's figures, why."""
    word = {"rollback": "rolled back", "dropped": "not chosen (another candidate was kept)"}.get(
        r.decision or "", "sent back for a rerun"
    )
    touched = [f"+{p}" for p in r.added] + [f"~{p}" for p in r.changed] + [f"-{p}" for p in r.removed]
    notes = ", ".join(touched) or "no note (an empty commit)"
    text = f'- e{r.epoch}s{r.step} micro {r.group} attempt {r.attempt}: "{r.headline}" touched {notes}'
    text += f"; {word} by {r.by or '?'}"
    if r.gate and r.gate.get("delta") is not None:
        g = r.gate
        if g.get("low") is not None and g.get("high") is not None:
            text += (
                f"; validation Δ {g['delta']:+.3f} [{g['low']:+.3f}, {g['high']:+.3f}] "
                f"at {float(g.get('confidence') or 0):.0%}, n={g.get('n')}"
            )
        else:
            text += f"; validation Δ {g['delta']:+.3f} (spread not measured), n={g.get('n')}"
    if why := r.note or r.reason:
        text += f"\n  - why: {why}"
    return text


# A settled step's attempts are decided and their review.json never changes: they are read
# once per process (`settled.py`), so each micro-step reads only the live newest step (a long
# run would otherwise scan and read every earlier attempt at every micro-step).
_SETTLED: SettledCache[list[MicroStepRecord]] = SettledCache(list)


def _rejected_of(run: Run, key: StepKey) -> list[MicroStepRecord]:
    step = run.root / f"epoch{key[0]}" / f"step{key[1]}" / "backward"
    found = [_read_rejected(run, path) for path in sorted(step.glob("g*/attempt*/review.json"))]
    return [r for r in found if r is not None]


def rejected_updates(run: Run) -> list[MicroStepRecord]:
    """Every rejected attempt of the run, oldest first."""
    with _SETTLED.lock:
        fold = _SETTLED.get(run.root)
        settled, live = settled_and_live(step_keys(run.root), fold.through, None)
        for key in settled:
            fold.state.extend(_rejected_of(run, key))
            fold.through = key
        found = fold.state + [r for key in live for r in _rejected_of(run, key)]
    return sorted(found, key=lambda r: (r.epoch, r.step, r.group, r.attempt))


def _read_rejected(run: Run, review_path: Path) -> MicroStepRecord | None:
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
    label = plain_label(epoch, step, group)
    return attempt_record((epoch, step, group, attempt), label, review_path.parent.parent, checked, review)


def rejected_text(run: Run) -> str:
    """The prompt section, or "" when nothing was rejected yet."""
    found = rejected_updates(run)
    if not found:
        return ""
    shown = found[-SHOWN:]
    lines = ["Rejected updates (the last ones first proposed and refused; do not propose them again as they were):"]
    if len(found) > len(shown):
        lines.append(f"({len(found) - len(shown)} earlier rejected updates not shown.)")
    return "\n".join(lines + [rejected_line(r) for r in shown])
