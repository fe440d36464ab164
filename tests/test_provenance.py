"""Provenance trailers: every micro-step's commit says where it came from, in git."""

from __future__ import annotations

import git

from skilltui.agents.offline import OfflineBackend
from skilltui.model.commits import parse_body
from skilltui.model.trailers import NOTES_REF, parse
from skilltui.store.run_folder import Run
from tests.support.recorded import recorded
from tests.support.validation import held_out_work, train_with

KEYS = ("Step", "Evidence", "Val", "Cost", "Decision")


def trailers_of(repo: git.Repo, rev: str) -> list[tuple[str, dict[str, str]]]:
    """(sha, trailers) of every commit of `rev`, as `git log --format='%(trailers)'` prints them."""
    out = repo.git.log(rev, "--format=%H%x00%(trailers:only,unfold)%x01")
    found = []
    for chunk in out.split("\x01"):
        if not chunk.strip():
            continue
        sha, _, text = chunk.strip().partition("\x00")
        pairs = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
        found.append((sha, pairs))
    return found


def test_git_log_shows_the_trailers_on_every_micro_step(tmp_path, make_work):
    works = [make_work("sable-quay", 4), make_work("tin-orchard", 4)]
    runs = tmp_path / "runs"
    val = held_out_work(tmp_path / "val")
    extra = ("--steps", "2", "--group-size", "1", "--gate")
    assert train_with(OfflineBackend(), runs, works, [val], *extra) == 0
    run = Run(runs / "r")
    repo = git.Repo(run.pool.root)
    decisions = {
        f"e{e['epoch']} s{e['step']} g{e['group']} a{e['attempt']}": e
        for e in recorded(run.events_path)
        if e["kind"] == "decision"
    }
    assert len(decisions) == 4  # two steps, two micro-steps each
    everything = trailers_of(repo, "--all")
    stamped = {sha: pairs for sha, pairs in everything if pairs}
    gates = {
        (g["epoch"], g["step"], g["group"], g["attempt"]): g for g in recorded(run.events_path) if g["kind"] == "gate"
    }
    for step, decision in decisions.items():
        commit = decision["after"]
        assert commit in stamped, (step, decision)  # the decision names the commit with the trailers
        if decision["decision"] == "approve":
            assert repo.is_ancestor(commit, "HEAD")
        else:
            assert repo.commit(decision["ref"]).hexsha == commit  # kept under its ref, trailers and all
        pairs = stamped[commit]
        assert all(f"Skilltui-{key}" in pairs for key in KEYS), pairs
        assert pairs["Skilltui-Step"] == step
        gate = gates[(decision["epoch"], decision["step"], decision["group"], decision["attempt"])]
        assert pairs["Skilltui-Val"].startswith(f"{gate['before']:.3f} → {gate['after']:.3f} (Δ {gate['delta']:+.3f}")
        if gate["low"] is not None:
            # labelled at the level the interval was computed at, not the decision's confidence
            at = f"{100 * gate['level']:.1f}".rstrip("0").rstrip(".")
            assert f"[{gate['low']:+.3f}, {gate['high']:+.3f}] at {at}%" in pairs["Skilltui-Val"]
        assert pairs["Skilltui-Cost"] == "$0.0000 (1 call)"  # offline costs nothing, and says so
        word = {"approve": "kept", "rollback": "rolled back"}[decision["decision"]]
        assert pairs["Skilltui-Decision"] == f"{word} by auto"
        works_named = {part.split(" ep ")[0] for part in pairs["Skilltui-Evidence"].split(", ")}
        assert works_named <= {"sable-quay", "tin-orchard"} and works_named
        # The body reads as the agent wrote it: the trailers are no part of its sections.
        assert "Skilltui" not in parse_body(str(repo.commit(commit).message))["prediction"]
    # Every micro-step commit in the pool's history carries them; the others (start, seed) none.
    for sha, pairs in trailers_of(repo, "HEAD"):
        subject = repo.commit(sha).summary
        assert bool(pairs) == str(subject).startswith("train "), (subject, pairs)


def test_a_decision_made_later_is_a_git_note_and_the_commit_never_changes(trained_run):
    from skilltui.runs import operations

    run = trained_run("lantern-fen", "cold-orchard")
    pool = run.pool
    head = pool.head()
    message = pool.git("log", "-1", "--format=%B", head)
    assert "Skilltui-Decision: kept by auto" in message
    done = operations.revert(run, head)
    assert pool.git("log", "-1", "--format=%B", head) == message  # same sha, same message
    said = parse(message, pool.notes_of(head, NOTES_REF))
    assert said.get("Decision") == f"rolled back later by human (reverted by {done.record.after[:7]})"
    assert said.all("Decision") == ["kept by auto", said.get("Decision")]
    # A reset drops the revert: the note on it says so, and the revert commit is unchanged.
    operations.reset(run, head)
    assert parse(pool.notes_of(done.record.after, NOTES_REF)).get("Decision").startswith("dropped later by human")
