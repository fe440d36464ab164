"""Past and present runs as they are on disk: finding a run, its status and its history of
commits joined with the records that say why, and the changes a person makes to that history
afterwards (revert, reset, a hand edit: `operations.py`). Used by the history app, the live
app, the report and the commands, so none of them has to import another."""
