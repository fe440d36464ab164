"""Every picture the README and the docs show: the app's three SVGs, and the MLflow one with --mlflow.

For docs/app.svg, docs/review.svg and docs/side-by-side.svg it trains the bundled example
works through the offline backend, approves every micro-step of the first two steps from
the review screen, and saves the main screen and the review screen at the third step's
first micro-step, then the selected work's episode written next to the human one. Git
dates and the clock are pinned, so the same code makes the same pictures.

    python docs/screenshots.py            # the app's three SVGs
    python docs/screenshots.py --mlflow   # also mlflow-compare.png (docs/mlflow_screenshot.py: the
                                          # mlflow extra, chromium and chromedriver)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

from skilltui.agents.offline import OfflineBackend
from skilltui.apps.train.app import TrainingApp
from skilltui.apps.train.screens.review import ReviewScreen
from skilltui.apps.train.screens.side_by_side import SideBySideScreen
from skilltui.commands.demo import DEMO_SETTINGS
from skilltui.engine.data.diffuse import noise_work
from skilltui.engine.data.works import load_work
from skilltui.engine.opening import open_run
from skilltui.engine.settings import Settings
from skilltui.store.run_folder import write_atomic

DOCS = Path(__file__).resolve().parent
EXAMPLES = DOCS.parent / "skilltui" / "examples"


async def until(pilot, predicate) -> None:
    for _ in range(2000):
        if predicate():
            return
        await pilot.pause(0.02)
    raise TimeoutError("the app did not get there")


async def shoot(root: Path) -> None:
    works = []
    for source in sorted(EXAMPLES.iterdir()):
        if (source / "human").is_dir():
            copy = root / "works" / source.name
            shutil.copytree(source, copy)
            write_atomic(load_work(copy).story_path, noise_work(load_work(copy), seed=0, noise=0.3))
            works.append(copy)
    opened = open_run(Settings(works=works, runs_dir=root / "runs", run_id="demo", **DEMO_SETTINGS))
    app = TrainingApp(opened, OfflineBackend(), secrets=[], clock=lambda: 754.0, hint=False)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            while True:
                await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
                await pilot.pause(0.3)
                if app.screen.request.step == 2:
                    break
                request = app.screen.request
                await pilot.press("a")
                await until(pilot, lambda r=request: getattr(app.screen, "request", None) is not r)
            app.save_screenshot("review.svg", path=str(DOCS))
            await pilot.press("escape")
            await pilot.pause(6)  # let the "review waits" notice fade
            app.save_screenshot("app.svg", path=str(DOCS))
            await pilot.press("s")
            await until(pilot, lambda: isinstance(app.screen, SideBySideScreen) and app.screen.pair is not None)
            await pilot.pause(0.3)
            app.save_screenshot("side-by-side.svg", path=str(DOCS))
            app.stop_training("screenshots taken")
    finally:
        opened.lock.release()


if __name__ == "__main__":
    os.environ["GIT_AUTHOR_DATE"] = os.environ["GIT_COMMITTER_DATE"] = "2026-01-01T12:00:00+00:00"
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
        asyncio.run(shoot(Path(tmp)))
    print(f"wrote {DOCS / 'app.svg'}, {DOCS / 'review.svg'} and {DOCS / 'side-by-side.svg'}", file=sys.stderr)
    if "--mlflow" in sys.argv[1:]:
        # Its imports (selenium, mlflow) are optional extras, so only this picture needs them.
        sys.path.insert(0, str(DOCS))
        from mlflow_screenshot import main_ as mlflow_picture

        mlflow_picture()
