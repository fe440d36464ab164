"""Backends behind one small interface (`base.py`), and the file tools with their sandbox (`tools.py`).

`make_backend` turns `--backend NAME` into a backend. The real model backends are imported
only when asked for, so the offline backend needs nothing but the standard library.
"""

from __future__ import annotations

import os

from ..core.errors import UsageError
from .base import Backend

BACKENDS = ("offline", "anthropic", "claude-code", "codex", "openai")
# Backends named with an argument after a colon: `mailbox:DIR` (mailbox.py).
SPEC_BACKENDS = ("mailbox",)


def backend_arg(text: str) -> str:
    """`--backend`'s value checked by argparse: a name of BACKENDS, or `mailbox:DIR`."""
    if text in BACKENDS or text.partition(":")[0] in SPEC_BACKENDS:
        return text
    import argparse

    raise argparse.ArgumentTypeError(f"unknown backend {text!r}; choose one of {', '.join(BACKENDS)} or mailbox:DIR")


def default_backend() -> str:
    """anthropic when a key is set, the offline stand-in otherwise."""
    return "anthropic" if os.environ.get("ANTHROPIC_API_KEY") else "offline"


def make_backend(
    name: str,
    model: str | None = None,
    *,
    offline_latency: float = 0.0,
    offline_noise: float = 0.0,
    offline_noise_call: float = 0.0,
    base_url: str | None = None,
) -> Backend:
    if name == "offline":
        from .offline import OfflineBackend

        return OfflineBackend(model, latency=offline_latency, noise=offline_noise, calls=offline_noise_call)
    if name == "anthropic":
        if not os.environ.get("ANTHROPIC_API_KEY"):
            raise UsageError(
                "--backend anthropic needs an API key: export ANTHROPIC_API_KEY=sk-ant-... (or use --backend offline)"
            )
        from .anthropic_backend import AnthropicBackend

        return AnthropicBackend(model)
    if name == "openai":
        return _openai(model, base_url)
    if name == "claude-code":
        from .claude_code import ClaudeCodeBackend

        return ClaudeCodeBackend(model)
    if name == "codex":
        from .codex import CodexBackend

        return CodexBackend(model)
    if name.partition(":")[0] == "mailbox":
        from .mailbox import MailboxBackend

        return MailboxBackend(name, model)
    raise UsageError(f"unknown --backend {name!r}; choose one of {', '.join(BACKENDS)}")


def _openai(model: str | None, base_url: str | None) -> Backend:
    """The `openai` backend (an optional extra): any OpenAI-compatible server, `base_url` or OPENAI_BASE_URL."""
    try:
        from .openai_backend import OpenAIBackend
    except ImportError:
        raise UsageError("--backend openai needs the openai extra: pip install 'skilltui[openai]'") from None
    from .base import Connection

    return OpenAIBackend(model, Connection(base_url=base_url))
