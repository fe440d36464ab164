"""`skilltui ...`: the command line.

    skilltui demo                         train the bundled works offline, in the app
    skilltui diffuse --work DIR           write DIR/story.md, the writer's input
    skilltui train --work DIR [--auto]    train a pool on one or more works
    skilltui lint POOL [--work DIR ...]   check a pool's notes (and for leaks of the works)
    skilltui score --human F --written F  the loss of one script against another
    skilltui repair RUN                   point a damaged pool back at its newest intact commit
    skilltui completion SHELL             tab completion for bash, zsh, fish, tcsh or PowerShell

Bad input ends with one line on stderr that says what to do and exit code 2; a run that
stops early resumes when the same command is run again. Bare `skilltui` lists the commands,
and a mistyped one is answered with the nearest (`trian`: did you mean train?).

This module is the entry point only: the parser, and `main`, which turns every way a
command can end into an exit code and one line. The commands themselves, every one of them,
are in skilltui/commands/.
"""

from __future__ import annotations

import signal
import sys
import threading

from . import handlers_before_start, stopped_while_starting

# A Ctrl-C (or SIGTERM, SIGHUP) while this module's imports load ends in one line, not a
# traceback (launched as the command, the package did this already, before this module
# loaded); main() takes over from here, and importing this module elsewhere (tests) keeps
# its own handlers once the imports are done.
_before = (
    {sig: signal.signal(sig, stopped_while_starting) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    if threading.current_thread() is threading.main_thread()
    else {}
)
_before.update(handlers_before_start)

import argparse  # noqa: E402
import os  # noqa: E402
import typing  # noqa: E402

from . import __version__  # noqa: E402
from .commands import register_all  # noqa: E402
from .core.errors import UsageError  # noqa: E402
from .core.signals import Terminated, exit_code, install_stop_signals, say_on_stop, signal_of, stop_line  # noqa: E402

for _sig, _handler in _before.items():
    signal.signal(_sig, _handler)


class OneLineParser(argparse.ArgumentParser):
    """argparse whose bad input is one line naming the problem and `--help`, not a usage dump.

    Subcommand parsers are made with the parent's class, so every command refuses the same way.
    """

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="skilltui",
        description="Train a pool of markdown craft notes for a screenwriting agent the way a network is "
        "trained: forward, loss, backward, one git commit per update.",
    )
    parser.add_argument("--version", action="version", version=f"skilltui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register_all(sub)
    # `skilltui completion` makes its script from this whole parser, which no subcommand sees otherwise.
    parser.set_defaults(command_line=parser)
    return parser


def unknown_command(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """One line for a first word that is no command, naming the nearest one (`trian`: did you mean train?)."""
    if not argv or argv[0].startswith("-"):
        return None
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if argv[0] in sub.choices:
        return None
    import difflib

    near = difflib.get_close_matches(argv[0], list(sub.choices), n=1, cutoff=0.6)
    hint = f"did you mean {near[0]}?" if near else "bare `skilltui` lists the commands"
    return f"no command {argv[0]!r}; {hint} (see skilltui --help)"


def overview(parser: argparse.ArgumentParser) -> str:
    """What bare `skilltui` prints: the commands, one line each, and where to read more."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    rows = [(choice.dest, choice.help or "") for choice in sub._choices_actions]
    width = max(len(name) for name, _ in rows)
    lines = [f"  {name:<{width}}  {about}" for name, about in rows]
    return "\n".join(
        [
            "usage: skilltui COMMAND [options]",
            "",
            "commands:",
            *lines,
            "",
            "`skilltui COMMAND --help` explains a command and its flags; start with `skilltui demo`.",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    restore = install_stop_signals()
    try:
        parser = build_parser()
        words = sys.argv[1:] if argv is None else argv
        if not words:
            print(overview(parser))
            return 0
        unknown = unknown_command(parser, words)
        if unknown:
            raise UsageError(unknown)
        args = parser.parse_args(argv)
        say_on_stop(getattr(args, "stop_hint", None))  # a command whose stop is no run's says its own
        return args.handler(args)
    except UsageError as exc:
        print(f"skilltui: error: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Terminated) as exc:
        signum = signal_of(exc)
        print(f"\n{stop_line(signum)}", file=sys.stderr)
        return exit_code(signum)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:  # noqa: BLE001 - no traceback reaches the user; it goes to a file
        damage = _damage(exc)
        if damage:
            print(f"skilltui: error: {damage}", file=sys.stderr)
            return 2
        print(f"skilltui: error: {_problem(exc)}", file=sys.stderr)
        return 1
    finally:
        say_on_stop(None)
        restore()


def _damage(exc: Exception) -> str | None:
    """One line for a git object that cannot be read, wherever a command met it: damage, not a bug."""
    from .pool.damage import damage_of

    found = damage_of(exc)
    if found is None:
        return None
    return (
        f"the pool's repository is damaged: an object cannot be read ({found}); nothing was deleted. "
        "See the damage with `git fsck` in the run's memory/ folder, or run `skilltui repair RUN`"
    )


def _problem(exc: Exception) -> str:
    """One line for a failure outside a training loop (which reports its own).

    A full disk or a folder that cannot be written says so; anything else is a bug, whose
    traceback is kept in a file the line names. Every record is written whole, so the
    command can be run again once the cause is fixed.
    """
    from .core.durable import no_room

    again = "run the same command again"
    if no_room(exc):
        return f"the disk is full ({_first_line(exc)}); free some space and {again}"
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror or exc}{where}; fix that and {again}"
    import tempfile
    import traceback

    with tempfile.NamedTemporaryFile("w", prefix="skilltui-error-", suffix=".txt", delete=False) as f:
        traceback.print_exception(exc, file=f)
    return f"{type(exc).__name__}: {_first_line(exc)} (a bug; the details are in {f.name})"


def _first_line(exc: BaseException) -> str:
    """The line of an error that says the most (for a git command, its stderr's last line)."""
    lines = [line.strip().removeprefix("stderr: ").strip("'") for line in str(exc).splitlines() if line.strip()]
    return next((line for line in reversed(lines) if "space" in line.lower()), lines[0] if lines else "")
