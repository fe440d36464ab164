"""History: reviewing and undoing what training taught the pool, after the fact.

The pool's `git log` is the whole history of what training learned. `skilltui.runs` reads
it together with the run's own records (commit.txt, review.json, events.jsonl) so every
commit says which micro-step made it, who approved it and what the loss did next, and
`skilltui.runs.operations` undoes commits (revert, reset) and makes hand edits with the same
care the engine takes (linted, recorded as events, refused while a training process holds
the run); this package browses that history (`skilltui review RUN`: `app.py`, `HistoryApp`).
The table of runs (`skilltui runs`) is `skilltui.runs.overview` and the export
`skilltui.runs.export`; the commands that run them are in `skilltui.commands.history`.
"""
