"""The command line: bare `skilltui` lists what it can do (train's flags: test_settings_flags.py)."""

from __future__ import annotations

import pytest

from skilltui.cli import build_parser, main


def test_bare_skilltui_lists_every_command_on_one_line_each(capsys: pytest.CaptureFixture) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    commands = sorted(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    for name in commands:
        rows = [line for line in lines if line.split()[:1] == [name]]
        assert len(rows) == 1, f"{name} should have exactly one line: {rows}"
        assert len(rows[0].split()) > 2, f"{name} has no description: {rows[0]!r}"
    assert {"train", "demo", "review", "export"} <= set(commands)
    assert "skilltui COMMAND --help" in out


def test_an_unknown_command_is_one_line_naming_the_nearest_one(capsys: pytest.CaptureFixture) -> None:
    assert main(["trian", "--work", "w"]) == 2
    err = capsys.readouterr().err
    assert err == "skilltui: error: no command 'trian'; did you mean train? (see skilltui --help)\n"
    assert main(["xyzzy"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "did you mean" not in err and "lists the commands" in err
