"""The checks a change to the pool must pass, shared by the commit tool, the micro-step and `skilltui lint`.

- `lint_pool`: the note rules (`pool.notes.lint_note`) plus, given the run's training works, the
  leakage guard (`leakage.Lexicon`). The whole pool is linted once per micro-step for the
  prompt and the step's `lint_report`; a commit lints only the notes it touches.
- `commit_problems`: what the commit tool checks *before* it commits, so an agent learns
  of a problem while it can still fix it in the same attempt: the touched notes pass
  `lint_pool`, and the lines added plus removed since the micro-step began fit the edit
  budget (`--max-edit-lines`, the learning rate), and the pool stays within `--pool-budget`
  tokens (`pool_tokens`, counted by `core.tokens`, the rule the prompts are sized by).
"""

from __future__ import annotations

import os

from ...core.tokens import count_tokens
from ...pool.notes import Pool
from ...pool.repo import split_patch
from .leakage import Lexicon

# (path, mtime, size, inode, lexicon signature) -> that file's problems.
_CACHE: dict[tuple[str, int, int, int, int], list[str]] = {}


def lint_pool(pool: Pool, lexicon: Lexicon | None = None, paths: list[str] | None = None) -> list[str]:
    """Problems in the given notes (the whole pool when None), leaks included when a lexicon is given.

    Each file's problems are cached by its stat, so linting the whole pool every micro-step
    costs a stat per unchanged note, and reading and parsing only for what changed.
    """
    if paths is None:
        paths = pool.all_files()
    problems: list[str] = []
    root, signature = str(pool.root), lexicon.signature if lexicon else 0
    for rel in paths:
        file = os.path.join(root, rel)  # a string, not a Path: on a big pool the Paths cost more than the stats
        try:
            st = os.stat(file)
        except OSError:
            continue
        key = (file, st.st_mtime_ns, st.st_size, st.st_ino, signature)
        found = _CACHE.get(key)
        if found is None:
            found = pool.lint([rel])
            if lexicon is not None and rel.endswith(".md") and not any("not UTF-8" in f for f in found):
                with open(file, encoding="utf-8") as f:
                    found = found + lexicon.check(rel, f.read())
            if len(_CACHE) > 50_000:
                _CACHE.clear()
            _CACHE[key] = found
        problems.extend(found)
    return problems


def edit_size(pool: Pool, before: str) -> tuple[int, list[str], list[str]]:
    """(lines added + removed, touched paths that exist, removed paths) of the working tree against `before`.

    Stages every change first, new and ignored files included (`git add -A -f`, as
    `Pool.commit_all` does): what is in the pool is what the checks see and what is committed.
    """
    pool.git("add", "-A", "-f")
    # --text, --no-textconv: a `.gitattributes` saying `*.md -diff` must not make every edit count 0 lines.
    diff = ("diff", "--cached", "--no-color", "--no-renames", "--no-ext-diff", "--text", "--no-textconv", before)
    files = split_patch(pool.git(*diff))
    lines = sum(f.added + f.removed for f in files)
    touched = [f.path for f in files if f.status != "removed"]
    removed = [f.path for f in files if f.status == "removed"]
    return lines, touched, removed


def pool_tokens(pool: Pool) -> int:
    """The pool's size in tokens: every note's whole text, as a writer that opens them all reads it.

    Each note's count is cached by its stat, as its lint is: an attempt asks for the size
    when it starts, at every commit and after its commit, and on a big pool reading every
    note each time was most of the attempt's cost. A note whose stat changed is read again.
    """
    total = 0
    for rel in pool.all_files():
        if rel.endswith(".md"):
            tokens = _note_tokens(os.path.join(pool.root, rel))
            total += tokens or 0
    return total


# (path, mtime, size, inode) -> that note's tokens.
_TOKENS: dict[tuple[str, int, int, int], int] = {}


def _note_tokens(file: str) -> int | None:
    """One note's tokens (None when it cannot be read), from the cache while its stat is unchanged."""
    try:
        st = os.stat(file)
        key = (file, st.st_mtime_ns, st.st_size, st.st_ino)
        tokens = _TOKENS.get(key)
        if tokens is None:
            with open(file, encoding="utf-8", errors="replace") as f:
                # The key is the stat from before the read: a write during it changes the
                # stat, so the next count reads the note again.
                tokens = count_tokens(f.read())
            if len(_TOKENS) > 50_000:
                _TOKENS.clear()
            _TOKENS[key] = tokens
    except OSError:
        return None
    return tokens


def commit_problems(
    pool: Pool,
    before: str,
    lexicon: Lexicon | None,
    max_edit_lines: int,
    *,
    pool_budget: float | None = None,
    start_tokens: int = 0,
) -> tuple[list[str], int | None]:
    """Why the pool as it stands may not be committed for this micro-step ([] when it may), and
    its size in tokens as staged (None without a budget to check it against).

    Over `pool_budget` a commit is refused when it grows the pool from `start_tokens` (its
    size when the micro-step began), so a pool that starts over budget (a big --init-pool)
    can still be trained down to it, and an update that leaves it as it is (the empty
    commit: "nothing worth changing") still counts. The size is what the commit holds when
    it is made: the attempt's event reports it without counting the pool again.
    """
    lines, touched, _ = edit_size(pool, before)
    problems = lint_pool(pool, lexicon, touched)
    if lines > max_edit_lines:
        problems.append(
            f"this update adds and removes {lines} lines; the budget for one micro-step is {max_edit_lines} "
            "(--max-edit-lines): change less, keep the edit that matters most"
        )
    size = None
    if pool_budget is not None:
        size = pool_tokens(pool)
        if size > pool_budget and start_tokens > pool_budget and size > start_tokens:
            problems.append(
                f"the pool would be {size:,} tokens, over --pool-budget {pool_budget:,.0f}; it started this "
                f"micro-step at {start_tokens:,} tokens, already over, so an update may only shrink it "
                "(or leave it as it is) until it fits: shorten, merge or remove notes"
            )
        elif size > pool_budget and start_tokens <= pool_budget:
            problems.append(
                f"the pool would be {size:,} tokens, over --pool-budget {pool_budget:,.0f}: "
                "shorten, merge or remove notes"
            )
    return problems, size


def over_budget(size: int, pool_budget: float) -> str | None:
    """The one line that says a pool starts over --pool-budget (None when it fits), before the first call.

    A big --init-pool may start over the budget; training it is allowed, but every update
    must then shrink it (`commit_problems`), which a person should know before paying for calls.
    """
    if size <= pool_budget:
        return None
    return (
        f"the pool starts at {size:,} tokens, over --pool-budget {pool_budget:,.0f}: "
        "updates may only shrink it until it fits (a commit that grows it is refused)"
    )
