"""`train`'s flags are the settings' one declaration: a field a flag, the engine's defaults, a bound one line."""

from __future__ import annotations

import math
import re
from dataclasses import MISSING, fields
from pathlib import Path
from types import SimpleNamespace

import pytest

from skilltui.agents import default_backend
from skilltui.cli import build_parser, main
from skilltui.core.flags import field_default, flag_name, flag_of
from skilltui.engine.settings import Settings
from skilltui.engine.settings_fields import GROUPS

# The flags of `train` that are the command's, not a setting's: what it does besides training.
COMMAND_FLAGS = {"--estimate", "--mlflow", "--mlflow-experiment"}


def train_parser():
    return build_parser()._subparsers._group_actions[0].choices["train"]  # type: ignore[union-attr]


def by_flag() -> dict[str, object]:
    return {a.option_strings[0]: a for a in train_parser()._actions if a.option_strings and a.dest != "help"}


def test_every_setting_has_a_train_flag_and_every_train_flag_but_the_commands_own_a_setting():
    actions = by_flag()
    for f in fields(Settings):
        spec = flag_of(f)
        if spec.filled_by:  # role_backends: the BACKEND of --role-model ROLE=BACKEND:MODEL
            assert spec.filled_by in actions, f.name
            continue
        assert flag_name(f) in actions, f.name
        assert actions[flag_name(f)].dest == f.name
        assert spec.group in GROUPS, f.name
    settings = {flag_name(f) for f in fields(Settings) if not flag_of(f).filled_by}
    assert set(actions) - settings == COMMAND_FLAGS


def test_train_without_flags_makes_the_settings_the_engine_makes_by_default():
    args = build_parser().parse_args(["train", "--work", "w"])
    from skilltui.commands.training import settings_from

    made = settings_from(args)
    # --backend's default depends on the environment (a key or none); the rest is the field's own.
    assert made == Settings(works=[Path("w")], backend=default_backend())
    for f in fields(Settings)[1:]:  # not even 2400 for 2400.0: a value read back from JSON keeps its type
        assert type(getattr(made, f.name)) is type(field_default(f)), f.name


def test_given_flags_fill_the_fields_of_their_names():
    from skilltui.commands.training import settings_from

    argv = ["train", "--work", "w", "--steps", "7", "--role-model", "loss=m", "--gate", "--no-consolidate"]
    made = settings_from(build_parser().parse_args([*argv, "--role-model", "writer=openai:llama3"]))
    assert (made.steps, made.gate, made.consolidate) == (7, True, False)
    assert (made.role_models, made.role_backends) == ({"loss": "m", "forward": "llama3"}, {"forward": "openai"})


def test_the_default_help_shows_is_the_fields_own_and_written_nowhere_else():
    actions = by_flag()
    for f in fields(Settings):
        spec, default = flag_of(f), field_default(f)
        if spec.filled_by:
            continue
        action = actions[flag_name(f)]
        # A dict setting is typed as repeated KEY=VALUE items: a list until the command reads it.
        given = [] if default == {} else None if spec.default_from or default is MISSING else default
        assert action.default == given, f.name
        # A number typed into a help text would drift from the field; `{default}` cannot.
        assert not re.search(r"default:? \d", spec.help), f.name
        if isinstance(default, int | float) and not isinstance(default, bool):
            assert "{default" in spec.help, f"{f.name}: --help should say its default"
            assert f"default {default:g}" in action.help, f.name


def test_train_help_reads_by_task_in_the_declarations_order():
    text = train_parser().format_help()
    places = [text.index(f"\n{key}:\n  {what}\n") for key, what in GROUPS.items()]
    assert places == sorted(places)
    assert text.index("\n  --steps STEPS") > text.index("\ntraining:\n") > text.index("\n  --backend BACKEND")


def bad_value(f) -> str | None:
    """A value the field's bound refuses, as it would be typed (None: the field has no bound)."""
    spec = flag_of(f)
    if spec.bound is None:
        return None
    kind = float if str(f.type).startswith("float") else int  # the annotation, a string here: "int | None"
    return next(t for t in ("0", "-1", "17", "nan", "2") if kind is float or t != "nan" if not spec.bound(kind(t)))


BOUNDED = [f for f in fields(Settings) if bad_value(f) is not None]


def test_the_bound_cases_cover_the_settings_people_get_wrong():
    assert {f.name for f in BOUNDED} >= {"steps", "candidates", "max_cost", "gate_confidence", "test_repeats"}
    assert len(BOUNDED) >= 20


@pytest.mark.parametrize("f", BOUNDED, ids=[f.name for f in BOUNDED])
def test_a_value_outside_a_settings_bound_is_one_line_naming_the_flag(f, tmp_path, capsys):
    runs = tmp_path / "runs"
    argv = ["train", "--auto", "--work", str(tmp_path / "w"), "--runs-dir", str(runs)]
    assert main([*argv, flag_name(f), bad_value(f)]) == 2
    assert capsys.readouterr().err == f"skilltui: error: {flag_name(f)} {flag_of(f).problem}\n"
    assert not runs.exists()


def test_a_value_that_is_no_number_is_one_line_naming_the_flag_what_it_takes_and_help(capsys):
    for flag, value, takes in (
        ("--val-repeats", "two", "is not a whole number; --val-repeats must be at least 1 (passes over"),
        ("--candidates", "1e22", "is not a whole number; --candidates takes a whole number from 1 to 16 ("),
        ("--max-cost", "lots", "is not a number; --max-cost must be a positive number of US dollars (see"),
        ("--gate-max-repeats", "x", "is not a whole number (see"),  # its bound is --val-repeats: no line of its own
    ):
        assert main(["train", "--work", "w", flag, value]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"skilltui: error: {flag} {value!r} {takes}"), err
        assert err.endswith("(see skilltui train --help)\n") and err.count("\n") == 1


def test_settings_made_in_code_meet_the_same_bounds_as_flags():
    with pytest.raises(Exception, match="--test-repeats must be at least 1"):
        Settings(works=[], test_repeats=0).check()
    with pytest.raises(Exception, match="--test-every must be one of epoch, end"):
        Settings(works=[], test_every="sometimes").check()
    with pytest.raises(Exception, match="--max-cost must be a positive number"):
        Settings(works=[], max_cost=math.inf).check()


def test_eval_takes_the_same_settings_flags_and_bounds(tmp_path, capsys):
    argv = ["eval", "--pool", "a", "--work", str(tmp_path / "w"), "--runs-dir", str(tmp_path / "runs")]
    for flag, value in (("--workers", "0"), ("--max-cost", "nan"), ("--offline-noise", "2")):
        assert main([*argv, flag, value]) == 2
        f = next(f for f in fields(Settings) if flag_name(f) == flag)
        assert capsys.readouterr().err == f"skilltui: error: {flag} {flag_of(f).problem}\n"
    assert not (tmp_path / "runs").exists()


def test_eval_calls_its_backend_at_the_base_url_it_was_given(tmp_path, make_work, monkeypatch):
    # --base-url was parsed and dropped before eval's flags came from the declaration.
    import skilltui.agents as agents
    import skilltui.engine.validation.evaluate as evaluate
    from skilltui.core.errors import UsageError

    made: dict = {}

    def make_backend(name, model=None, **given):
        made.update(given, name=name)
        raise UsageError("made")

    monkeypatch.setattr(evaluate, "resolve_pool", lambda spec, runs_dir: SimpleNamespace(key=spec, label=spec))
    monkeypatch.setattr(agents, "make_backend", make_backend)
    work = make_work("harbour", 2)
    url = "http://localhost:9/v1"
    argv = ["eval", "--pool", "a", "--pool", "b", "--work", str(work), "--backend", "openai", "--base-url", url]
    assert main([*argv, "--runs-dir", str(tmp_path / "runs")]) == 2
    assert made == {"name": "openai", "offline_noise": 0.0, "base_url": url}


def test_crossval_refuses_batch_without_the_anthropic_backend_as_train_does(tmp_path, capsys):
    # The check across settings is the settings' own, so every command that makes them holds it.
    for command in (["train"], ["crossval", "--folds", "2"]):
        works = ["--work", str(tmp_path / "a"), "--work", str(tmp_path / "b")]
        argv = [*command, *works, "--batch", "--backend", "offline"]
        assert main([*argv, "--runs-dir", str(tmp_path / "runs")]) == 2
        assert "--batch needs --backend anthropic" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
