"""The settings' flags, built from their one declaration (engine/settings_fields.py), and read back.

`add_setting_flags` turns each field's `Flag` into an argparse flag: its name, help (with
the field's own default written in), metavar, choices, and a parser from the field's type,
in the argument group of its task, so `skilltui train --help` reads by task. `settings_from`
makes `Settings` from the parsed flags. Nothing is checked here beyond what a value reads as
(a whole number, a number; a refusal says the flag's bound too): the bounds are the
declaration's, and `Settings.check` holds them for every command and for settings made in code.
"""

from __future__ import annotations

import argparse
import functools
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from ..core.flags import field_default, flag_name, flag_of
from ..engine.settings_fields import GROUPS, Fields
from . import FOLDERS

if TYPE_CHECKING:
    from ..engine.settings import Settings


def _reader(kind: type, f: Field, prog: str) -> Callable[[str], Any]:
    """A number from the text, or one line (exit 2) that names the flag, what was typed and what it takes.

    A UsageError, not argparse's `invalid int value`: `--candidates 1e22` is told the bound
    (1 to 16, and why), the same words `Settings.check` says for `--candidates 17`.
    """
    what = "a whole number" if kind is int else "a number"
    takes = f"; {flag_name(f)} {flag_of(f).problem}" if flag_of(f).problem else ""

    def read(text: str) -> Any:
        try:
            return kind(text)
        except ValueError:
            raise UsageError(f"{flag_name(f)} {text!r} is not {what}{takes} (see {prog} --help)") from None

    return read


_PARSE = {Path: Path, str: None}  # int and float: _reader


@functools.cache
def _types() -> dict[str, Any]:
    """Each field's type with `| None` taken off (`int | None`: int), what a value on the command line reads as."""
    return {name: _given(t) for name, t in typing.get_type_hints(Fields).items()}


def _given(t: Any) -> Any:
    if typing.get_origin(t) is types.UnionType:
        return next(a for a in typing.get_args(t) if a is not type(None))
    return t


def flagged() -> list[Field]:
    """The fields that have a flag of their own, in declaration order."""
    return [f for f in fields(Fields) if not flag_of(f).filled_by]


def add_setting_flags(
    p: argparse.ArgumentParser, names: Iterable[str] | None = None, *, about: dict[str, str] | None = None
) -> dict[str, argparse._ArgumentGroup]:
    """Add the flags of the settings `names` (all of them, in task groups, when None) to `p`.

    A command that takes only a few settings (`eval`, `diffuse`) adds them ungrouped and may
    say in `about` what one means for it (`--workers`: passes at once); the flag, its default
    and its bound stay the declaration's. Returns the task groups, so a command can add its
    own flags to the task they serve (`--estimate` to cost).
    """
    groups: dict[str, argparse._ArgumentGroup] = {}
    if names is None:
        groups = {key: p.add_argument_group(key, what) for key, what in GROUPS.items()}
    chosen = [f for f in flagged() if names is None or f.name in set(names)]
    for f in chosen:
        # A group the declaration misspells stops every command line at once (a KeyError), not one flag.
        _add(groups[flag_of(f).group] if groups else p, f, (about or {}).get(f.name), p.prog)
    return groups


def _add(p: argparse.ArgumentParser | argparse._ArgumentGroup, f: Field, about: str | None, prog: str) -> None:
    options = {k: v for k, v in _options(f, about, prog).items() if v is not None}  # None: argparse's own
    action = p.add_argument(flag_name(f), **options)
    kind = _types()[f.name]
    if Path in (kind, *typing.get_args(kind)):  # a folder, or folders: the shell completes folders
        action.complete = FOLDERS  # type: ignore[attr-defined]


def _options(f: Field, about: str | None, prog: str) -> dict[str, Any]:
    """The argparse keywords of one setting's flag, from its field's type and default and its Flag."""
    spec, kind, default = flag_of(f), _types()[f.name], field_default(f)
    text = (about or spec.help).format(default=default).replace("%", "%%")  # argparse formats help with %
    options = {"dest": f.name, "help": text, "metavar": spec.metavar}
    if kind is bool:  # a setting on by default is turned off with --no-NAME
        return {**options, "action": argparse.BooleanOptionalAction if default else "store_true", "default": default}
    if typing.get_origin(kind) is list:  # repeated: `--work A --work B`
        required = default is MISSING
        item = _PARSE[typing.get_args(kind)[0]]
        return {**options, "action": "append", "type": item, "required": required, "default": None if required else []}
    if typing.get_origin(kind) is dict:
        # Repeated KEY=VALUE items, which the command reads (`--role-model`: run_backends.role_settings).
        return {**options, "action": "append", "default": []}
    default = None if spec.default_from else default  # worked out when the command runs
    read = spec.parse or (_reader(kind, f, prog) if kind in (int, float) else _PARSE[kind])
    return {**options, "type": read, "default": default, "choices": spec.choices or None}


def settings_from(args: argparse.Namespace) -> Settings:
    """The run's Settings from the parsed flags: every setting flag fills the field of its name.

    A flag whose default depends on where the command runs (`--backend`: anthropic with a key)
    gets it here; `--role-model` fills two fields, the roles' models and their backends.
    """
    from ..engine.settings import Settings
    from .run_backends import role_settings

    given = {f.name: getattr(args, f.name) for f in flagged() if hasattr(args, f.name)}
    for f in flagged():
        worked_out = flag_of(f).default_from
        if given.get(f.name, 0) is None and worked_out:
            given[f.name] = worked_out()
    roles = given.pop("role_models", [])
    return Settings(**given, **role_settings(roles, given.get("backend", "offline")))
