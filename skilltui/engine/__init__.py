"""The training engine: loop, stages, pool, run folder, gate and the --auto reviewer. Imports no Textual.

It emits the run model's events (`skilltui.model.events`) on the model's bus and is driven by
`skilltui.runner`; the agents it calls sit below it.
"""
