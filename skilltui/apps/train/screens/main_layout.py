"""What the main screen is made of besides its behaviour: its CSS, its hint, its panes, and the header's facts.

Kept apart from `main.py` so that module holds only how events become redraws; the
facts the header shows and the time the works box shows are pure reads of the run model.
"""

from __future__ import annotations

import datetime as _dt

from ....model.figures import duration_text, eta, run_progress, stage_elapsed, step_progress, work_elapsed
from ....model.summary import kept_updates, test_delta_text
from ....model.view import RunView
from ...shared.widgets.run_header import HeaderFacts

PANES = ("output", "report", "pool", "commits")
HINT = (
    "works: one row per work · loss: the curve · below: 1 output, 2 report, 3 pool, 4 commits · "
    "a review screen opens for every update of the notes · any key hides this"
)
# What each kind of event can change on screen; the header redraws every second anyway.
TOUCHES: dict[str, frozenset[str]] = {
    "run_started": frozenset({"works", "curve", "summary"}),  # a resumed run's clears the last banner
    "step_started": frozenset({"works", "curve"}),
    "stage": frozenset({"works"}),
    "episode_written": frozenset({"works"}),
    "call": frozenset({"works"}),
    "loss": frozenset({"works", "curve", "report"}),
    "val_loss": frozenset({"curve"}),
    "step_finished": frozenset({"curve"}),
    "micro_step": frozenset({"pool"}),
    "review_requested": frozenset({"pool"}),
    "decision": frozenset({"pool"}),
    "pool_changed": frozenset({"pool"}),
    "history": frozenset({"pool"}),
    "attribution": frozenset({"pool"}),
    "run_finished": frozenset({"summary"}),
}

# Loaded as the app's CSS: a default screen's own CSS is not read by Textual 8.
MAIN_CSS = """
MainScreen { layout: vertical; }
#top { height: 2fr; min-height: 7; max-height: 22; }
#works-box {
    width: auto;
    max-width: 3fr;
    border: round $primary 80%;
    border-title-color: $text-primary;
    border-subtitle-color: $foreground-muted;
    border-title-style: bold;
}
#curve {
    width: 1fr;
    min-width: 24;
    border: round $secondary 80%;
    border-title-color: $text-secondary;
    border-title-style: bold;
}
#panes { height: 3fr; }
Tab { color: $foreground-muted; }
Tab.-active, Tab:hover { color: $foreground; }
Underline > .underline--bar { color: $text-primary; background: $panel-lighten-2; }
#panes TabPane { padding: 0; }
#pool-tree { width: 34; min-width: 34; max-width: 50%; border-right: vkey $panel-lighten-2; }
#commit-list { width: 2fr; min-width: 30; border-right: vkey $panel-lighten-2; }
#commit-diff { width: 3fr; }
#hint, #summary { height: auto; padding: 0 1; background: $boost; color: $text-accent; display: none; }
#summary { color: $foreground; border-bottom: hkey $primary; }
"""


def work_time(view: RunView, work: str | None) -> str:
    """`harbour · forward 42s · in step 1m05s` while the selected work runs a stage; its name otherwise."""
    row = view.works.get(work) if work else None
    now = _dt.datetime.now(_dt.UTC)
    stage = stage_elapsed(row, now) if row is not None else None
    if row is None or stage is None:
        return work or ""
    return f"{row.name} · {row.stage} {duration_text(stage)} · in step {duration_text(work_elapsed(row, now))}"


def header_state(view: RunView) -> tuple[object, ...]:
    """What of the header a person must see change at once, not at the next second."""
    return (view.status, view.paused, view.throttled, view.batch, view.step.key if view.step else None)


def header_facts(view: RunView, *, elapsed: float, paused: bool) -> HeaderFacts:
    """What the header says of the run now; `paused` also when the driver paused and the run has not said so yet."""
    v, step = view, view.step
    (done, total), (steps_done, steps_total) = step_progress(v), run_progress(v)
    left = eta(v, _dt.datetime.now(_dt.UTC))
    when = ""
    if left.step is not None and v.status != "review":  # what a person takes to review is not the machine's
        when = f"ETA {duration_text(left.step)}" + (f" · run {duration_text(left.run)}" if left.run else "")
    return HeaderFacts(
        run_id=v.run_id,
        epoch=step.key[0] if step else None,
        step=step.key[1] if step else None,
        first=step.first if step else None,
        last=step.last if step else None,
        elapsed=elapsed,
        tokens=v.tokens,
        cost=v.cost,
        cost_known=v.cost_known,
        status=v.status,
        paused=v.paused or paused,
        throttled=v.throttled,
        batch=v.batch,
        stages_done=done,
        stages_total=total,
        steps_done=steps_done,
        steps_total=steps_total,
        eta=when,
        kept=kept_updates(v)[0],
        test=test_delta_text(v) or "",
    )
