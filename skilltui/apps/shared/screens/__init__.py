"""Screens and dialogs both apps open: a diff, a note's blame, help, a confirmation."""
