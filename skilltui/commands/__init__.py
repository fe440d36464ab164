"""Every `skilltui` subcommand, one module per family, all added by `register_all`.

- training.py: `train`, the command that runs training (headless or in the app);
- demo.py: `demo`, the bundled works trained offline, and `repair`, which puts a damaged pool
  back on an intact commit so training can go on;
- material.py: `diffuse`, `lint` and `score`, one-shot commands on what training uses and
  makes: a work's story, a pool's notes, a script's loss;
- history.py: `review`, `runs`, `export` and `compare`, on runs already made;
- report.py: `report`, a run as one web page.
- scripts.py: `import`, a person's own scripts (Final Draft, PDF, text) made into a work,
  and `check`, a work checked before training pays for it.
- evaluation.py: `eval`, two pools compared on works with a paired interval;
- crossval.py: `crossval`, k-fold cross-validation over works, each fold a run with a test split;
- tracking.py: `mlflow`, finished runs into MLflow, and `train`'s `--mlflow` flags (the
  logging is skilltui/tracking/, an optional extra).
- shell.py: `completion`, the shell's tab completion made from this parser.
- settings_flags.py: the settings' flags, built from their one declaration, and `Settings`
  made from the parsed flags.

Each module's `register(sub)` adds its parsers with `command`, which takes a command's help
from its handler's docstring; the flags several commands share (RUN, a folder flag) are
declared once, here, and every setting's flag (`--runs-dir`, the model flags, all of
`train`'s) once in the engine's settings_fields.py, which settings_flags.py builds into
argparse flags. A handler takes the parsed arguments and returns the exit code, and raises
`UsageError` for bad input (the command line turns it into one line and exit code 2).
Handlers import the engine when they run, not when the command line starts (which reads
only the settings' declaration, a module of data), so `skilltui --help` stays quick and a
stop signal during start-up ends in one line.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from pathlib import Path

Handler = Callable[[argparse.Namespace], int]

# How `skilltui completion` (shtab) completes a folder flag, per shell: shtab.DIRECTORY's
# value, written out because importing shtab would slow every command line for a script few
# of them print (a test keeps the two equal; the import's cost: docs/benchmarks.md, "Start-up").
FOLDERS = {
    "bash": "_shtab_compgen_dirs",
    "zsh": "_files -/",
    "tcsh": "d",
    "fish": "(__fish_complete_directories)",
    "powershell": "_shtab_powershell_compgen_dirs",
}


def register_all(sub: argparse._SubParsersAction) -> None:
    """Add every subcommand, in the order bare `skilltui` lists them."""
    from . import crossval, demo, evaluation, history, mailbox, material, report, scripts, shell, tracking, training

    for family in (training, demo, scripts, material, history, report, evaluation, crossval, tracking, mailbox, shell):
        family.register(sub)


def command(
    sub: argparse._SubParsersAction, name: str, handler: Handler, *, keys: Callable[[], str] | None = None
) -> argparse.ArgumentParser:
    """Add subcommand `name`, run by `handler`, explained by the handler's own docstring.

    The docstring's first line is the one-line help (bare `skilltui` and `--help` list it),
    the rest the description `skilltui NAME --help` prints: what a command does is written
    once, where it is done. A terminal app's command passes `keys`, which gives its keys
    from the key map its screens bind; it runs only when `--help` is printed, so the key
    map (and Textual, which it needs) is not imported for every command line.
    """
    summary, _, rest = inspect.cleandoc(handler.__doc__ or "").partition("\n")
    summary = summary.strip().removesuffix(".")
    p = sub.add_parser(name, help=summary[:1].lower() + summary[1:], description=" ".join(rest.split()) or summary)
    p.set_defaults(handler=handler)
    if keys is not None:
        plain = p.format_help
        p.format_help = lambda: f"{plain()}\nkeys:\n{keys()}\n"
    return p


def add_folders_flag(p: argparse.ArgumentParser, flag: str, dest: str, about: str, *, required: bool = False) -> None:
    """A folder flag that can be repeated (`--work A --work B`), collected into the list `dest`."""
    p.add_argument(
        flag,
        action="append",
        required=required,
        default=None if required else [],
        type=Path,
        dest=dest,
        metavar="DIR",
        help=about,
    ).complete = FOLDERS  # type: ignore[attr-defined]


def add_runs_dir(p: argparse.ArgumentParser) -> None:
    """`--runs-dir`, the folder every command finds runs in (and `train` makes them in): the setting's own flag."""
    from .settings_flags import add_setting_flags

    add_setting_flags(p, ["runs_dir"])


def add_run_arg(p: argparse.ArgumentParser) -> None:
    """RUN, the run a command reads, and `--runs-dir`, where a bare run id is looked for."""
    p.add_argument("run", metavar="RUN", help="a run folder, or a run id under --runs-dir")
    add_runs_dir(p)


def add_model_flags(p: argparse.ArgumentParser) -> None:
    """Who plays the agents (`--backend`, `--model`, `--base-url`): the settings' own flags, as `train` has them."""
    from .settings_flags import add_setting_flags

    add_setting_flags(p, ["backend", "model", "base_url"])
