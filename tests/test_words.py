"""Counts read as English: "1 note", "2 notes", "0 notes"."""

from skilltui.core.words import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "note") == "1 note"
    assert counted(2, "note") == "2 notes"
    assert counted(0, "work") == "0 works"
    assert counted(1, "group") == "1 group"
    assert counted(3, "attempt") == "3 attempts"


def test_an_irregular_plural_is_given() -> None:
    assert counted(1, "story", "stories") == "1 story"
    assert counted(2, "story", "stories") == "2 stories"
