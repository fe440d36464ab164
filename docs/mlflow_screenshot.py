"""Write docs/mlflow-compare.png: a trained run and its --no-backward control compared in `mlflow ui`.

Trains two of the bundled works (the third held out for validation) with the offline backend,
once with backward and once as the control, logs both with `--mlflow` into a SQLite store in a
temporary folder, starts `mlflow ui` on 127.0.0.1, opens the experiment's chart view in
Debian's headless chromium (selenium, a test dependency) filtered to the mean losses, and saves
the page. Needs the mlflow extra and /usr/bin/chromium + /usr/bin/chromedriver.

    python docs/mlflow_screenshot.py      # or: python docs/screenshots.py --mlflow, which makes every picture
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from skilltui.cli import main

DOCS = Path(__file__).resolve().parent
FLAGS = "--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update"
FLAGS += " --disable-sync --no-first-run --window-size=1300,1260"
HIDE_PLOT_TOOLBAR = "var s=document.createElement('style');"
HIDE_PLOT_TOOLBAR += "s.textContent='.modebar-container{display:none !important}';document.head.appendChild(s)"


def train_both(folder: Path, uri: str) -> None:
    assert main(["demo", "--auto", "--offline-latency", "0", "--runs-dir", "runs"]) == 0  # writes the stories
    shutil.rmtree(folder / "runs" / "demo")
    works = folder / "runs" / "demo-works"
    args = ["train", "--auto", "--runs-dir", "runs", "--steps", "4", "--episodes-per-step", "1", "--epochs", "3"]
    args += ["--group-size", "1", "--work", str(works / "dead-air"), "--work", str(works / "night-oven")]
    args += ["--val-work", str(works / "the-second-bid"), "--mlflow", uri]
    assert main([*args, "--run-id", "trained"]) == 0
    assert main([*args, "--run-id", "control", "--no-backward"]) == 0


def wait_for(url: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def shoot(url: str, to: Path) -> None:
    options = webdriver.ChromeOptions()
    for flag in FLAGS.split():
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(url)
        driver.implicitly_wait(30)
        search = driver.find_element(By.CSS_SELECTOR, "input[placeholder='Search metric charts']")
        for close in driver.find_elements(By.CSS_SELECTOR, "button[aria-label='Close']"):
            close.click()  # the assistant's side panel
        search.send_keys("loss/mean")
        driver.execute_script(HIDE_PLOT_TOOLBAR)
        driver.find_element(By.XPATH, "//*[text()='val_loss/mean']")
        time.sleep(2)  # the charts draw after their data arrives; nothing on the page says when
        driver.save_screenshot(str(to))
    finally:
        driver.quit()


def main_() -> None:
    os.environ.update({"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "1"})
    with tempfile.TemporaryDirectory(prefix="skilltui-mlflow-shot-") as tmp:
        folder = Path(tmp)
        os.chdir(folder)
        uri = f"sqlite:///{folder / 'mlflow.db'}"
        train_both(folder, uri)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        ui = [sys.executable, "-m", "mlflow", "ui", "--backend-store-uri", uri, "--host", "127.0.0.1", "--workers", "1"]
        # Its own session, so stopping it stops the web workers it starts too.
        server = subprocess.Popen(
            [*ui, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            wait_for(f"http://127.0.0.1:{port}/health")
            shoot(f"http://127.0.0.1:{port}/#/experiments/1/runs?compareRunsMode=CHART", DOCS / "mlflow-compare.png")
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(30)
    print(f"wrote {DOCS / 'mlflow-compare.png'}")


if __name__ == "__main__":
    main_()
