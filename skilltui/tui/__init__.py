"""The terminal app: it renders the engine's events and answers its review requests.

`app.run_app` is the entry point the CLI calls; `app.TrainingApp` is the Textual app.
The widgets in `widgets/` take data, not the trainer, so `skilltui review` can show a
finished run with the same panes.
"""
