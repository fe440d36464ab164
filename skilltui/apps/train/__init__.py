"""The terminal app: it renders the engine's events and answers its review requests.

`app.TrainingApp` is the Textual app and `app.run_training_app` runs it for `skilltui train`.
The widgets in `widgets/` take data, not the trainer; what the history browser shares with
this app lives in `skilltui.apps.shared`.
"""
