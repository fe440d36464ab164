"""`skilltui runs`: every run in a runs folder at a glance, from each run's own records."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..core.errors import UsageError
from ..core.piped import output_width
from ..core.safe_text import visible
from ..store.run_folder import Run
from .locate import is_run
from .status import RunStatus, run_status

WIDE = 110
STATE_STYLES = {"running": "bold green", "finished": "green", "interrupted": "yellow", "not started": "yellow"}


def list_runs(runs_dir: Path) -> list[RunStatus]:
    """The status of every run under `runs_dir`, most recently started first."""
    runs_dir = Path(runs_dir).expanduser()
    if not runs_dir.is_dir():
        raise UsageError(f"no runs folder at {runs_dir}/; pass --runs-dir, or train first (`skilltui demo`)")
    found = [run_status(Run(p.resolve())) for p in sorted(runs_dir.iterdir()) if p.is_dir() and is_run(p)]
    for cv in sorted(runs_dir.glob("*/folds.json")):  # a crossval folder: each fold a run, listed as CV/fold<k>
        folds = [f for f in sorted(cv.parent.glob("fold*")) if f.is_dir() and is_run(f)]
        found += [replace(run_status(Run(f.resolve())), id=f"{cv.parent.name}/{f.name}") for f in folds]
    return sorted(found, key=lambda s: (s.started or "", s.id), reverse=True)


def dollars(value: float) -> str:
    """Cents from a dollar up, tenths of a cent below it, where small runs differ."""
    return f"${value:.2f}" if value >= 1 or value == 0 else f"${value:.4f}"


def money(status: RunStatus) -> str:
    amount = dollars(status.cost_usd)
    return amount if status.cost_known else f"{amount}+?"


def estimate_text(status: RunStatus) -> str:
    """The forecast dollars, in the same form as the cost beside them; '-' for a run without one."""
    return "-" if status.estimate_usd is None else dollars(status.estimate_usd)


def works_text(works: list[str]) -> str:
    if len(works) <= 3:
        return ", ".join(works)
    return ", ".join(works[:2]) + f" +{len(works) - 2}"


def runs_table(statuses: list[RunStatus], runs_dir: Path) -> Table:
    table = Table(
        title=f"runs in {runs_dir}", title_justify="left", header_style="bold", box=box.SIMPLE_HEAD, expand=False
    )
    table.add_column("id", min_width=8, overflow="fold")
    table.add_column("works", min_width=12)
    table.add_column("epochs", justify="right", no_wrap=True)
    table.add_column("steps", justify="right", no_wrap=True)
    table.add_column("approved", justify="right", no_wrap=True)
    table.add_column("rerun", justify="right", no_wrap=True)
    table.add_column("rolled\nback", justify="right", no_wrap=True)
    table.add_column("mean\nloss", justify="right", no_wrap=True)
    table.add_column("selection\nloss", justify="right", no_wrap=True)
    table.add_column("test Δ", justify="right", no_wrap=True)
    table.add_column("cost", justify="right", no_wrap=True)
    table.add_column("est.", justify="right", no_wrap=True)
    table.add_column("state", min_width=10)
    for s in statuses:
        table.add_row(
            Text(s.id),
            Text(works_text(s.works)),
            f"{s.epochs_done}/{s.epochs}" if s.epochs else str(s.epochs_done),
            str(s.steps_done),
            str(s.approved),
            str(s.rerun),
            str(s.rolled_back),
            mean_text(s.latest_loss, s.latest_works),
            mean_text(s.latest_val, s.latest_val_works),
            s.test_delta or "-",
            money(s),
            estimate_text(s),
            Text(s.state, style=_style(s.state)),
        )
    table.caption = (
        "micro-steps approved, rerun and rolled back; mean loss of the latest finished step over (n) works, and "
        "of the selection (validation) works after it (lower is better); test Δ is the trained pool's test loss "
        "minus the start pool's, with its interval; cost includes validation and test; est. is what "
        "`train --estimate` forecast when the run started"
    )
    table.caption_justify = "left"
    return table


def print_runs(runs_dir: Path, console: Console | None = None) -> int:
    statuses = list_runs(runs_dir)
    # A pipe has no width; give the table room instead of Rich's 80 columns, which squeeze it.
    console = console or Console(width=output_width(200))
    if not statuses:
        console.print(f"no runs in {runs_dir}/ yet; `skilltui demo` or `skilltui train` makes one")
        return 0
    table = runs_table(statuses, runs_dir)
    if fits(table, console.width):
        console.print(table)
        for s in statuses:
            for line in failing_lines(s):
                console.print(Text(visible(f"{s.id}: {line}"), style="red"), overflow="fold")
    else:
        # Ten columns do not fit a narrow terminal; one short block per run reads better than a crushed table.
        for s in statuses:
            console.print(Text.assemble((s.id, "bold"), "  ", (s.state, _style(s.state))))
            console.print(Padding(Text(visible(runs_line(s))), (0, 0, 0, 2)))
            for line in failing_lines(s):  # a stop's reason may quote agent text
                console.print(Padding(Text(visible(line), style="red"), (0, 0, 0, 2)))
    for s in statuses:  # what a damaged record left out: on stderr, so the table stays the table
        if s.skipped:
            print(visible(f"warning: {s.id}: {s.skipped}"), file=sys.stderr)
    return 0


def fits(table: Table, width: int) -> bool:
    """Whether the table fits `width` as it is drawn unsqueezed: squeezed, Rich cuts its last
    columns (cost, est., state) off a terminal a little too narrow, and a block per run reads better."""
    roomy = Console(width=10_000)
    return width >= WIDE and Measurement.get(roomy, roomy.options, table).maximum <= width


def mean_text(value: float | None, works: int | None) -> str:
    """A mean with how many works it covers, so means over different sets never pass for comparable."""
    if value is None:
        return "-"
    return f"{value:.3f} ({works})" if works else f"{value:.3f}"


def failing_lines(s: RunStatus, limit: int = 240) -> list[str]:
    """One line per work whose latest attempt failed: which step and stage, and why."""
    lines = []
    for work, why in s.failing.items():
        line = f"{work} failed at {why}"
        lines.append(line if len(line) <= limit else line[: limit - 1] + "…")
    return lines


def runs_line(s: RunStatus) -> str:
    loss = mean_text(s.latest_loss, s.latest_works)
    if s.latest_works:
        loss += f" over {s.latest_works} work{'s' if s.latest_works != 1 else ''}"
        loss = loss.replace(f" ({s.latest_works})", "")
    if s.latest_val is not None:
        loss += f", selection {mean_text(s.latest_val, s.latest_val_works)}"
    if s.test_delta is not None:
        loss += f", test Δ {s.test_delta}"
    epochs = f"{s.epochs_done}/{s.epochs}" if s.epochs else str(s.epochs_done)
    return (
        f"works {works_text(s.works)}; epochs {epochs}, steps {s.steps_done}; micro-steps {s.approved} approved, "
        f"{s.rerun} rerun, {s.rolled_back} rolled back; mean loss {loss}; cost {money(s)}"
        + (f" (estimated {estimate_text(s)})" if s.estimate_usd is not None else "")
    )


def _style(state: str) -> str:
    return STATE_STYLES.get(state.split(":", 1)[0], "red")
