"""Benchmark: reading the pool's git through `skilltui.pool.repo` (GitPython's objects, unidiff) against
the hand-parsed `git log` / `git show` / `git status` text it replaced, on a 200-commit pool.

It builds a pool of 200 micro-step commits (two notes touched each, in five folders) and
times, for each read the app and the engine make, the old way (one git process, its text
output split by hand, kept here as the baseline) against the new:

- history: every commit with the notes it touched (`skilltui review`'s list), read cold (a
  new reader) and warm (the same reader again, as a reload after a new commit does);
- log: sha and subject of every commit (the live app's Commits tab), cold and warm;
- patch: one commit's patch split into files (the diff panes);
- state: HEAD and whether the tree is clean (the engine's check before each micro-step).

Ratios are new / old, measured in the same run; under 1 is faster.

    python bench/bench_git.py [--commits 200] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from skilltui.pool.notes import FOLDERS, Pool, render_note
from skilltui.pool.repo import PoolGit, split_patch


def build(root: Path, commits: int) -> Pool:
    pool = Pool(root)
    pool.init()
    rnd = random.Random(7)
    for i in range(commits):
        for k in range(2):
            folder = rnd.choice(list(FOLDERS))
            (root / folder).mkdir(exist_ok=True)
            body = f"Step {i}, change {k}: keep scene openings short.\n" * 3
            (root / folder / f"note-{rnd.randrange(30)}.md").write_text(render_note(f"rule {i}", body))
        pool.commit_all(f"train epoch 0 step {i} micro 1/1\n\n- tighten rule {i}")
    return pool


# -- the old way: git's text, split by hand (what pool.py, pool_reader.py and records.py did) --


def old_history(pool: Pool) -> list:
    out = pool.git(
        "log", "--date-order", "--no-renames", "--name-status", "--format=%x1e%H%x1f%P%x1f%ct%x1f%B%x1f", "HEAD"
    )
    commits = []
    for chunk in out.split("\x1e")[1:]:
        sha, parents, stamp, message, rest = chunk.split("\x1f", 4)
        files = [(line[:1], line.partition("\t")[2]) for line in rest.strip("\n").splitlines() if "\t" in line]
        commits.append((sha, parents.split(), int(stamp), message.strip("\n"), files))
    return commits


def old_log(pool: Pool) -> list:
    out = pool.git("log", "-n500", "--format=%H\x1f%s", "HEAD")
    return [line.partition("\x1f")[::2] for line in out.splitlines()]


def old_patch(pool: Pool, sha: str) -> list:
    files: list[list] = []
    for line in pool.git("show", "--format=", "--no-color", "--no-renames", sha).splitlines():
        if line.startswith("diff --git "):
            files.append([line.split(" b/", 1)[-1], "changed", []])
        elif files and line.startswith("new file mode"):
            files[-1][1] = "added"
        elif files and line.startswith("deleted file mode"):
            files[-1][1] = "removed"
        elif files and not line.startswith(("index ", "--- ", "+++ ")):
            files[-1][2].append(line)
    return files


def old_state(pool: Pool) -> tuple[str, bool]:
    out = pool.git("status", "--porcelain=v2", "--branch", "--untracked-files=all", "--ignored=matching")
    head, clean = "", True
    for line in out.splitlines():
        if line.startswith("# branch.oid "):
            head = line[len("# branch.oid ") :]
        elif not line.startswith("#"):
            clean = False
    return head, clean


def timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pool = build(Path(tmp) / "memory", args.commits)
        head = pool.head()
        assert [c[4] for c in old_history(pool)] == [c.files for c in PoolGit(pool.root).log(files=True)]
        warm = PoolGit(pool.root)
        warm.log(files=True)
        rows = [
            ("history, cold", lambda: old_history(pool), lambda: PoolGit(pool.root).log(files=True)),
            ("history, warm", lambda: old_history(pool), lambda: warm.log(files=True)),
            ("log, cold", lambda: old_log(pool), lambda: PoolGit(pool.root).log("HEAD", 500)),
            ("log, warm", lambda: old_log(pool), lambda: warm.log("HEAD", 500)),
            ("patch", lambda: old_patch(pool, head), lambda: split_patch(warm.commit_patch(head))),
            ("state", lambda: old_state(pool), lambda: warm.state()),
        ]
        print(f"{args.commits} commits, best of {args.repeat}")
        print(f"{'read':<16}{'old ms':>10}{'new ms':>10}{'new/old':>10}")
        for name, old, new in rows:
            t_old, t_new = timed(old, args.repeat), timed(new, args.repeat)
            print(f"{name:<16}{t_old:>10.1f}{t_new:>10.1f}{t_new / t_old:>10.2f}")


if __name__ == "__main__":
    main()
