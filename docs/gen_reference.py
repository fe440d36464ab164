"""Write the docs' command reference and key tables from the code, so neither can drift.

    python docs/gen_reference.py           write docs/reference/cli.md and docs/reference/keys.md
    python docs/gen_reference.py --check   exit 1 if either differs from what the code makes

The command reference walks the argparse parser `skilltui` runs (`skilltui.cli.build_parser`):
every subcommand with its description, usage and every flag, its value, default and help;
`train`'s flags are grouped by task (TRAIN_GROUPS; a flag in no group, or a group naming a
flag that does not exist, stops the script). The key tables are the key map's own
(`skilltui.components.keymap`), the same rows the apps bind and `?` shows.
tests/test_docs.py runs `--check` and also looks up every flag and key in the pages.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REFERENCE = DOCS / "reference"

# `train`'s flags by what a person is deciding when they reach for one.
TRAIN_GROUPS: dict[str, tuple[str, ...]] = {
    "Data: what trains": ("--work", "--episodes-per-step", "--max-script-kb", "--init-pool", "--prompts"),
    "Model: who plays the agents": (
        "--backend",
        "--model",
        "--role-model",
        "--base-url",
        "--forward-timeout",
        "--loss-timeout",
        "--backward-timeout",
        "--offline-latency",
        "--offline-noise",
        "--offline-noise-call",
    ),
    "Training: the loop and the backward pass": (
        "--steps",
        "--epochs",
        "--workers",
        "--group-size",
        "--no-backward",
        "--judge-weight",
        "--backward-retries",
        "--candidates",
        "--strict",
        "--max-edit-lines",
        "--pool-budget",
        "--consolidate",
        "--consolidate-edit-lines",
    ),
    "Validation: held-out works and the gate": (
        "--val-work",
        "--val-repeats",
        "--val-episodes",
        "--gate",
        "--gate-confidence",
        "--gate-max-repeats",
        "--consolidate-margin",
        "--gate-tolerance",
    ),
    "Test: works nothing else sees, for the final figure": (
        "--test-work",
        "--test-episodes",
        "--test-repeats",
        "--test-every",
    ),
    "Review: who decides": ("--auto",),
    "Cost: before and while it runs": ("--estimate", "--max-cost", "--batch"),
    "Tracking: where the run is kept and logged": ("--runs-dir", "--run-id", "--mlflow", "--mlflow-experiment"),
}


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def documented(p: argparse.ArgumentParser) -> list[argparse.Action]:
    """A command's arguments as its --help lists them (help and hidden ones left out)."""
    return [a for a in p._actions if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS]


def cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def names(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    return ", ".join(f"`{flag}`" for flag in action.option_strings)


def value(action: argparse.Action) -> str:
    if not action.option_strings or action.nargs == 0:
        return ""
    metavar = action.metavar or action.dest.upper()
    if action.choices:
        metavar = "{" + ",".join(map(str, action.choices)) + "}"
    return f"`{metavar}`" + (" (optional)" if action.nargs == "?" else "")


def default(action: argparse.Action) -> str:
    if action.default in (None, [], False, argparse.SUPPRESS) or action.required or not action.option_strings:
        return ""
    return f"`{action.default}`"


def table(p: argparse.ArgumentParser, actions: list[argparse.Action]) -> list[str]:
    formatter = p._get_formatter()
    rows = ["| argument | value | default | what it does |", "|---|---|---|---|"]
    for action in actions:
        about = formatter._expand_help(action) if action.help else ""
        rows.append(f"| {names(action)} | {value(action)} | {default(action)} | {cell(about)} |")
    return rows


def train_groups(p: argparse.ArgumentParser, actions: list[argparse.Action]) -> list[str]:
    by_flag = {a.option_strings[0]: a for a in actions if a.option_strings}
    grouped = [flag for flags in TRAIN_GROUPS.values() for flag in flags]
    loose = sorted(set(by_flag) - set(grouped))
    unknown = sorted(set(grouped) - set(by_flag))
    if loose or unknown or len(grouped) != len(set(grouped)):
        raise SystemExit(f"gen_reference: train flags in no group {loose}, unknown in a group {unknown}")
    out: list[str] = []
    for title, flags in TRAIN_GROUPS.items():
        out += [f"### {title}", "", *table(p, [by_flag[f] for f in flags]), ""]
    return out


def cli_markdown() -> str:
    from skilltui.cli import build_parser

    # argparse wraps usage at the terminal's width; a fixed one makes the page the same everywhere.
    os.environ["COLUMNS"] = "100"
    parser = build_parser()
    out = [
        "# Command reference",
        "",
        "<!-- Generated by `python docs/gen_reference.py` from the argparse parser; do not edit. -->",
        "",
        "Every subcommand and every flag, as `skilltui COMMAND --help` prints them. Bad input ends",
        "with one line on stderr and exit code 2; `skilltui --version` prints the version.",
        "",
    ]
    for name, p in subcommands(parser).items():
        out += [f"## skilltui {name}", "", cell(p.description or ""), "", "```", p.format_usage().strip(), "```", ""]
        actions = documented(p)
        if name == "train":
            positional = [a for a in actions if not a.option_strings]
            out += table(p, positional) + [""] if positional else []
            out += train_groups(p, actions)
        elif actions:
            out += [*table(p, actions), ""]
    return "\n".join(out)


def keys_markdown() -> str:
    from skilltui.components.keymap import key_table, keymap_markdown

    return "\n".join(
        [
            "# Keys",
            "",
            "<!-- Generated by `python docs/gen_reference.py` from skilltui/components/keymap.py; do not edit. -->",
            "",
            "The keys of the live app (`skilltui train`, `skilltui demo`) and of the history browser",
            "(`skilltui review`), made from the same table the apps bind their keys from; `?` shows",
            "them in either app.",
            "",
            "## The live app",
            "",
            keymap_markdown().rstrip(),
            "",
            "## skilltui review",
            "",
            key_table("history"),
            "",
        ]
    )


def pages() -> dict[Path, str]:
    return {REFERENCE / "cli.md": cli_markdown(), REFERENCE / "keys.md": keys_markdown()}


def main(argv: list[str]) -> int:
    stale = [path for path, text in pages().items() if not path.is_file() or path.read_text("utf-8") != text]
    if "--check" in argv:
        for path in stale:
            print(f"{path.relative_to(DOCS.parent)} is stale: run python docs/gen_reference.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in pages().items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
