"""One way back from JSON to a typed event: `parse_event(line_dict)` or `read_run(path)`.

A renderer that folded dicts would have to guess at a missing key or a misspelt kind; this
refuses them instead, naming the kind and the field, so a record written by a newer or a
broken version is a clear error and not a pane that silently shows nothing.

Reading a run's file (`read_run`) is the tolerant side: a last line cut short by a crash is
skipped (the engine cuts it off on its next open), and so is a line that does not parse as
JSON; a line that parses but has a shape nobody knows is counted and reported, never folded.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

from . import events as ev


class EventShapeError(ValueError):
    """A JSON object that is not an event this version knows."""


def _kinds() -> dict[str, type[ev.Event]]:
    found: dict[str, type[ev.Event]] = {}
    pending = list(ev.Event.__subclasses__())
    while pending:
        cls = pending.pop()
        if "kind" in vars(cls):  # a kind of event, not a shared base like AtStep
            found[cls.kind] = cls
        pending.extend(cls.__subclasses__())
    return found


KINDS: dict[str, type[ev.Event]] = _kinds()
_HINTS: dict[type, dict[str, Any]] = {cls: typing.get_type_hints(cls, vars(ev)) for cls in KINDS.values()}


def fits(value: Any, hint: Any) -> bool:
    """Whether a JSON value can stand for a field of type `hint` (ints pass for floats; bools for nothing else).

    Public because the runner's wire checks its messages' fields by the same rules as events.
    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, arm) for arm in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(fits(v, item) for v in value)
    if origin is dict:
        _, item = typing.get_args(hint) or (str, Any)
        return isinstance(value, dict) and all(isinstance(k, str) and fits(v, item) for k, v in value.items())
    return True


def parse_event(data: Any) -> ev.Event:
    """The typed event a JSON object (an `Event.to_dict()`, an events.jsonl line) stands for.

    Raises `EventShapeError` for an unknown kind, a field the kind does not have (fields it
    has retired are dropped: older files hold them), a required field that is missing or a
    value of the wrong type.
    """
    if not isinstance(data, dict):
        raise EventShapeError(f"an event is a JSON object, not {type(data).__name__}")
    kind = data.get("kind")
    cls = KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise EventShapeError(f"unknown event kind {kind!r}; known kinds: {', '.join(sorted(KINDS))}")
    hints = _HINTS[cls]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    extra = sorted(set(data) - set(fields) - cls.retired - {"kind"})
    if extra:
        raise EventShapeError(f"a {kind!r} event has no field {', '.join(map(repr, extra))}")
    missing = [
        name
        for name, f in fields.items()
        if name not in data and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise EventShapeError(f"a {kind!r} event needs {', '.join(map(repr, missing))}")
    values = {name: value for name, value in data.items() if name in fields}
    for name, value in values.items():
        if not fits(value, hints[name]):
            raise EventShapeError(f"a {kind!r} event's {name!r} cannot be {value!r}")
    return cls(**values)


@dataclasses.dataclass
class RunRecord:
    """A run's events as read from its file, and how many lines could not be folded (and the first why)."""

    events: list[ev.Event]
    unreadable: int = 0
    problem: str = ""


def parse_lines(lines: typing.Iterable[str], record: RunRecord) -> None:
    """Parse complete lines into `record`; a line that is not JSON or not a known shape is counted."""
    for line in lines:
        if not line.strip():
            continue
        try:
            record.events.append(parse_event(json.loads(line)))
        except (json.JSONDecodeError, EventShapeError) as exc:
            record.unreadable += 1
            record.problem = record.problem or str(exc)


def read_run(path: Path) -> RunRecord:
    """Every event a run's `events.jsonl` holds, typed; a missing file is a run with no events yet."""
    record = RunRecord([])
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return record
    parse_lines(text.splitlines(), record)
    return record
