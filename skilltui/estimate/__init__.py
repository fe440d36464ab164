"""What a run will cost before it runs (`plan.py`), the tokens and dollars of one call
(`sizes.py`) and the forecast as a person reads it (`text.py`). Used by `train --estimate`,
`crossval` and a run's start, which keeps the forecast in `estimate.json`."""
