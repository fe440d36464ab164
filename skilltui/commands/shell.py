"""The `completion` subcommand: tab completion of skilltui's commands and flags in a shell.

    skilltui completion bash|zsh|fish|tcsh|powershell   print the completion script for that shell

The script is made by shtab from the same argparse parser the command line runs, so a new
flag completes as soon as it exists, and the folder flags (`--work`, `--runs-dir`, ...)
complete folders. How to install it is in the docs (getting started).
"""

from __future__ import annotations

import argparse

from . import command

SHELLS = ("bash", "zsh", "fish", "tcsh", "powershell")


def register(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "completion", cmd_completion)
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def cmd_completion(args: argparse.Namespace) -> int:
    """Print the shell completion script for bash, zsh, fish, tcsh or PowerShell.

    Print a script that completes skilltui's commands, flags and folders in the given shell.
    Load it for this shell with `eval "$(skilltui completion bash)"` (bash) or `source <(skilltui
    completion zsh)` (zsh), or write it where the shell looks for completions, e.g.
    `skilltui completion bash > ~/.local/share/bash-completion/completions/skilltui`.
    """
    import shtab

    print(shtab.complete(args.command_line, shell=args.shell), end="")
    return 0
