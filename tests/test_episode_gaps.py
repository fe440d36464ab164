"""Episode numbers with a gap: the message names the gap, and no step trains across one."""

from __future__ import annotations

from pathlib import Path

from skilltui.cli import main
from skilltui.store.run_folder import Run
from tests.support.recorded import recorded


def with_gap(make_work, name: str = "gap-show") -> Path:
    """A work whose human episodes are 1, 2 and 5."""
    work = make_work(name, 5)
    for n in (3, 4):
        (work / "human" / f"{n:02d}.fountain").unlink()
    return work


def test_a_gap_in_the_episodes_is_named_not_called_too_few(make_work, tmp_path: Path, capsys) -> None:
    work = with_gap(make_work)
    argv = ["train", "--auto", "--runs-dir", str(tmp_path / "runs"), "--work", str(work), "--episodes-per-step", "3"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "has no episode 3" in err and "1, 2, 5" in err and "--episodes-per-step 2 or less" in err
    assert "the longest has 3 episodes" not in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_step_that_would_span_a_gap_is_not_trained(make_work, tmp_path: Path) -> None:
    # Episodes 1, 2, 5 with five a step: episode 5 is there, but 3 and 4 are not.
    gap, whole = with_gap(make_work), make_work("whole-show", 5)
    argv = ["train", "--auto", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r", "--episodes-per-step", "5"]
    assert main(argv + ["--work", str(gap), "--work", str(whole)]) == 0
    events = recorded(Run(tmp_path / "runs" / "r").events_path)
    assert not [e for e in events if e["kind"] == "stage" and e.get("status") == "failed"]
    losses = [e["work"] for e in events if e["kind"] == "loss"]
    assert losses == ["whole-show"]


def test_an_episode_no_whole_stretch_reaches_is_named_at_the_start(make_work, tmp_path: Path, capsys) -> None:
    """Three episodes at two a step: episode 3's stretch (3-4) never runs for it, and the run says so."""
    odd, even = make_work("odd-show", 3), make_work("even-show", 4)
    argv = ["train", "--auto", "--runs-dir", str(tmp_path / "runs"), "--run-id", "r", "--steps", "3"]
    assert main(argv + ["--work", str(odd), "--work", str(even)]) == 0
    events = recorded(Run(tmp_path / "runs" / "r").events_path)
    warned = [e["message"] for e in events if e["kind"] == "warning" and "never trained" in e["message"]]
    assert warned == [
        "odd-show: episode 3 never trained: a step takes whole stretches of 2 episodes (3-4) and odd-show has "
        "3 episodes; add the rest of the stretch, or choose an --episodes-per-step that divides 3"
    ]
    assert not [e for e in events if e["kind"] == "episode_written" and e["work"] == "odd-show" and e["episode"] == 3]
    said = capsys.readouterr()
    assert "odd-show: episode 3 never trained" in said.out + said.err  # the console says it too
