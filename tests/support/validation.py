"""A held-out work whose people, places and lines appear nowhere else, and training with it beside."""

from __future__ import annotations

from pathlib import Path

from skilltui import cli
from skilltui.commands import training
from skilltui.engine.data.diffuse import noise_work
from skilltui.engine.data.works import load_work
from skilltui.store.run import write_atomic
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
