"""The rejected-update buffer: what the backward agent proposed and was refused, with the evidence.

An optimizer told only "rolled back" proposes the same edit again. Before each micro-step
the backward prompt lists the last `SHOWN` rejected attempts (rolled back, sent back for a
rerun, or a candidate dropped for a better one): their subject, the notes they touched, the
gate's delta and interval when there was a gate, and who rejected them and why. The
figures are numbers only: no validation work, script or report is named (the gate's
reason says "val", never which work).

Read through the store's one reader of micro-steps (`store.micro_steps`): each attempt's
review beside what it committed.
"""

from __future__ import annotations

from ...model.at import StepKey
from ...model.commits import MicroStepRecord
from ...model.review import interval_text
from ...store.micro_steps import step_records
from ...store.run_folder import Run
from ...store.settled import SettledCache, settled_and_live, step_keys

SHOWN = 8


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
                f"; validation Δ {g['delta']:+.3f} {interval_text(g['low'], g['high'], g.get('level'))}, n={g.get('n')}"
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
    return [r for micro in step_records(run, key) for r in micro.rejected]


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
