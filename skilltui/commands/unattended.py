"""Before `train`, `demo` or `crossval` trains: refuse what would run without its person knowing.

Without a terminal and without `--auto` nobody can review, and approving every update unasked
would skip the review the tool is built around; `crossval` has no review screen at all, so it
trains only when `--auto` says so; a model named with the offline backend would be ignored
unsaid. Each is one line and exit 2, before anything is written.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..core.errors import UsageError

if TYPE_CHECKING:
    from ..engine.settings import Settings


def refuse_offline_models(settings: Settings) -> None:
    """The offline backend calls no model: a --model or --role-model given with it would be ignored unsaid.

    (`--estimate` takes them: pricing a model before a key is set is what it is for.)
    """
    given = [f"--model {settings.model}"] if settings.model else []
    given += [f"--role-model {role}={model}" for role, model in settings.role_models.items()]
    if settings.backend == "offline" and given:
        raise UsageError(
            f"{given[0]}: the offline backend calls no model and would ignore it; drop it, or train with "
            "--backend anthropic (export ANTHROPIC_API_KEY=...) or --backend claude-code"
        )


def has_terminal() -> bool:
    """Whether a person can review in the app: both stdin and stdout are a terminal."""
    return sys.stdout.isatty() and sys.stdin.isatty()


def require_reviewer(command: str, auto: bool) -> None:
    """Stop (one line, exit 2) a run that nobody could review: no terminal and no `--auto`.

    Piped (`| tee log`) or fed from /dev/null the app cannot open, and training on with the
    automatic reviewer would approve every update without anyone having asked for that.
    """
    if not auto and not has_terminal():
        raise UsageError(
            f"`skilltui {command}` without a terminal (stdin or stdout is not one) has nobody to review its "
            "updates; add --auto to approve every update automatically, or run it in a terminal"
        )


def require_auto(command: str, auto: bool) -> None:
    """Stop (one line, exit 2) a command that can only approve automatically unless `--auto` asks for it.

    `crossval` trains its folds at once with no review screen, so every update is approved by
    the automatic reviewer; it does so only when the person said so, as `train` does unattended.
    """
    if not auto:
        raise UsageError(
            f"`skilltui {command}` trains its folds with no review: every update is approved automatically; "
            "add --auto to say so (or review one run in the app with `skilltui train --test-work DIR`)"
        )
