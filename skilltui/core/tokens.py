"""How the project counts tokens without asking a model: characters / 3.5.

The API's own counter is a network call, and the installed SDK has no offline tokenizer
for Claude models, so every size the project reasons about before a call (the cache marks,
the pool budget, the cost estimate) uses this one rule. At 3.5 characters a token it is
generous for English prose and Fountain (the API usually bills a little less), which is
the safe side for a budget and for a cost estimate. One module, so the budget a backward
commit is held to and the sizes `--estimate` prints are counted the same way.
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 3.5


def count_tokens(value: Any) -> int:
    """A token estimate of a string, or of anything JSON can write (a block, a list of blocks)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return int(len(text) / CHARS_PER_TOKEN)
