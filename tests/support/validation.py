"""A held-out work whose people, places and lines appear nowhere else, and training with it beside."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import git

from skilltui import cli
from skilltui.commands import training
from skilltui.engine.data.diffuse import noise_work
from skilltui.engine.data.works import load_work
from skilltui.store.run_folder import write_atomic
from tests.support.recorded import recorded

# A held-out work whose people, places and lines appear in no training work, so any of
# them showing up where the backward pass can look is a leak, not a coincidence.
SECRET = ["ZEPHYRINE", "OBSERVATORY", "quasar clock chimed thirteen", "BARNABY", "lighthouse of brass"]


def held_out_work(root: Path, name: str = "orrery") -> Path:
    folder = root / name
    (folder / "human").mkdir(parents=True)
    for n in range(1, 4):
        (folder / "human" / f"{n:02d}.fountain").write_text(
            f"INT. OBSERVATORY - NIGHT\n\nZEPHYRINE winds the brass dial of episode {n}.\n\n"
            "ZEPHYRINE\nThe quasar clock chimed thirteen.\n\n"
            "BARNABY\n(quietly)\nThen the lighthouse of brass is lit.\n\n"
            "EXT. ROOF - DAWN\n\nBARNABY watches the lighthouse of brass go dark.\n\n"
            "ZEPHYRINE\nWe wait for the next chime.\n",
            encoding="utf-8",
        )
    work = load_work(folder)
    write_atomic(work.story_path, noise_work(work, seed=1, noise=0.3))
    return folder


def train_with(backend, runs: Path, works: list[Path], val: list[Path], *extra: str, run_id: str = "r") -> int:
    argv = ["train", "--auto", "--runs-dir", str(runs), "--run-id", run_id]
    if "--consolidate" not in extra:  # an epoch's consolidation has its own tests (test_consolidation)
        argv.append("--no-consolidate")
    argv += [a for w in works for a in ("--work", str(w))]
    argv += [a for w in val for a in ("--val-work", str(w))]
    settings = training.settings_from(cli.build_parser().parse_args(argv + list(extra)))
    settings.check()
    return training.train(settings, backend)


def events(runs: Path, kind: str | None = None, run_id: str = "r") -> list[dict]:
    return [e for e in recorded(runs / run_id / "events.jsonl") if kind is None or e["kind"] == kind]


def run_texts(run: Path, skip: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """Every text a run folder holds, as (where, text): its files, and each git repo's commits and blobs.

    A git object file is zlib-compressed, so scanning it for a word finds bytes by chance (a
    'Δ' turned up in one) and misses what is really stored; the repo's objects are read
    decompressed instead, unreachable ones included.
    """
    for path in sorted(run.rglob("*")):
        parts = path.relative_to(run).parts
        if not path.is_file() or parts[0] in skip or ".git" in parts:
            continue
        yield str(path), path.read_text(encoding="utf-8", errors="replace")
    for dot_git in sorted(run.rglob(".git")):
        with git.Repo(dot_git.parent) as repo:  # closed: its cat-file process ends with the scan
            listing = repo.git.cat_file("--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
            for line in listing.splitlines():
                sha, kind = line.split()
                if kind in ("blob", "commit", "tag"):
                    data = repo.odb.stream(bytes.fromhex(sha)).read()
                    yield f"{dot_git}:{kind} {sha}", data.decode("utf-8", errors="replace")
