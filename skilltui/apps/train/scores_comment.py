"""The loss report's machine-read `<!-- scores: {...} -->` line, kept out of the output pane.

The judge's report ends with that comment so the engine can read the scores back; a person
watching the stream reads the same scores on the `◆ loss` line, and the raw comment is noise.
The comment arrives in pieces, so what could be its start is held until it is known.
"""

from __future__ import annotations

import re

OPEN = "<!-- scores:"
CLOSE = "-->"
WHOLE = re.compile(r"\n?<!-- scores:.*?-->\n?", re.DOTALL)


def without_scores(text: str) -> str:
    """`text` with every whole scores comment (and the line it stood on) taken out."""
    return WHOLE.sub("\n", text)


class ScoresFilter:
    """Streamed text in, the same text out without scores comments; `take` per piece."""

    def __init__(self) -> None:
        self.held = ""

    def take(self, piece: str) -> str:
        text, self.held, out = self.held + piece, "", []
        while (start := text.find(OPEN)) >= 0:
            out.append(text[:start])
            end = text.find(CLOSE, start)
            if end < 0:
                self.held = text[start:]
                return "".join(out)
            text = text[end + len(CLOSE) :].removeprefix("\n")
        # A piece may end with the comment's first characters: hold them until the next piece.
        for size in range(min(len(OPEN) - 1, len(text)), 0, -1):
            if OPEN.startswith(text[-size:]):
                self.held, text = text[-size:], text[:-size]
                break
        out.append(text)
        return "".join(out)
