"""`train --estimate`: the forecast a person reads before paying for a run, checked against a bill.

The bill is the fake Messages API's (tests/support/fakeapi.py), which counts the tokens of every
request it is sent, splits them by the cache marks the client placed, and reports that
usage the way the API does; the run's `call` events price it. The fake model here behaves
as `--estimate` assumes a real one does (estimate/plan.py): the writer opens every note
and writes episodes as long as the human ones, the judge and the reducer write a report of
a page, the optimizer reads its evidence and the notes, writes one note and commits.
"""

from __future__ import annotations

import json
import re
import shutil
from importlib import resources
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.engine.data.diffuse import noise_work
from skilltui.engine.data.works import load_work
from skilltui.pool.notes import render_note
from tests.support.fakeapi import FakeAnthropic, Recorded, Reply, text, tool_use
from tests.support.fakemodel import KEY, FakeModel, assistant_turns, call, role_of
from tests.support.recorded import recorded as read_events

PAGE = " ".join(["The writer kept the scene moving but flattened the dialogue into action lines."] * 22)
BODY = "\n".join(f"- Rule {n}: keep each scene to one turn, and let the dialogue carry it." for n in range(1, 12))


@pytest.fixture
def server(server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    return server


def bundled_works(into: Path) -> list[Path]:
    """The bundled example works with their stories written, as `skilltui demo` prepares them."""
    works = []
    for source in sorted(Path(str(resources.files("skilltui") / "examples")).iterdir()):
        copy = into / source.name
        shutil.copytree(source, copy)
        work = load_work(copy)
        work.story_path.write_text(noise_work(work, seed=0, noise=0.3))
        works.append(copy)
    return works


class PlausibleModel(FakeModel):
    """Every role, the way the estimate assumes a model plays it."""

    def __init__(self, works: dict[str, Path]) -> None:
        super().__init__(next(iter(works.values())).parent)
        self.works = works
        self.notes = 0

    def __call__(self, r: Recorded) -> Reply:
        if role_of(r) in ("loss", "reduce"):
            return Reply([text(f"## What went wrong\n\n{PAGE}")])
        if "You are the consolidate agent" in json.dumps(r.body.get("system", "")):
            # The epoch's consolidation: the notes are all different sets, so nothing to merge.
            if assistant_turns(r) == 0:
                return Reply([tool_use("commit", {"message": "no change\n\nObserved: no two notes say the same."})])
            return Reply([text("Nothing to consolidate.")])
        return super().__call__(r)

    def writer(self, r: Recorded) -> Reply:
        prompt = r.all_text
        first, last = map(int, re.search(r"# Write episodes (\d+) to (\d+)", prompt).groups())
        scripts = re.search(r"Write each episode to `([^`]+)/NN\.fountain`", prompt).group(1)
        human = self.works[Path(scripts).parent.name] / "human"
        listed = re.findall(r"^- ([a-z]+/[^:]+\.md): ", prompt, re.MULTILINE)
        turns = [[call(r, "view", path=rel) for rel in listed]] if listed else []
        turns.append(
            [
                call(
                    r, "create", path=f"{scripts}/{n:02d}.fountain", file_text=(human / f"{n:02d}.fountain").read_text()
                )
                for n in range(first, last + 1)
            ]
        )
        turns.append([text(f"I wrote episodes {first} to {last}.")])
        return Reply(turns[min(assistant_turns(r), len(turns) - 1)])

    def optimizer(self, r: Recorded) -> Reply:
        prompt = r.all_text
        turns = [[call(r, "view", path=p) for p in re.findall(r"loss report `([^`]+)`", prompt)]]
        listed = re.findall(r"^- ([a-z]+/[^:]+\.md): ", prompt, re.MULTILINE)
        if listed:
            turns.append([call(r, "view", path=rel) for rel in listed])
        turn = assistant_turns(r)
        if turn == len(turns):
            self.notes += 1
            note = render_note(f"Scene rules, set {self.notes}: one turn per scene, dialogue carries it.", BODY)
            return Reply([call(r, "create", path=f"structure/scene-rules-{self.notes}.md", file_text=note)])
        if turn == len(turns) + 1:
            return Reply([tool_use("commit", {"message": "Add scene rules: the reports all flatten dialogue."})])
        if turn > len(turns) + 1:
            return Reply([text("Committed one note.")])
        return Reply(turns[turn])


def billed(run: Path) -> float:
    return sum(e.get("cost_usd") or 0.0 for e in read_events(run / "events.jsonl") if e["kind"] == "call")


@pytest.mark.slow
def test_the_estimate_of_one_epoch_of_the_bundled_works_is_within_a_quarter_of_the_bill(
    server: FakeAnthropic, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    works = bundled_works(tmp_path / "works")
    server.script = PlausibleModel({w.name: w for w in works})
    runs = tmp_path / "runs"
    argv = ["train", "--backend", "anthropic", "--model", "claude-sonnet-5-5", "--runs-dir", str(runs)]
    argv += ["--run-id", "r", *(a for w in works for a in ("--work", str(w)))]

    # Before the run: a forecast, and no request, no run folder.
    assert main([*argv, "--estimate"]) == 0
    printed = capsys.readouterr().out
    assert server.messages_requests == [] and not runs.exists()
    rows = {line.split()[0]: line.split() for line in printed.splitlines()[1:5]}
    rows = {line.split()[0]: line.split() for line in printed.splitlines()[1:6]}
    assert set(rows) == {"forward", "loss", "reduce", "backward", "consolidate"}
    roles = ("forward", "loss", "reduce", "backward", "consolidate")
    assert [rows[r][2] for r in roles] == ["7", "7", "2", "3", "1"]  # one consolidation for the one epoch

    assert main([*argv, "--auto"]) == 0
    run = runs / "r"
    estimate = json.loads((run / "estimate.json").read_text())
    assert f"${estimate['usd_cached']:.2f} with caching" in printed  # the run kept what was printed
    bill = billed(run)
    calls = [e for e in read_events(run / "events.jsonl") if e["kind"] == "call"]
    by_role = {row["role"]: row["calls"] for row in estimate["rows"]}
    assert {role: sum(1 for c in calls if c["role"] == role) for role in by_role} == by_role
    with capsys.disabled():  # the figures are the point of the test: say them whatever pytest captures
        for role in by_role:
            spent = sum(c.get("cost_usd") or 0.0 for c in calls if c["role"] == role)
            tokens = sum(
                c["input_tokens"] + c["cache_write_tokens"] + c["cache_read_tokens"] for c in calls if c["role"] == role
            )
            row = next(r for r in estimate["rows"] if r["role"] == role)
            per_call = tokens // by_role[role]
            print(f"{role}: input/call estimated {row['input_per_call']:,}, billed {per_call:,}; billed ${spent:.4f}")
        print(f"estimate ${estimate['usd']:.4f}, billed ${bill:.4f} ({estimate['usd'] / bill - 1:+.1%})")
    assert abs(estimate["usd"] - bill) <= 0.25 * bill

    # After the run, `runs` sets the forecast beside what was spent.
    capsys.readouterr()
    assert main(["runs", "--runs-dir", str(runs)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("r "))
    assert f"${bill:.4f}" in row and f"${estimate['usd']:.4f}" in row


async def test_the_header_shows_the_cost_per_kept_update_where_it_has_room() -> None:
    from textual.app import App

    from skilltui.apps.shared.widgets.run_header import HeaderFacts, RunHeader

    class One(App):
        def compose(self):
            yield RunHeader()

    app = One()
    async with app.run_test(size=(160, 24)) as pilot:
        header = app.query_one(RunHeader)
        header.facts = HeaderFacts(run_id="r", status="running", epoch=0, step=2, cost=0.9, kept=3)
        await pilot.pause()
        assert "$0.9000 ($0.3000/kept update)" in header.render().plain
        header.facts = HeaderFacts(run_id="r", status="running", epoch=0, step=0, cost=0.2, kept=0)
        await pilot.pause()
        assert "kept update" not in header.render().plain  # nothing kept yet: no per-update figure


@pytest.mark.slow
def test_the_estimate_counts_the_calls_an_offline_run_with_the_gate_makes(make_work, tmp_path: Path, capsys) -> None:
    works = [make_work("kestrel", 6), make_work("lantern", 4)]
    val = make_work("moor", 4)
    runs = tmp_path / "runs"
    argv = ["train", "--backend", "offline", "--runs-dir", str(runs), "--run-id", "r", "--val-work", str(val)]
    argv += ["--gate", "--group-size", "1", "--epochs", "2", *(a for w in works for a in ("--work", str(w)))]
    assert main([*argv, "--estimate"]) == 0
    assert "no price for a model of this run" in capsys.readouterr().out and not runs.exists()
    assert main([*argv, "--auto"]) == 0
    estimate = json.loads((runs / "r" / "estimate.json").read_text())
    calls = [e for e in read_events(runs / "r" / "events.jsonl") if e["kind"] == "call"]

    def role(c: dict) -> str:
        return ("validation loss" if c["role"] == "loss" else "validation") if c.get("work") == "moor" else c["role"]

    made = {r: sum(1 for c in calls if role(c) == r) for r in {role(c) for c in calls}}
    planned = {row["role"]: row["calls"] for row in estimate["rows"]}
    assert set(planned) == set(made)
    for name in ("forward", "loss", "backward"):
        assert planned[name] == made[name], name
    # The estimate validates after every micro-step (1 + 10 points, 2 consolidations), an upper bound: the run
    # validates only notes it has not measured yet, and the offline optimizer's "no change"
    # commits leave the notes as they were.
    # Each epoch's consolidation is validated too (2 more points).
    assert planned["consolidate"] == made["consolidate"] == 2
    assert planned["validation"] == planned["validation loss"] == 13
    assert made["validation"] == made["validation loss"] <= 13


def test_a_varying_writer_pays_a_fresh_pass_each_side_for_every_kept_update(make_work, tmp_path, monkeypatch) -> None:
    import skilltui.estimate.text as text

    works = [make_work("kestrel", 6), make_work("lantern", 4)]
    val = make_work("moor", 4)
    argv = ["train", "--backend", "offline", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r"]
    argv += ["--val-work", str(val), "--gate", "--group-size", "1", "--epochs", "2", "--estimate"]
    argv += [a for w in works for a in ("--work", str(w))]
    seen: list[dict] = []
    monkeypatch.setattr(text, "estimate_lines", lambda forecast: seen.append(forecast) or [])

    def validation_calls(*extra: str) -> int:
        assert main([*argv, *extra]) == 0
        return next(r["calls"] for r in seen.pop()["rows"] if r["role"] == "validation")

    exact = validation_calls()
    # 10 micro-steps and 2 consolidations, each kept (the estimate's assumption): a fresh pass each side,
    # and the kept tree's pass in place of the one that chose it, as the next parent: 3 passes more each.
    assert validation_calls("--offline-noise", "0.1") == exact + 3 * 12 == 49


def test_an_agent_call_is_billed_turn_by_turn_with_and_without_the_cache() -> None:
    from skilltui.estimate.sizes import agent_call

    # Two turns on a 2,000-token prompt: the first writes 10 tokens and gets 100 back, so the
    # second sends 2,110. Uncached that is 4,110 input tokens; cached, the first turn writes
    # the 2,000 and the second reads them and writes the 110 that are new.
    size = agent_call(2000, 0, False, [(10, 100), (20, 0)])
    assert (size.input_tokens, size.output_tokens, size.turns) == (4110, 30, 2)
    assert (size.cached.input_tokens, size.cached.cache_write_tokens, size.cached.cache_read_tokens) == (0, 2110, 2000)
    # Sonnet 5.5: $2 in, $10 out, $2.50 to write, $0.10 to read, per million tokens.
    assert size.usd("claude-sonnet-5-5", caching=False) == pytest.approx((4110 * 2 + 30 * 10) / 1e6)
    assert size.usd("claude-sonnet-5-5", caching=True) == pytest.approx((2110 * 2.5 + 2000 * 0.1 + 30 * 10) / 1e6)
    # A story another step already cached is read, not written; a prompt under the model's
    # minimum cacheable length is never marked, so it pays the input rate throughout.
    led = agent_call(1000, 3000, True, [(10, 0)])
    assert (led.cached.cache_write_tokens, led.cached.cache_read_tokens) == (1000, 3000)
    short = agent_call(500, 0, False, [(10, 0), (10, 0)], minimum=1024)
    assert (short.cached.input_tokens, short.cached.cache_write_tokens) == (1010, 0)


def test_the_offline_estimate_says_the_time_its_calls_take(make_work, tmp_path: Path, capsys) -> None:
    """The offline writer takes its --offline-latency per call, not a model's output rate (3 min for a 7 s run)."""
    works = [make_work("kestrel", 4), make_work("lantern", 4)]
    runs = tmp_path / "runs"
    argv = ["train", "--backend", "offline", "--runs-dir", str(runs), *(a for w in works for a in ("--work", str(w)))]
    assert main([*argv, "--estimate"]) == 0
    assert "wall time: about 0m00s" in capsys.readouterr().out
    assert main([*argv, "--offline-latency", "2", "--estimate"]) == 0
    out = capsys.readouterr().out
    wall = next(line for line in out.splitlines() if line.startswith("wall time: about "))
    minutes, seconds = wall.removeprefix("wall time: about ").split(" ")[0].rstrip("s").split("m")
    # Forward and loss of the two works in parallel, then reduce and backward, 2 s each, per step.
    assert 0 < int(minutes) * 60 + int(seconds) <= 2 * 4 * 3 + 2 * 2, wall
    assert not runs.exists()
