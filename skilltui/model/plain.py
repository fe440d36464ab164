"""Dataclasses as plain data, the way `dataclasses.asdict` gives them, without its copies.

Every event is turned into a dict twice on its way out (the log and the wire), and a stream of
16 works sends a few hundred a second. `asdict` deep-copies each string and number it meets
(Python 3.11 has no fast path for them), which made it the trainer's largest own cost after
the pipe itself. Strings, numbers and None cannot change, so they are returned as they are;
containers are rebuilt as `asdict` rebuilds them, so the result shares nothing mutable with
the object it came from.
"""

from __future__ import annotations

import copy
import functools
from collections import defaultdict
from dataclasses import fields, is_dataclass
from typing import Any

_ATOMS: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes, complex})


@functools.cache
def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def plain_fields(obj: Any) -> dict[str, Any]:
    """A dataclass instance's fields as a new dict, each value as `plain` gives it."""
    # A class hashes by identity; mypy's `type` stub does not say so, hence the ignore.
    return {name: plain(getattr(obj, name)) for name in _names(type(obj))}  # type: ignore[arg-type]


def plain(value: Any) -> Any:
    """`value` as `dataclasses.asdict` would hold it inside its result."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return plain_fields(value)
    if kind is list:
        return [plain(item) for item in value]
    if kind is dict:
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple takes its fields in order
        return kind(*[plain(item) for item in value])
    if isinstance(value, list | tuple):
        return kind(plain(item) for item in value)
    if isinstance(value, defaultdict):
        return kind(value.default_factory, {plain(k): plain(v) for k, v in value.items()})
    if isinstance(value, dict):
        return kind((plain(k), plain(v)) for k, v in value.items())
    return copy.deepcopy(value)
