"""Counts in words for people: "1 note", "2 notes", never "1 notes" or "note(s)".

Every interface (the console, the apps, the command line) says how many of something
there are; this is the one place that picks singular or plural, so they all read the same.
It imports nothing of the project, so the engine, the agents and the apps can all use it.
"""

from __future__ import annotations


def counted(n: int, word: str, plural: str | None = None) -> str:
    """`n` and the word in the right number: counted(1, "note") == "1 note"; `plural` for irregular words."""
    return f"{n} {word if n == 1 else plural or word + 's'}"
