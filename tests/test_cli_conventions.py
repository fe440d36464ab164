"""What a person expects of any command-line tool: --version, tab completion, a width from COLUMNS."""

from __future__ import annotations

import fcntl
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from skilltui import __version__
from skilltui.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"skilltui {__version__}\n"


def test_the_folder_completion_is_shtabs_own() -> None:
    # commands/ writes shtab's DIRECTORY out to keep shtab off every command line's start.
    import shtab

    from skilltui.commands import FOLDERS

    assert FOLDERS == {shell: shtab.DIRECTORY[shell] for shell in shtab.SUPPORTED_SHELLS}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "tcsh", "powershell"])
def test_completion_prints_a_script_for_each_shell(shell: str, capsys: pytest.CaptureFixture) -> None:
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert "skilltui" in script and "train" in script and "--runs-dir" in script


def test_completion_of_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["completion", "cmd.exe"])
    assert exit_.value.code == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


@pytest.mark.subprocess
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_bash_completes_commands_flags_and_folders(tmp_path: Path) -> None:
    script = tmp_path / "skilltui.bash"
    subprocess.run([sys.executable, "-m", "skilltui", "completion", "bash"], stdout=script.open("w"), check=True)
    (tmp_path / "works").mkdir()
    (tmp_path / "works.txt").write_text("not a folder")

    def complete(*words: str) -> list[str]:
        array = " ".join(f"'{w}'" for w in words)
        probe = f"source {script}; COMP_WORDS=({array}); COMP_CWORD={len(words) - 1}; _shtab_skilltui; "
        probe += 'printf "%s\\n" "${COMPREPLY[@]}"'
        done = subprocess.run(["bash", "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert complete("skilltui", "tr") == ["train"]
    assert "--work" in complete("skilltui", "train", "--wo")
    # A folder flag offers folders only, not the file beside them.
    assert complete("skilltui", "train", "--work", "wo") == ["works"]


def test_every_subcommand_is_in_the_completion_script(capsys: pytest.CaptureFixture) -> None:
    sub = build_parser()._subparsers._group_actions[0]  # type: ignore[union-attr]
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    for name in sub.choices:
        assert name in script, name


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_piped_runs_table_takes_its_width_from_columns(tmp_path: Path, make_work, capsys) -> None:
    # One offline step on two works is a run the table lists in full (137 columns wide).
    runs = tmp_path / "runs"
    works = [a for name in ("kestrel", "lantern") for a in ("--work", str(make_work(name, 2)))]
    assert main(["train", "--auto", "--backend", "offline", "--runs-dir", str(runs), "--steps", "1", *works]) == 0
    capsys.readouterr()
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}

    def widest(columns: str | None) -> int:
        at = env if columns is None else {**env, "COLUMNS": columns}
        listing = [sys.executable, "-m", "skilltui", "runs", "--runs-dir", str(runs)]
        out = subprocess.run(listing, env=at, capture_output=True, text=True, check=True).stdout
        return max(len(line) for line in out.splitlines())

    assert widest("60") <= 60
    assert 110 < widest("150") <= 150
    # Without COLUMNS a pipe still gets room for the table (Rich alone would squeeze it into 80).
    assert widest(None) > 110
    # Piped to a pager in a terminal (`runs | less`), the terminal on stderr is the reader's width.
    reader, terminal = pty.openpty()
    try:
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 90, 0, 0))
        listing = [sys.executable, "-m", "skilltui", "runs", "--runs-dir", str(runs)]
        out = subprocess.run(listing, env=env, stdout=subprocess.PIPE, stderr=terminal, text=True, check=True).stdout
    finally:
        os.close(reader)
        os.close(terminal)
    assert max(len(line) for line in out.splitlines()) <= 90, out
    assert all(run.name in out for run in runs.iterdir() if run.is_dir()), out  # every run still listed
