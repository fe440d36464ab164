"""A validation work and a move menu whose effects on the loss are known: the gate's truth.

`tests/support/scripted_backward.py` `KnownMoves` makes helpful, harmful and neutral updates from
`MENU`; on `held_out` work their effect is known without noise. The loss weighs who says a
line, so teaching dialogue is what this work rewards; only one episode in `TALKING` speaks,
which makes teaching (or dropping) dialogue worth about -0.08 (+0.08) on the validation
mean, beside a pass-to-pass spread of about 0.05 per episode at `--offline-noise 0.15`:
effects the size of the noise. Dropping scene headings (about +0.4) is the large harm a
gate must never keep. Parentheticals are not on the menu: the loss ignores them, so
teaching one is neutral in truth. Used by tests/test_gate_noise.py and bench/bench_gate.py.
"""

from __future__ import annotations

import random
from pathlib import Path

from skilltui.engine.data.diffuse import noise_work
from skilltui.engine.data.works import load_work
from skilltui.store.run_folder import write_atomic
from tests.support.works import ACTIONS, LINES, NAMES, PLACES, TIMES

MENU = ("dialogue", "scene")
START = ("scene",)
TALKING = 6


def held_out(root: Path, episodes: int, seed: int) -> Path:
    """A validation work of mostly silent episodes; every TALKING-th one has dialogue in each scene."""
    rng = random.Random(f"held:{seed}")
    cast = rng.sample(NAMES, 3)
    folder = root / "held"
    (folder / "human").mkdir(parents=True)
    for n in range(1, episodes + 1):
        blocks: list[str] = []
        for scene in range(3):
            blocks.append(f"{rng.choice(['INT.', 'EXT.'])} {rng.choice(PLACES)} - {rng.choice(TIMES)}")
            blocks.append(rng.choice(ACTIONS).format(a=rng.choice(cast).capitalize()))
            if n % TALKING == 0:
                blocks += [f"{rng.choice(cast)}\n{rng.choice(LINES)}" for _ in range(2)]
            if scene < 2:
                blocks.append("CUT TO:")
        (folder / "human" / f"{n:02d}.fountain").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    work = load_work(folder)
    write_atomic(work.story_path, noise_work(work, seed=seed, noise=0.3))
    return folder
