"""`skilltui blame RUN NOTE`: every line of a note names the micro-step that wrote it, as the run recorded it."""

from __future__ import annotations

import json

from skilltui.cli import main
from tests.support.recorded import recorded


def test_every_line_names_a_micro_step_of_the_runs_events(copied_run, capsys):
    run = copied_run("amber-quay", "salt-lamp")
    note = run.pool.note_paths()[0]
    capsys.readouterr()  # what training printed
    assert main(["blame", str(run.root), note, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    text = (run.pool.root / note).read_text(encoding="utf-8").splitlines()
    assert [line["text"] for line in data["lines"]] == text
    decided = {
        (e["epoch"], e["step"], e["group"], e["attempt"]): e
        for e in recorded(run.events_path)
        if e["kind"] == "decision"
    }
    for line in data["lines"]:
        origin = data["origins"][line["commit"]]
        key = (origin["epoch"], origin["step"], origin["group"], origin["attempt"])
        assert key in decided, origin  # a micro-step that exists in the run's events
        assert decided[key]["after"] == line["commit"]
        assert origin["evidence"] and set(origin["evidence"]) <= {"amber-quay", "salt-lamp"}
        assert origin["cost_usd"] == 0.0  # the offline backend costs nothing, and says so
    assert main(["blame", str(run.root), note]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[0] == data["origins"][data["lines"][0]["commit"]]["micro_step"].split()[0]
    # The commit's own trailers say how it was decided and what it cost.
    assert any("evidence" in line and "kept by auto" in line and "cost $0.0000" in line for line in out)
    assert all(o["provenance"]["Step"] for o in data["origins"].values() if o["micro_step"])


def test_a_run_from_before_trailers_blames_from_its_records(trained_run, monkeypatch, capsys):
    # As an older version trained: the agent's commit is kept as it was, with no trailers.
    monkeypatch.setattr("skilltui.engine.update.provenance.stamp", lambda pool, sha, pairs: sha)
    run = trained_run("amber-quay")
    assert "Skilltui-" not in run.pool.git("log", "--format=%B")
    note = run.pool.note_paths()[0]
    capsys.readouterr()
    assert main(["blame", str(run.root), note, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    origins = [o for o in data["origins"].values() if o["micro_step"]]
    assert origins and all(o["decision"] == "approved by auto" and not o["provenance"] for o in origins)


def test_blame_refuses_a_missing_note_and_a_run_without_a_pool(copied_run, tmp_path, capsys):
    run = copied_run("amber-quay")
    capsys.readouterr()
    assert main(["blame", str(run.root), "scene/nope.md"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "scene/nope.md is not a note" in err[0]
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text("{}")
    assert main(["blame", str(bare), "scene/a.md"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no pool" in err[0]


def test_a_note_name_holding_a_line_break_is_refused_in_one_line(copied_run, tmp_path, capsys):
    run = copied_run("amber-quay")
    capsys.readouterr()
    for name in ["scene/no\npe.md", "scene/no\rpe.md", "scene/no\x1b]0;x\x07pe.md", "scene/no\u2028pe.md"]:
        assert main(["blame", str(run.root), name]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "is not a note" in err, err
        assert "\u2028" not in err
        assert "\x1b" not in err and "\r" not in err
    assert main(["lint", str(tmp_path / "no\npool")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "is not a folder" in err, err


def test_a_micro_steps_loss_says_it_is_a_step_mean_over_more_works_than_its_evidence(make_work, tmp_path, capsys):
    """With --group-size 1 each micro-step reads one work's report, but its loss figure is the step's mean
    over both works: the evidence page and blame say which works the figure covers."""
    from skilltui.apps.history.evidence import evidence_markdown
    from skilltui.runs.records import load_history
    from skilltui.store.run_folder import Run

    args = ["train", "--auto", "--steps", "2", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r"]
    args += ["--no-consolidate", "--group-size", "1", "--work", str(make_work("amber-quay")), "--work"]
    assert main([*args, str(make_work("salt-lamp"))]) == 0
    run = Run(tmp_path / "runs" / "r")
    first = [c for c in load_history(run).commits if c.micro is not None and (c.micro.epoch, c.micro.step) == (0, 0)]
    assert {tuple(c.micro.works) for c in first} == {("amber-quay",), ("salt-lamp",)}
    for commit in first:
        assert commit.loss_before is not None and commit.loss_after is not None
        assert commit.loss_works == ("amber-quay", "salt-lamp")
        text = evidence_markdown(run, commit)
        said = f"Both are over amber-quay, salt-lamp (a step mean; its evidence is {commit.micro.works[0]})."
        assert said in text
    capsys.readouterr()
    note = next(p for p in run.pool.note_paths())
    assert main(["blame", str(run.root), note]) == 0
    out = capsys.readouterr().out
    assert "over amber-quay, salt-lamp" in out
