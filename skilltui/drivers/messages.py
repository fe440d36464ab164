"""What crosses the pipes between the live app and its trainer process, typed and checked on arrival.

Why typed: a dict keyed by a one-letter string lets a misspelt key or a value of the wrong
type travel until something deep in the app or the child trips on it, far from the pipe. Each line is parsed
here into one of these messages, or refused with `WireError` naming the message and the
field (as `model.parse` refuses an event), so the driver reading it can stop the session and
record why.

- child to app (`parse_for_app`): every event, sent as itself (`{"t": "event", "event": ...}`),
  `ReviewAsked` when a micro-step waits for its review, `Held` when the number of stages
  waiting at the pause gate changes;
- app to child (`parse_for_trainer`): `Pause`, `Resume`, `Stop` and `Answer` (the decision on
  a review, by its key).

A review crosses once. The child does not send its `review_requested` event: `ReviewAsked`
carries the whole request and the event's time, and the app derives the event from it
(`ReviewAsked.event`) and folds it as the child did, so the two views say the same.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from ..core.json_read import BadJSON, loads
from ..core.safe_text import json_line
from ..model import events as ev
from ..model.at import At, BadPlace
from ..model.parse import EventShapeError, fits, parse_event
from ..model.plain import plain_fields
from ..model.review import Decision, ReviewRequest, request_to_dict


class WireError(ValueError):
    """A line on a pipe that is not a message this side knows: what a version mismatch or a bug looks like."""


def key_of(request: ReviewRequest) -> At:
    """The micro-step attempt a review is about: what an answer names to say which review it answers."""
    return At(request.epoch, request.step, request.group, request.attempt)


@dataclass(frozen=True)
class ReviewAsked:
    """The engine waits for the review of `request`; `time` is when its `review_requested` was recorded."""

    tag: ClassVar[str] = "review"
    request: ReviewRequest
    time: str

    @property
    def key(self) -> At:
        return key_of(self.request)

    @property
    def event(self) -> ev.ReviewRequested:
        """The event the child recorded for this review, derived rather than sent a second time."""
        r = self.request
        return ev.ReviewRequested(
            time=self.time, epoch=r.epoch, step=r.step, group=r.group, attempt=r.attempt,
            label=r.label, before=r.before, after=r.after,
        )  # fmt: skip


@dataclass(frozen=True)
class Held:
    """How many of the child's stages wait at the pause gate now."""

    tag: ClassVar[str] = "held"
    n: int


@dataclass(frozen=True)
class Pause:
    tag: ClassVar[str] = "pause"


@dataclass(frozen=True)
class Resume:
    tag: ClassVar[str] = "resume"


@dataclass(frozen=True)
class Stop:
    """Stop where it is and record `status` with `reason` ("failed" when a crash around it is why)."""

    tag: ClassVar[str] = "stop"
    reason: str
    status: Literal["stopped", "failed"] = "stopped"


@dataclass(frozen=True)
class Answer:
    """The app's answer to the review `key`: a decision, or `error` when the app's reviewer failed."""

    tag: ClassVar[str] = "decision"
    key: At  # on the pipe as [epoch, step, group, attempt], as it always was
    decision: Decision | None = None
    error: str = ""

    def __post_init__(self) -> None:
        if (self.decision is None) == (not self.error):
            raise ValueError("an answer holds a decision or an error, not both and not neither")


ForApp = ev.Event | ReviewAsked | Held
ForTrainer = Pause | Resume | Stop | Answer
_FOR_APP: dict[str, type] = {cls.tag: cls for cls in (ReviewAsked, Held)}
_FOR_TRAINER: dict[str, type] = {cls.tag: cls for cls in (Pause, Resume, Stop, Answer)}


# -- out ---------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, ReviewRequest):
        return request_to_dict(value)
    if isinstance(value, Decision):
        return plain_fields(value)
    if isinstance(value, At):
        return list(value.micro_key)
    if isinstance(value, tuple):
        return list(value)
    return value


def line_of(message: ForApp | ForTrainer) -> bytes:
    """One message as one line of a pipe (a newline inside a value is escaped by JSON)."""
    if isinstance(message, ev.Event):
        data: dict[str, Any] = {"t": "event", "event": message.to_dict()}
    else:
        data = {"t": message.tag, **{f.name: _plain(getattr(message, f.name)) for f in dataclasses.fields(message)}}
    return (json_line(json.dumps(data, default=str, ensure_ascii=False)) + "\n").encode()


# -- in ----------------------------------------------------------------------------------------


def parse_for_app(line: bytes | str) -> ForApp:
    """A line the child sent, typed; `WireError` when it is not one."""
    data = _json(line)
    if data.get("t") == "event":  # the bulk of the pipe: nothing here but what `parse_event` checks
        if len(data) != 2 or "event" not in data:
            raise WireError(f"an 'event' message holds 'event' and nothing else, not {sorted(data)}")
        try:
            return parse_event(data["event"])
        except EventShapeError as exc:
            raise WireError(str(exc)) from None
    return _message(data, _FOR_APP, ("event", *_FOR_APP))


def parse_for_trainer(line: bytes | str) -> ForTrainer:
    """A line the app sent, typed; `WireError` when it is not one."""
    return _message(_json(line), _FOR_TRAINER, tuple(_FOR_TRAINER))


def _json(line: bytes | str) -> dict[str, Any]:
    try:
        data = loads(line)
    except BadJSON:
        raise WireError(f"a line that is not JSON: {line[:80]!r}") from None
    if not isinstance(data, dict):
        raise WireError(f"a message is a JSON object, not {type(data).__name__}")
    return data


def _message(data: dict[str, Any], known: dict[str, type], names: tuple[str, ...]) -> Any:
    tag = data.get("t")
    cls = known.get(tag) if isinstance(tag, str) else None
    if cls is None:
        raise WireError(f"unknown message {tag!r}; this side reads {', '.join(map(repr, names))}")
    return _build(cls, {k: v for k, v in data.items() if k != "t"}, f"a {tag!r} message")


_HINTS: dict[type, dict[str, Any]] = {}


def _build(cls: type, data: Any, what: str, path: str = "") -> Any:
    """`cls` made from JSON `data`, every field checked against its type hint.

    `path` is where `data` sits in the message ("request.gate"), so an error names the field
    the way a person would look for it.
    """
    if not isinstance(data, dict):
        raise WireError(f"{what}'s {path!r} is a JSON object, not {data!r}"[:300])
    hints = _HINTS.get(cls) or _HINTS.setdefault(cls, typing.get_type_hints(cls))
    fields = {f.name: f for f in dataclasses.fields(cls)}
    at = f"{path}." if path else ""
    extra = sorted(set(data) - set(fields))
    if extra:
        raise WireError(f"{what} has no field {', '.join(repr(at + name) for name in extra)}")
    missing = [
        at + name
        for name, f in fields.items()
        if name not in data and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise WireError(f"{what} needs {', '.join(map(repr, missing))}")
    values = {name: _value(value, hints[name], what, at + name) for name, value in data.items()}
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:  # a check of the type's own (`Decision`, `Answer`)
        raise WireError(f"{what}: {exc}") from None


def _value(value: Any, hint: Any, what: str, path: str) -> Any:
    """One field's JSON value as the type `hint` wants it (a path from a string, a key from a list)."""
    origin = typing.get_origin(hint)
    if hint is At:  # a review's key: its four numbers, as the pipe carried it before there was an At
        try:
            return At.of_micro_key(value)
        except (BadPlace, TypeError):
            raise WireError(f"{what}'s {path!r} cannot be {value!r} (epoch, step, group, attempt)"[:300]) from None
    elif origin in (typing.Union, types.UnionType):
        arms = typing.get_args(hint)
        if value is None and type(None) in arms:
            return None
        built = [a for a in arms if isinstance(a, type) and dataclasses.is_dataclass(a)]
        if built:  # `GateVerdict | None`, `Decision | None`
            return _build(built[0], value, what, path)
        if fits(value, hint):
            return value
    elif isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _build(hint, value, what, path)
    elif hint is Path:
        if isinstance(value, str):
            return Path(value)
    elif origin is Literal:
        if value in typing.get_args(hint):
            return value
    elif origin is list and typing.get_args(hint) and dataclasses.is_dataclass(typing.get_args(hint)[0]):
        if isinstance(value, list):  # a review's candidates
            item = typing.get_args(hint)[0]
            return [_build(item, v, what, f"{path}[{i}]") for i, v in enumerate(value)]
    elif origin is tuple:
        items = typing.get_args(hint)
        if isinstance(value, list) and len(value) == len(items) and all(map(fits, value, items)):
            return tuple(value)
    elif fits(value, hint):
        return value
    raise WireError(f"{what}'s {path!r} cannot be {value!r}"[:300])
