"""The pool's size per step, one line above the pool tree: a small curve and the figures either end.

Training only adds unless something takes away (an epoch's consolidation, a rule of the
--pool-budget), so a person watching the notes grow wants to see the trend, not only the
last figure. The curve is Textual's `Sparkline`, one point before the first micro-step
and one per step that kept an update (`model.summary.pool_curve`); the words beside it
say the first and last figures in tokens.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, Sparkline


class PoolSize(Horizontal):
    """'pool ▁▃▆█▅ 97 → 292 tokens'; says so when no micro-step has measured the pool yet."""

    DEFAULT_CSS = """
    PoolSize {
        height: 1;
        width: 1fr;
    }
    PoolSize > Label {
        width: auto;
        color: $foreground-muted;
    }
    PoolSize > Sparkline {
        width: 24;
        height: 1;
        margin: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        yield Label("pool size", id="pool-size-title")
        yield Sparkline([], id="pool-size-curve")
        yield Label("not measured yet", id="pool-size-figures")

    def show(self, sizes: list[int]) -> None:
        figures = self.query_one("#pool-size-figures", Label)
        curve = self.query_one(Sparkline)
        curve.display = len(sizes) > 1
        if len(sizes) > 1:
            curve.data = [float(x) for x in sizes]
        if not sizes:
            figures.update("not measured yet")
        else:
            figures.update(f"{sizes[0]:,} → {sizes[-1]:,} tokens")
