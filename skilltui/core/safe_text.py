"""Agent text is data: what a model wrote never drives the terminal or forges a record's structure.

A backward agent writes notes and commit messages; a prompt-injected one can put escape
sequences in them (OSC 0 retitles the window, OSC 52 writes the clipboard, CSI 2J clears
the screen), a carriage return that hides what follows it, or a line separator that
splits one record line into two for a reader (`str.splitlines` splits on U+2028, U+0085
and eight more). So every screen shows agent text through `visible`, which turns each
control character into its `\\xNN` spelling, and every commit message the engine stamps
goes through `message_lines`, which turns each line separator into a newline and drops the
other control characters. It imports nothing of the project: the engine, the command line
and the apps all use the one rule.
"""

from __future__ import annotations

import re

# Every character str.splitlines treats as a line end besides "\n" ("\r\n" is one of them).
LINE_SEPARATORS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# C0 without tab and newline, DEL, and C1: what a terminal may act on instead of showing.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SEPARATOR = re.compile("\r\n|[" + LINE_SEPARATORS + "]")
_ANY_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_OTHER_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")


def _spelled(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def visible(text: str) -> str:
    """`text` with every control character but tab and newline spelled out (ESC becomes `\\x1b`)."""
    if text.isprintable():  # the common case costs one scan
        return text
    return _CONTROL.sub(_spelled, text.replace("\r\n", "\n"))


def visible_line(text: str) -> str:
    """`visible`, on one line: a newline shows as `\\n` too (a subject, a table cell, a status line),
    and so do U+2028 and U+2029, which are no control characters but which a terminal or a
    reader splitting lines may take for a line end."""
    return visible(text).replace("\n", "\\n").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def has_control(text: str) -> bool:
    """Whether `text` holds a character `visible` would spell out."""
    return _CONTROL.search(text) is not None


def controls_in(text: str) -> list[str]:
    """The control characters `text` holds, spelled out, each once, in the order met."""
    return list(dict.fromkeys(_spelled(m) for m in _CONTROL.finditer(text)))


def dropped(text: str) -> str:
    """`text` without its control characters, tab and newline included: for a cell already laid out,
    where a terminal counts them as no width, so dropping them moves nothing."""
    return text if text.isprintable() else _ANY_CONTROL.sub("", text)


def json_line(encoded: str) -> str:
    """A JSON text made with ensure_ascii=False, with the line separators JSON leaves raw escaped
    (U+2028, U+2029, U+0085), so no reader that splits on them can cut a record line in two."""
    if encoded.isascii():
        return encoded
    return encoded.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")


def message_lines(text: str) -> str:
    """A message with "\\n" as its only line end and no other control character (tabs stay)."""
    return _OTHER_CONTROL.sub("", _SEPARATOR.sub("\n", text))
