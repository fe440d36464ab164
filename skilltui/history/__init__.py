"""History: reviewing and undoing what training taught the pool, after the fact.

The pool's `git log` is the whole history of what training learned. `skilltui.runs` reads
it together with the run's own records (commit.txt, review.json, events.jsonl) so every
commit says which micro-step made it, who approved it and what the loss did next, and
`skilltui.runs.operations` undoes commits (revert, reset) and makes hand edits with the same
care the engine takes (linted, recorded as events, refused while a training process holds
the run); this package browses that history, lists runs and exports a trained pool as an
Agent Skill.

    skilltui review RUN                    the keyboard history browser (`app.py`, `HistoryApp`)
    skilltui runs [--runs-dir DIR]         a table of runs (`overview.py`)
    skilltui export RUN --to DIR           the pool as an Agent Skill folder (`export.py`)

Everything but `app.py`, `screens/` and `widgets/` imports no Textual, so the export and
the tables can be used (and tested) without a terminal. The commands that
run them are in `skilltui.commands.history`.
"""
