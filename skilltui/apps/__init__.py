"""The three ways a person looks at a run: the live training app (`train/`), the history
browser (`history/`) and the HTML report (`report/`), with what the first two share in
`shared/`. Each app is an `app.py` (or the report's `build.py`) with its `screens/` and
`widgets/`; the apps never import each other."""
