"""The output pane never shows the loss report's raw `<!-- scores: ... -->` comment."""

from __future__ import annotations

from skilltui.apps.train.scores_comment import ScoresFilter, without_scores
from tests.support.tui import make_app, wait_for

REPORT = 'Weakest: order.\n\n<!-- scores: {"format": 0.66, "order": 0.33} -->\n\nafter\n'


def test_the_comment_is_taken_out_however_the_stream_cuts_it():
    for size in (1, 2, 3, 5, 7, 13, len(REPORT)):
        f = ScoresFilter()
        shown = "".join(f.take(REPORT[i : i + size]) for i in range(0, len(REPORT), size))
        assert "<!--" not in shown and "scores" not in shown, (size, shown)
        assert shown.startswith("Weakest: order.") and shown.endswith("after\n")
    assert "<!--" not in without_scores(REPORT) and "after" in without_scores(REPORT)
    assert ScoresFilter().take("a < b\n") == "a < b\n"  # a lone < is not held back


async def test_the_output_pane_of_a_scored_work_has_no_scores_comment(open_training):
    app = make_app(open_training(), latency=0.2)  # with a latency the offline agents stream their text
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.reviews.asking is not None, timeout=60)
        texts = [b.text() for b in app.main.feed.buffers.values()]
        assert any("## Weakest" in t for t in texts), texts  # the loss report was streamed
        assert all("<!-- scores" not in t for t in texts), texts
        app.stop_training("test over")
