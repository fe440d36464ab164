"""diffuse makes a deterministic noised story; the engine's numeric loss ranks better writing lower."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from skilltui.agents.offline import MOVES, write_episode
from skilltui.cli import main
from skilltui.engine.data.diffuse import noise_work, story_episodes
from skilltui.engine.data.works import load_work
from skilltui.engine.loss.scores import score_step
from tests.support.works import long_script


def test_diffuse_is_deterministic_for_a_seed_and_noise(tmp_path, make_work):
    work = load_work(make_work("tide", 3, story=False))
    a = noise_work(work, seed=3, noise=0.4)
    assert a == noise_work(work, seed=3, noise=0.4)
    assert a != noise_work(work, seed=4, noise=0.4)
    assert a != noise_work(work, seed=3, noise=0.9)


def test_diffuse_writes_marked_prose_with_no_screenplay_left(tmp_path, make_work):
    folder = make_work("ember", 3, story=False)
    assert main(["diffuse", "--work", str(folder), "--noise", "0.5"]) == 0
    story = (folder / "story.md").read_text()
    episodes = story_episodes(story)
    assert sorted(episodes) == [1, 2, 3]
    for prose in episodes.values():
        assert "INT. " not in prose and "EXT. " not in prose and "CUT TO:" not in prose
        assert " says" in prose and "The scene is " in prose


def test_loss_is_in_range_and_ranks_better_writing_lower(tmp_path, make_work):
    work = load_work(make_work("cinder", 2, story=False))
    human = {n: work.episode_text(n) for n in work.episodes}
    prose = story_episodes(noise_work(work, seed=0, noise=0.3))
    everything = {m.name for m in MOVES}
    novice = score_step({n: write_episode(prose[n], set()) for n in human}, human)
    skilled = score_step({n: write_episode(prose[n], everything) for n in human}, human)
    perfect = score_step(dict(human), human)
    missing = score_step({}, human)
    assert missing["loss"] == 1.0
    assert perfect["loss"] == 0.0
    assert 0.0 < skilled["loss"] < novice["loss"] < 1.0
    assert set(skilled["scores"]) == {"scenes", "order", "dialogue", "speakers", "length", "format"}
    # The novice writes prose: no scene headings and no dialogue blocks, so nothing to match.
    assert novice["scores"]["dialogue"] == 0.0 and skilled["scores"]["dialogue"] > 0.5
    assert novice["counts"]["1"]["written_scenes"] == 1 < skilled["counts"]["1"]["written_scenes"]


MEASURE_KEPT = """
import gc, json, sys, tracemalloc
from pathlib import Path
from skilltui.engine.loss.scores import score_step
human = json.loads(Path(sys.argv[1]).read_text())
def score_new_episodes(rounds, tag):
    for n in range(rounds):  # each round other words in every scene, as new episodes have
        score_step({k: f"{t.replace('INT.', 'EXT.')}\\nRound {tag}{n} ends." for k, t in human.items()}, human)
    gc.collect()
    return tracemalloc.get_traced_memory()[0]
tracemalloc.start()
# What scoring loads or sizes once (regexes, tables grown to fit) settles over the first rounds.
score_new_episodes(32, "settle")
after = score_new_episodes(16, "first")
print(after, score_new_episodes(32, "then"))
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_scoring_keeps_nothing_of_the_scenes_it_scored(tmp_path, make_work):
    """A long run scores every episode of every work: none of their text may stay in the trainer."""
    work = load_work(make_work("ember", 4, story=False))
    human = {n: work.episode_text(n) for n in work.episodes}
    episodes = tmp_path / "human.json"
    episodes.write_text(json.dumps(human), encoding="utf-8")
    # In a process of its own: tracemalloc counts every thread, and a thread an earlier test
    # left running in this one (under xdist a worker runs many tests) would be counted too.
    result = subprocess.run(
        [sys.executable, "-c", MEASURE_KEPT, str(episodes)], capture_output=True, text=True, check=True
    )
    before, after = map(int, result.stdout.split())
    text = sum(len(t) for t in human.values())
    # With sacrebleu's tokenizer cache, scoring kept every scene's text and tokens: some 3.7 kB a
    # round, the text of each round (1.3 kB here) and more. Without it, what is kept once scoring
    # settled moves by 0-70 B a round (tables still growing, CPython's own caches), and by 4-13
    # kB in all from one process to the next: a bound on the total failed one run in ten.
    per_round = (after - before) / 32
    assert per_round < text / 4, f"kept {per_round:.0f} B a round, scoring {text} B of new text a round"


def test_a_script_over_max_script_kb_is_refused_when_the_work_is_opened(tmp_path, make_work, capsys):
    folder = make_work("tide", 2)
    big = folder / "human" / "02.fountain"
    big.write_text(big.read_text() + "\nA long dump of text.\n" * 200, encoding="utf-8")
    runs = tmp_path / "runs"
    argv = ["train", "--auto", "--runs-dir", str(runs), "--work", str(folder), "--steps", "1"]
    assert main([*argv, "--max-script-kb", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "02.fountain is 4 KB, over --max-script-kb 2" in err[0], err
    assert not runs.exists() or not any(runs.iterdir())  # nothing half-written
    assert main([*argv, "--max-script-kb", "0"]) == 2
    assert "--max-script-kb must be at least 1" in capsys.readouterr().err
    assert main(argv) == 0  # the default, 2048 KB, takes a 4 KB episode


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a child that ended but was not yet reaped is a zombie: gone for our purpose
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return False


def _wait_for(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.usefixtures("pooled_scoring")
@pytest.mark.subprocess
async def test_scoring_runs_in_a_worker_process_and_leaves_the_event_loop_free():
    from skilltui.engine.loss import score_pool

    human = long_script(20_000)
    written = {1: human.replace("INT.", "EXT."), 2: None}
    task = asyncio.ensure_future(score_pool.score_in_worker(written, {1: human, 2: human}))
    ticks = 0
    while not task.done():  # the loop turns while the worker scores
        await asyncio.sleep(0.005)
        ticks += 1
    assert await task == score_step(written, {1: human, 2: human})
    assert ticks >= 10
    workers = getattr(score_pool.pool(), "_processes", {})
    assert workers and all(p.pid != os.getpid() for p in workers.values())
    assert len(workers) <= score_pool.cores()


@pytest.mark.usefixtures("pooled_scoring")
@pytest.mark.subprocess
async def test_a_cancelled_scoring_takes_its_worker_down():
    from skilltui.engine.loss import score_pool

    human = long_script(60_000)
    task = asyncio.ensure_future(score_pool.score_in_worker({1: human}, {1: human}))
    executor = score_pool.pool()
    assert _wait_for(lambda: bool(getattr(executor, "_processes", {})), 10)
    await asyncio.sleep(0.3)  # the work reaches a worker
    pids = [p.pid for p in executor._processes.values()]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _wait_for(lambda: all(_gone(pid) for pid in pids)), pids
    # the next scoring starts fresh workers
    assert (await score_pool.score_in_worker({1: "INT. A - DAY\n\nHi."}, {1: "INT. A - DAY\n\nHi."}))["loss"] == 0.0


@pytest.mark.slow
@pytest.mark.usefixtures("pooled_scoring")
@pytest.mark.subprocess
def test_a_trainer_ended_at_once_leaves_no_scorer_running(tmp_path):
    """os._exit on a second stop signal (or a kill) skips every cleanup: the workers notice on their own."""
    script = tmp_path / "trainer.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, os, sys
            sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
            from tests.support.works import long_script
            from skilltui.engine.loss import score_pool

            async def main():
                human = long_script(60_000)
                scoring = asyncio.ensure_future(score_pool.score_in_worker({{1: human}}, {{1: human}}))
                while not getattr(score_pool.pool(), "_processes", None):
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.5)
                print(" ".join(str(p.pid) for p in score_pool.pool()._processes.values()), flush=True)
                os._exit(0)  # mid-scoring, no cleanup: as a second stop signal ends a trainer
                await scoring

            if __name__ == "__main__":  # the workers start by spawn, which imports this file again
                asyncio.run(main())
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    pids = [int(p) for p in done.stdout.split()]
    assert pids, done.stderr
    assert _wait_for(lambda: all(_gone(pid) for pid in pids)), pids
    # and nothing said on the way out: a stop is one line (multiprocessing's resource tracker,
    # left with the pool's semaphores, would warn about them on the trainer's stderr)
    assert done.stderr == ""


@pytest.mark.usefixtures("pooled_scoring")
@pytest.mark.subprocess
async def test_a_forked_trainer_that_closes_what_it_inherited_scores_on_its_own_workers(tmp_path):
    """The live app forks the trainer, which closes every inherited descriptor: multiprocessing's
    tracker pipe among them. The child must start its own, not write into whatever file took
    the old number."""
    from skilltui.engine.loss import score_pool

    episode = {1: "INT. A - DAY\n\nHello there.\n"}
    assert (await score_pool.score_in_worker(episode, episode))["loss"] == 0.0  # the parent's pool is up
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            os.closerange(3, write)
            os.closerange(write + 1, 1024)
            taken = tmp_path / "taken.txt"
            with open(taken, "w", encoding="utf-8"):  # takes one of the freed numbers
                result = asyncio.run(asyncio.wait_for(score_pool.score_in_worker(episode, episode), 60))
            os.write(write, f"{result['loss']} {taken.stat().st_size}".encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    report = await asyncio.to_thread(lambda: os.read(read, 100).decode())
    _, status = await asyncio.to_thread(os.waitpid, pid, 0)
    assert status == 0 and report == "0.0 0", report  # scored, and nothing written into the file


@pytest.mark.usefixtures("pooled_scoring")
@pytest.mark.subprocess
@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads the workers' descriptors in /proc")
def test_a_trainer_forks_its_scorers_before_its_loop_and_they_keep_none_of_its_descriptors(tmp_path):
    """`score_pool.start()` in a process with one thread (the trainer before its event loop): every
    worker is up before the first scoring, none holds a descriptor of the trainer's (its pipe to
    the app must close when the trainer ends, not when its scorers notice), and a stop still takes
    them down though the trainer handles SIGTERM itself, as a command's stop handler does."""
    script = tmp_path / "trainer.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import asyncio, contextlib, json, os, signal, sys, time
            sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
            from tests.support.works import long_script
            from skilltui.engine.loss import score_pool

            def holds(pid, inode):
                for fd in os.listdir(f"/proc/{{pid}}/fd"):
                    with contextlib.suppress(OSError):
                        if os.stat(f"/proc/{{pid}}/fd/{{fd}}").st_ino == inode:
                            return True
                return False

            async def score_then_cancel():
                human = long_script(60_000)
                scoring = asyncio.ensure_future(score_pool.score_in_worker({{1: human}}, {{1: human}}))
                await asyncio.sleep(0.5)  # the work reaches a worker
                scoring.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await scoring

            if __name__ == "__main__":
                signal.signal(signal.SIGTERM, lambda *_: None)
                pipe = os.fstat(int(sys.argv[1])).st_ino
                score_pool.start()
                workers = [p.pid for p in score_pool.pool()._processes.values()]
                deadline = time.monotonic() + 20  # a worker closes them as it starts, just after its fork
                while (holding := [pid for pid in workers if holds(pid, pipe)]) and time.monotonic() < deadline:
                    time.sleep(0.05)
                on_term = score_pool.pool().submit(signal.getsignal, signal.SIGTERM).result()
                asyncio.run(score_then_cancel())
                print(json.dumps({{"workers": workers, "holding": holding, "cores": score_pool.cores(),
                                  "on_term": on_term == signal.SIG_DFL}}))
            """
        ),
        encoding="utf-8",
    )
    read, write = os.pipe()
    try:
        done = subprocess.run(
            [sys.executable, str(script), str(write)], pass_fds=(write,), capture_output=True, text=True, timeout=120
        )
    finally:
        os.close(read)
        os.close(write)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert len(seen["workers"]) == seen["cores"]
    assert seen["holding"] == []
    assert seen["on_term"]  # a worker dies on the stop's SIGTERM, whatever its parent does with one
    assert _wait_for(lambda: all(_gone(pid) for pid in seen["workers"])), seen["workers"]
