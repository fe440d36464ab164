"""A setting's face on the command line, declared as plain data beside the setting itself.

A dataclass field made with `setting(...)` carries a `Flag` in its metadata: the flag's name,
its help, metavar, choices, task group and the bound a value must meet. Nothing here knows
argparse: the commands turn a `Flag` into an argparse flag, and the settings' own check reads
the bound, so a flag, its default, its help and its check are written once (the engine's
settings_fields.py is the declaration; commands/settings_flags.py builds the parser).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Flag:
    """A setting's face on the command line, as data the commands turn into an argparse flag."""

    group: str  # the task it serves: a key of the declaration's GROUPS
    help: str = ""  # `{default}` (with a format spec if wanted) stands for the field's default
    metavar: str | None = None  # None: argparse's own (the flag's name in capitals)
    name: str | None = None  # None: the field's name, `--like-this`
    choices: tuple[str, ...] = ()
    # The bound a given value must meet (None, "not given", is never checked), and what the
    # one-line refusal says after the flag's name. Written so that nan fails it.
    bound: Callable[[Any], bool] | None = None
    problem: str = ""
    parse: Callable[[str], Any] | None = None  # None: the field's type (int, float, Path, str)
    # The default when the flag is not given, worked out when the command runs (it depends
    # on the environment); the field's own default is for settings made in code.
    default_from: Callable[[], Any] | None = None
    filled_by: str | None = None  # no flag of its own: this other flag fills it


def setting(default: Any = MISSING, *, factory: Any = MISSING, **flag: Any) -> Any:
    """A field of Settings with its flag; `factory` makes a fresh list or dict per instance."""
    return field(default=default, default_factory=factory, metadata={"flag": Flag(**flag)})


def flag_of(f: Field) -> Flag:
    return f.metadata["flag"]


def flag_name(f: Field) -> str:
    return flag_of(f).name or "--" + f.name.replace("_", "-")


def field_default(f: Field) -> Any:
    """The value a field takes when nothing sets it (MISSING when it must be given)."""
    return f.default_factory() if f.default_factory is not MISSING else f.default


def at_least(low: float) -> Callable[[Any], bool]:
    return lambda v: math.isfinite(v) and v >= low


def within(low: float, high: float, *, below: bool = False) -> Callable[[Any], bool]:
    """Between low and high, high itself excluded when `below`."""
    return lambda v: math.isfinite(v) and low <= v and (v < high if below else v <= high)


def positive(v: float) -> bool:
    return math.isfinite(v) and v > 0
