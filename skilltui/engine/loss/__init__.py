"""The loss: written episodes scored against the human ones (pure: no agents, no run folder)."""
