"""Changing a finished run on disk into the state a crash would have left; copying a trained one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from skilltui.cli import main
from skilltui.store.run_folder import Run
from tests.support.works import write_work


def unfinish(runs: Path, run_id: str = "r") -> None:
    """Make a finished run look like one that crashed before its end: drop its run_finished lines."""
    path = runs / run_id / "events.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(line for line in lines if '"kind": "run_finished"' not in line), encoding="utf-8")


def copy_tree_into(template: Path, into: Path) -> None:
    """Copy what `template` holds (works/, runs/) into `into`, as if it had been made there.

    A run records absolute paths (its works, its own folder) in its events, config and
    transcripts, so every text file's `template` prefix becomes `into`; git records none.
    """
    old, new = f"{template}{os.sep}".encode(), f"{into}{os.sep}".encode()
    for child in template.iterdir():
        shutil.copytree(child, into / child.name, dirs_exist_ok=True, symlinks=True)
        for path in (into / child.name).rglob("*"):
            if ".git" in path.relative_to(into).parts or not path.is_file() or path.is_symlink():
                continue
            data = path.read_bytes()
            if old in data:
                path.write_bytes(data.replace(old, new))


def train_in(root: Path, names: tuple[str, ...]) -> Run:
    """Run `r` trained offline, headless, 2 steps on new works of those names, under root/works and root/runs."""
    args = ["train", "--auto", "--steps", "2", "--runs-dir", str(root / "runs"), "--run-id", "r"]
    args.append("--no-consolidate")  # the steps' micro-steps alone; consolidation: test_consolidation
    for name in names:
        args += ["--work", str(write_work(root / "works", name))]
    assert main(args) == 0
    return Run(root / "runs" / "r")
