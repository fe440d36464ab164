"""The bundled example works copied with their stories (or small made-up works of the same names), and a
crossval's command line over them."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

from skilltui.engine.data.diffuse import noise_work
from skilltui.engine.data.works import load_work
from skilltui.store.run_folder import write_atomic
from tests.support.works import write_work


def bundled_works(root: Path) -> dict[str, Path]:
    """The bundled example works copied under `root`, each with its story, as `skilltui demo` makes them."""
    found = {}
    for source in sorted(Path(str(resources.files("skilltui") / "examples")).iterdir()):
        if (source / "human").is_dir():
            copy = root / source.name
            shutil.copytree(source, copy)
            write_atomic(load_work(copy).story_path, noise_work(load_work(copy), seed=0, noise=0.3))
            found[source.name] = copy
    return found


def small_works(root: Path) -> dict[str, Path]:
    """Three made-up works of two episodes under the bundled works' names: a crossval's folds at a
    fraction of the bundled works' cost (their episodes are long), where what is tested is the folds."""
    return {name: write_work(root, name, 2) for name in ("dead-air", "night-oven", "the-second-bid")}


def crossval_argv(runs: Path, bundled: dict[str, Path], *extra: str) -> list[str]:
    argv = ["crossval", "--folds", "3", "--backend", "offline", "--offline-noise", "0.1", "--runs-dir", str(runs)]
    argv += ["--auto", "--steps", "1", "--run-id", "cv", "--json", *extra]
    return argv + [a for w in bundled.values() for a in ("--work", str(w))]
