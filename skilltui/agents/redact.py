"""Scrub API keys out of anything a run keeps: transcripts, error messages, events.

A run folder is meant to be shared ("explainable after the data moved on"), so no key
may land in it. Backends pass every transcript and every error message through
`redact` before handing it to the engine. Two nets, because either alone leaks:

- the actual secrets the process holds (the key it was given), whatever their shape, so a
  key in an unusual format (a gateway token) is still caught;
- anything shaped like an Anthropic or OpenAI key (`sk-ant-...`, `sk-proj-...`), so a key the model or a server
  echoed back, or one pasted into a story, is caught even though it is not ours.

Servers and tools often show a key cut down (`sk-ant-probe...efghij`: its first 12 and last
6 characters). Both nets catch that form too: a cut key narrows a guess to its middle, and
the tail alone identifies which key leaked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any, TypeVar

REDACTED = "[REDACTED]"

# Anthropic keys: sk-ant-<kind><version>-<body>, body of URL-safe base64. Any body at all is
# enough to match, and an elision (`...`, `…`, `***`) with the tail after it goes too: a
# truncated key is still a leak.
_BODY = r"[A-Za-z0-9_\-]"
_ELISION = r"(?:\.{2,}|\u2026|\*{2,})"
# OpenAI keys (sk-proj-, sk-svcacct-, sk-admin-, and the older sk- with 32+ letters and digits)
# and OpenRouter's (sk-or-v1-) go the same way, for the `openai` backend.
KEY_SHAPE = re.compile(rf"sk-(?:ant|proj|svcacct|admin|or-v1)-{_BODY}*(?:{_ELISION}{_BODY}+)?|\bsk-[A-Za-z0-9]{{32,}}")

# Environment variables whose values are credentials the backends may be holding.
SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY")

T = TypeVar("T")


def env_secrets() -> list[str]:
    """The credentials present in this process's environment."""
    return [v for name in SECRET_ENV if (v := os.environ.get(name, "").strip())]


def redact(value: T, secrets: Iterable[str | None] = ()) -> T:
    """`value` with every secret and every key-shaped string replaced by `[REDACTED]`.

    Works on strings and on JSON-like structures (dicts, lists, tuples), keys included;
    other values pass through unchanged. Returns a new object; the input is not modified.
    """
    known = sorted({s for s in secrets if s}, key=len, reverse=True)
    return _walk(value, known)


def _walk(value: Any, known: list[str]) -> Any:
    if isinstance(value, str):
        return _scrub(value, known)
    if isinstance(value, dict):
        return {_walk(k, known): _walk(v, known) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, known) for v in value]
    if isinstance(value, tuple):
        return tuple(_walk(v, known) for v in value)
    return value


def _masked(secret: str) -> re.Pattern[str] | None:
    """A shown-but-masked form of one of our secrets: its start, an elision, its end."""
    if len(secret) < 12:  # too short for a masked form to be told from ordinary text
        return None
    return re.compile(rf"{re.escape(secret[:4])}{_BODY}*{_ELISION}{_BODY}*{re.escape(secret[-4:])}")


def _scrub(text: str, known: list[str]) -> str:
    # Longest first, so a secret that contains another is replaced whole.
    for secret in known:
        if secret in text:
            text = text.replace(secret, REDACTED)
        masked = _masked(secret)
        if masked is not None:
            text = masked.sub(REDACTED, text)
    return KEY_SHAPE.sub(REDACTED, text)
