"""Screens of the review app: the history list, a diff, a micro-step's evidence, a confirmation."""
