"""`skilltui report`: one self-contained page, opened in a real headless chromium.

The browser test needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs them);
elsewhere it skips and says so. Every section must be visible and the page must make no
network request: the only resource the browser loads is the page itself.
"""

from __future__ import annotations

import html as htmllib
import json
import re
import shutil
from pathlib import Path

import pytest

from skilltui.cli import main
from tests.support.scripted import ScriptedBackend, seed_pool
from tests.support.validation import events, held_out_work, train_with

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SECTIONS = ("settings", "curves", "micro-steps", "history", "notes")


@pytest.fixture
def report(tmp_path, make_work) -> Path:
    """A gated run with one micro-step rolled back and one kept, written as a page."""
    runs = tmp_path / "runs"
    donor = seed_pool(tmp_path / "donor", "dialogue")
    backend = ScriptedBackend(script=[("remove", "dialogue/dialogue-blocks.md"), ("add", "scene")])
    works = [make_work("kestrel", 4)]
    argv = ["--steps", "2", "--gate", "--init-pool", str(donor)]
    assert train_with(backend, runs, works, [held_out_work(tmp_path / "held")], *argv) == 0
    page = tmp_path / "out" / "run.html"
    page.parent.mkdir()
    assert main(["report", "r", "--runs-dir", str(runs), "--to", str(page)]) == 0
    return page


def test_the_page_holds_every_section_and_references_nothing(report, tmp_path):
    html = report.read_text(encoding="utf-8")
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
    assert not re.search(r"\b(src|href)\s*=", html), "the page must not reference any other resource"
    assert "<script" not in html
    decisions = events(tmp_path / "runs", "decision")
    assert html.count("<polyline") == 3  # train and validation; the pool's size
    # The pool's size after the step whose micro-step was kept, as the micro_step event recorded it.
    kept = [d for d in decisions if d["decision"] == "approve"]
    size = next(
        e["pool_tokens"]
        for e in events(tmp_path / "runs", "micro_step")
        if e["attempt"] == kept[-1]["attempt"]
        and (e["epoch"], e["step"], e["group"]) == (kept[-1]["epoch"], kept[-1]["step"], kept[-1]["group"])
    )
    assert '<section id="pool-size">' in html
    assert f"pool size e{kept[-1]['epoch']} s{kept[-1]['step']}: {size:,}</title>" in html
    assert "rollback by auto" in html and decisions[0]["reason"] in htmllib.unescape(html)
    assert '<span class="add">+## Guidance</span>' in html  # the kept micro-step's diff, coloured
    assert '<span class="del">-## Guidance</span>' in html  # the rolled-back one removed a note
    assert '<span class="del">----</span>' in html  # its front matter line is a removed line, not a file header
    assert "scene/scene-headings.md" in html and "dialogue/dialogue-blocks.md" in html


def test_settings_read_as_words_and_a_reset_made_in_review_shows(report, tmp_path):
    from skilltui.runs import operations
    from skilltui.store.run_folder import Run

    html = report.read_text(encoding="utf-8")
    assert "<th>no backward</th><td>no</td>" in html and "False" not in html and "{}" not in html
    assert "None: the pool is as training left it" in html
    run = Run(tmp_path / "runs" / "r")
    first = run.pool.git("rev-list", "--max-parents=0", "HEAD").split()[0]
    operations.reset(run, first)
    assert main(["report", "r", "--runs-dir", str(tmp_path / "runs"), "--to", str(report)]) == 0
    html = report.read_text(encoding="utf-8")
    assert f"reset of <code>{first[:7]}</code> by human" in html


def test_report_refuses_a_target_it_cannot_write(report, tmp_path, capsys):
    runs = str(tmp_path / "runs")
    inside = tmp_path / "runs" / "r" / "page.html"  # inside the run folder, as export refuses too
    for target, words in [
        (tmp_path / "missing" / "x.html", "does not exist"),
        (tmp_path / "x.txt", "FILE.html"),
        (inside, "inside run r"),
    ]:
        assert main(["report", "r", "--runs-dir", runs, "--to", str(target)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0]
        assert not target.exists()


@pytest.mark.skipif(
    not (CHROMIUM.exists() and DRIVER.exists()),
    reason="needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver; .ci/run does)",
)
def test_the_page_opens_in_headless_chromium_with_every_section_visible_and_no_request(report, tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1200,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    try:
        driver.get("about:blank")
        driver.get_log("performance")  # drop what the browser loaded for itself before the page
        url = report.resolve().as_uri()
        driver.get(url)
        WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")
        for section in SECTIONS:
            element = driver.find_element(By.ID, section)
            driver.execute_script("arguments[0].scrollIntoView()", element)
            assert element.is_displayed(), section
            assert element.size["height"] > 40 and element.size["width"] > 200, (section, element.size)
        svg = driver.find_element(By.CSS_SELECTOR, "#curves svg")
        assert svg.is_displayed() and svg.size["height"] > 100
        assert len(driver.find_elements(By.CSS_SELECTOR, "#micro-steps article")) == 2
        requested = []
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.requestWillBeSent":
                requested.append(message["params"]["request"]["url"])
        assert requested and set(requested) == {url}, requested
    finally:
        driver.quit()
        shutil.rmtree(tmp_path / "profile", ignore_errors=True)


def test_a_micro_step_is_credited_with_the_change_on_the_works_both_steps_scored(tmp_path):
    """Step 0 scores a 0.6, b 0.8, c 0.2; step 1 scores a 0.4, b 0.6 while c sits out.

    The plain means say 0.533 -> 0.500, mostly because c, the best work, left; on the two
    works both steps scored the loss fell from 0.700 to 0.500: what `skilltui review` shows.
    """
    from skilltui.apps.report.build import build
    from skilltui.model import events as ev
    from skilltui.store.run_folder import Run

    run = Run(tmp_path / "run")
    run.root.mkdir()
    run.config_path.write_text(json.dumps({"works": ["a", "b", "c"], "epochs": 1}))
    sha = {"before": "a" * 40, "after": "b" * 40}
    where = {"epoch": 0, "step": 0, "group": 1, "attempt": 1}
    records = [
        ev.StepStarted(epoch=0, step=0, first=1, last=1, works=["a", "b", "c"], groups=[["a", "b", "c"]]),
        *(
            ev.Loss(epoch=0, step=0, work=w, loss=v, scores={}, report="")
            for w, v in {"a": 0.6, "b": 0.8, "c": 0.2}.items()
        ),
        ev.MicroStep(
            **where,
            **sha,
            label="e0 s0 m1/1",
            subject="teach",
            added=[],
            changed=[],
            removed=[],
            lint_ok=True,
            patch="",
        ),
        ev.DecisionMade(**where, **sha, decision="approve", by="auto"),
        ev.StepFinished(epoch=0, step=0, mean_loss=0.5333, failed=[], works_in_mean=3),
        ev.StepStarted(epoch=0, step=1, first=2, last=2, works=["a", "b"], groups=[["a", "b"]]),
        *(ev.Loss(epoch=0, step=1, work=w, loss=v, scores={}, report="") for w, v in {"a": 0.4, "b": 0.6}.items()),
        ev.StepFinished(epoch=0, step=1, mean_loss=0.5, failed=[], works_in_mean=2),
    ]
    run.events_path.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in records))
    page = build(run).html
    assert "0.700 (its step) → 0.500 (next step), over the works both scored" in page
    assert "0.533 (its step)" not in page


def test_an_attempt_that_was_not_kept_shows_no_effect_on_the_next_step(tmp_path):
    """A rolled-back attempt's 'its step -> next step' would credit it with a change it never made."""
    from skilltui.apps.report.build import build
    from skilltui.model import events as ev
    from skilltui.store.run_folder import Run

    run = Run(tmp_path / "run")
    run.root.mkdir()
    run.config_path.write_text(json.dumps({"works": ["a"], "epochs": 1}))
    where = {"epoch": 0, "step": 0, "group": 1, "attempt": 1}
    micro = dict(label="e0 s0 m1/1", subject="teach", added=[], changed=[], removed=[], lint_ok=True, patch="")
    records = [
        ev.StepStarted(epoch=0, step=0, first=1, last=1, works=["a"], groups=[["a"]]),
        ev.Loss(epoch=0, step=0, work="a", loss=0.701, scores={}, report=""),
        ev.MicroStep(**where, before="a" * 40, after="b" * 40, **micro),
        ev.DecisionMade(**where, before="a" * 40, after="b" * 40, decision="rollback", by="human"),
        ev.StepFinished(epoch=0, step=0, mean_loss=0.701, failed=[], works_in_mean=1),
        ev.StepStarted(epoch=0, step=1, first=2, last=2, works=["a"], groups=[["a"]]),
        ev.Loss(epoch=0, step=1, work="a", loss=0.4, scores={}, report=""),
        ev.StepFinished(epoch=0, step=1, mean_loss=0.4, failed=[], works_in_mean=1),
    ]
    run.events_path.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in records))
    page = build(run).html
    assert "0.701 (its step); not kept, so no later step measured it" in page
    assert "→ 0.400 (next step)" not in page
