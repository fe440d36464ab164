"""The `train` flags of the gate's statistics (issue 32): a consolidation's margin, a writer's call noise.

Kept beside `training.add_gate_flags`, which adds them, so the gate's error-rate knobs and
the offline writer's call-level noise that tests them are documented in one place
(docs/gate-statistics.md); `Settings.check` refuses bad values with one line.
"""

from __future__ import annotations

import argparse


def add_statistics_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--offline-noise-call",
        type=float,
        default=0.0,
        metavar="P",
        help="with chance P a whole writing call of the offline writer ignores the notes it read, so the "
        "episodes of one pass move together (seeded per call; default 0)",
    )
    p.add_argument(
        "--consolidate-margin",
        type=float,
        default=0.01,
        metavar="M",
        help="a consolidation is kept only when the upper end of the gate's interval on its change in "
        "validation loss is below +M (default 0.01; docs/gate-statistics.md)",
    )
