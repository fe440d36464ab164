"""The checks a change to the pool must pass, shared by the commit tool, the micro-step and `skilltui lint`.

- `lint_pool`: the note rules (`pool.lint_note`) plus, given the run's training works, the
  leakage guard (`leakage.Lexicon`). The whole pool is linted once per micro-step for the
  prompt and the step's `lint_report`; a commit lints only the notes it touches.
- `commit_problems`: what the commit tool checks *before* it commits, so an agent learns
  of a problem while it can still fix it in the same attempt: the touched notes pass
  `lint_pool`, and the lines added plus removed since the micro-step began fit the edit
  budget (`--max-edit-lines`, the learning rate).
"""

from __future__ import annotations

from .leakage import Lexicon
from .pool import Pool


def lint_pool(pool: Pool, lexicon: Lexicon | None = None, paths: list[str] | None = None) -> list[str]:
    """Problems in the given notes (the whole pool when None), leaks included when a lexicon is given."""
    if paths is None:
        paths = pool._all_files()
    problems = pool.lint(paths)
    if lexicon is not None:
        for rel in paths:
            file = pool.root / rel
            if not file.is_file() or not rel.endswith(".md"):
                continue
            try:
                text = file.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # pool.lint already said so
            problems.extend(lexicon.check(rel, text))
    return problems


def edit_size(pool: Pool, before: str) -> tuple[int, list[str], list[str]]:
    """(lines added + removed, touched paths that exist, removed paths) of the working tree against `before`.

    Stages every change first (`git add -A`), so new notes count too.
    """
    pool.git("add", "-A")
    lines = 0
    touched: list[str] = []
    removed: list[str] = []
    for row in pool.git("diff", "--cached", "--numstat", "--no-renames", before).splitlines():
        added, deleted, path = row.split("\t", 2)
        lines += (int(added) if added.isdigit() else 0) + (int(deleted) if deleted.isdigit() else 0)
        (touched if (pool.root / path).exists() else removed).append(path)
    return lines, touched, removed


def commit_problems(pool: Pool, before: str, lexicon: Lexicon | None, max_edit_lines: int) -> list[str]:
    """Why the pool as it stands may not be committed for this micro-step ([] when it may)."""
    lines, touched, _ = edit_size(pool, before)
    problems = lint_pool(pool, lexicon, touched)
    if lines > max_edit_lines:
        problems.append(
            f"this update adds and removes {lines} lines; the budget for one micro-step is {max_edit_lines} "
            "(--max-edit-lines): change less, keep the edit that matters most"
        )
    return problems
