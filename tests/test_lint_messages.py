"""The linter says what is wrong with a note in words its writer can act on, even when the
fault is invisible in an editor."""

from __future__ import annotations

from skilltui.pool.notes import lint_note, render_note

NOTE = render_note("Cut an entrance late and leave early.", "Start a scene as late as it can start.")


def test_a_note_starting_with_a_byte_order_mark_is_told_so() -> None:
    assert lint_note("scene/late.md", NOTE) == []
    problems = lint_note("scene/late.md", "\ufeff" + NOTE)
    assert len(problems) == 1
    assert "byte order mark" in problems[0] and "UTF-8 without" in problems[0]
    assert "does not start with a --- front matter line" not in problems[0]


def test_a_note_with_windows_line_endings_is_told_so() -> None:
    problems = lint_note("scene/late.md", NOTE.replace("\n", "\r\n"))
    assert len(problems) == 1 and "line endings" in problems[0]
