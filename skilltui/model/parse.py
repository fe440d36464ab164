"""One way back from JSON to a typed event: `parse_event(line_dict)` or `read_run(path)`.

A renderer that folded dicts would have to guess at a missing key or a misspelt kind; this
refuses them instead, naming the kind and the field, so a record written by a newer or a
broken version is a clear error and not a pane that silently shows nothing.

Reading a run's file (`read_run`) is the tolerant side, and the only reader of
`events.jsonl` there is: every command that looks at a run (train on resume, report,
review, runs, compare) goes through it. A last line still without its newline (a writer
mid-line, or a crash the engine cuts off on its next open) is left for later. Any complete
line that is not a valid event of a known shape (`null`, `42`, `[1]`, `NaN`, `{}`, a kind
missing its fields, a field of the wrong type, a number that is not finite) is skipped and
counted, never folded; a line that repeats an earlier one exactly (same time, same content:
a copy pasted twice, a sync tool's echo) is dropped and counted, so a decision is not
counted twice. `RunRecord.warning()` says both in one line, once per read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import types
import typing
from pathlib import Path
from typing import Any

from ..core.json_read import BadJSON, loads
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

    Public because the drivers' wire checks its messages' fields by the same rules as events.
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
    if hint is float:  # NaN and infinity are no loss, cost or score: a mean over them is NaN too
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
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
    """A run's events as read from its file: the events, the lines skipped (and the first why), the copies dropped."""

    events: list[ev.Event]
    unreadable: int = 0
    problem: str = ""
    duplicates: int = 0
    lines: int = 0  # complete lines read so far, so a problem can say where it is
    seen: set[bytes] = dataclasses.field(default_factory=set, repr=False)

    def warning(self, name: str = "events.jsonl") -> str | None:
        """One line on what the read left out, or None when it kept every line."""
        parts = []
        if self.unreadable:
            s = "" if self.unreadable == 1 else "s"
            parts.append(
                f"skipped {self.unreadable} line{s} that {'is' if not s else 'are'} not an event ({self.problem})"
            )
        if self.duplicates:
            s = "" if self.duplicates == 1 else "s"
            parts.append(f"dropped {self.duplicates} exact duplicate line{s}")
        return f"{name}: {'; '.join(parts)}" if parts else None


def parse_lines(lines: typing.Iterable[str], record: RunRecord) -> None:
    """Parse complete lines into `record`; a line that is not a known event is counted, a repeated one dropped."""
    for line in lines:
        record.lines += 1
        text = line.strip()
        if not text:
            continue
        try:
            event = parse_event(loads(text))
        except (BadJSON, EventShapeError, RecursionError) as exc:
            record.unreadable += 1
            record.problem = record.problem or f"line {record.lines}: {exc}"
            continue
        # A digest, not the line: a long run's record would otherwise be held twice in memory.
        digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        if digest in record.seen:
            record.duplicates += 1
            continue
        record.seen.add(digest)
        record.events.append(event)


def read_run(path: Path) -> RunRecord:
    """Every event a run's `events.jsonl` holds, typed; a missing file is a run with no events yet."""
    record = RunRecord([])
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return record
    complete = text[: text.rfind("\n") + 1]  # a line without its newline is still being written
    parse_lines(complete.split("\n")[:-1], record)  # "\n" alone ends a line: U+2028 in a name is not one
    return record
