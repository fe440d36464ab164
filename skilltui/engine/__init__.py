"""The training engine, in rooms (loop, update, validation, stages, notes, data, loss). Imports no Textual.

It emits the run model's events (`skilltui.model.events`) on the model's bus and is driven by
`skilltui.drivers`; the agents it calls sit below it.
"""
