"""Widgets both apps draw: the commit list and its detail, a diff, a report, the run header."""
