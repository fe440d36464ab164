"""`--estimate` as a person reads it: the forecast's table by role, its dollars, wall time and assumptions.

The forecast itself (`estimate.forecast`) is data kept in the run (`estimate.json`) and
compared with what was spent; this is only its text, so `train` and `crossval` print the
same lines.
"""

from __future__ import annotations

from typing import Any

from ..core.tokens import CHARS_PER_TOKEN
from .sizes import OUTPUT_PER_SECOND, TURN_SECONDS

# Why a run's dollars are not known beforehand, by backend (`mailbox:DIR` by its kind).
NO_PRICE = {
    "offline": "the offline backend costs nothing",
    "mailbox": "whoever answers the mailbox sets the price; each answer's cost is recorded as it comes",
}


def _no_price(backend: str | None, unpriced: str) -> str:
    kind = (backend or "offline").partition(":")[0]
    return NO_PRICE.get(kind) or f"price unknown: {unpriced}, not in the price table; never a guess"


def estimate_lines(data: dict[str, Any]) -> list[str]:
    """The forecast as `--estimate` prints it: a table by role, the dollars, the wall time, the assumptions."""
    lines = [f"{'role':16} {'model':20} {'calls':>6} {'input/call':>11} {'output/call':>12}"]
    for row in data["rows"]:
        lines.append(
            f"{row['role']:16} {row['model']:20} {row['calls']:6} "
            f"{row['input_per_call']:11,} {row['output_per_call']:12,}"
        )
    unpriced = ", ".join(m for m in data.get("unpriced") or [] if m != "offline") or "offline costs nothing"
    batched = data.get("usd_cached_batched")
    batch = "" if batched is None else f", ${batched:.2f} with caching and --batch (loss and reduce at half price)"
    if data["usd"] is None:
        lines.append(f"dollars: no price for a model of this run ({_no_price(data.get('backend'), unpriced)})")
    else:
        lines.append(
            f"dollars: ${data['usd_plain']:.2f} without caching or batching, ${data['usd_cached']:.2f} with "
            f"caching{batch}"
        )
    wall = int(data["wall_seconds"])
    took = f"{wall // 3600}h{wall % 3600 // 60:02d}m" if wall >= 3600 else f"{wall // 60}m{wall % 60:02d}s"
    rates = ", ".join(f"{name} {rate}" for name, rate in OUTPUT_PER_SECOND.items())
    lines.append(
        f"wall time: about {took} at --workers {data['workers']} "
        f"(assumes output tokens per second: {rates}; {TURN_SECONDS:.0f} s per turn; no review waits)"
    )
    lines.append(f"tokens counted as characters / {CHARS_PER_TOKEN}; assumes {data['assumed']}")
    if data.get("gate_power"):
        lines.append(data["gate_power"])
    return lines
