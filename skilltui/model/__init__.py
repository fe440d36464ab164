"""The run model: typed events, the bus and the event log, the one fold every interface renders.

Pure: it imports nothing of the engine, the drivers or the apps, and its only I/O is reading and
writing a run's `events.jsonl`.
"""
