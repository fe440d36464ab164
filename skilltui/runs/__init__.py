"""Past and present runs as they are on disk: finding a run, its status and its history of
commits joined with the records that say why. Read by the history app, the report and the
commands, so none of them has to import another."""
