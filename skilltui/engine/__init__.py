"""The training engine: loop, stages, pool, run folder, events and review protocol. Imports no Textual."""
