"""Counts in words for people: "1 note", "2 notes", never "1 notes" or "note(s)".

Every interface (the console, the apps, the command line) says how many of something
there are; this is the one place that picks singular or plural, so they all read the same.
It imports nothing of the project, so the engine, the agents and the apps can all use it.
"""

from __future__ import annotations


def counted(n: int, word: str, plural: str | None = None) -> str:
    """`n` and the word in the right number: counted(1, "note") == "1 note"; `plural` for irregular words."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def tokens_text(tokens: int) -> str:
    """A token count the way the works table and the run header show it: 950, 1.2k, 34k, 1.5M."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}M"
    if tokens >= 10_000:
        return f"{tokens / 1000:.0f}k"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k"
    return str(tokens)
