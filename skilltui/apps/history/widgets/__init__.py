"""Widgets of the review app, one per file, each with its CSS beside it."""
