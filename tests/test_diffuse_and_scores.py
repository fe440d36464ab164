"""diffuse makes a deterministic noised story; the engine's numeric loss ranks better writing lower."""

from __future__ import annotations

import gc
import tracemalloc

from skilltui.agents.offline import MOVES, write_episode
from skilltui.cli import main
from skilltui.engine.diffuse import noise_work, story_episodes
from skilltui.engine.scores import score_step
from skilltui.engine.works import load_work


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
    assert set(skilled["scores"]) == {"scenes", "order", "dialogue", "length", "format"}
    # The novice writes prose: no scene headings and no dialogue blocks, so nothing to match.
    assert novice["scores"]["dialogue"] == 0.0 and skilled["scores"]["dialogue"] > 0.5
    assert novice["counts"]["1"]["written_scenes"] == 1 < skilled["counts"]["1"]["written_scenes"]


def test_scoring_keeps_nothing_of_the_scenes_it_scored(tmp_path, make_work):
    """A long run scores every episode of every work: none of their text may stay in the trainer."""
    work = load_work(make_work("ember", 4, story=False))
    human = {n: work.episode_text(n) for n in work.episodes}

    def score_new_episodes(rounds: int, tag: str) -> None:
        for n in range(rounds):  # each round other words in every scene, as new episodes have
            score_step({k: f"{t.replace('INT.', 'EXT.')}\nRound {tag}{n} ends." for k, t in human.items()}, human)

    gc.collect()
    tracemalloc.start()
    try:
        # What scoring loads or sizes once (regexes, tables grown to fit) settles over the first rounds.
        score_new_episodes(16, "settle")
        gc.collect()
        settled = tracemalloc.get_traced_memory()[0]
        score_new_episodes(16, "measured")
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - settled
    finally:
        tracemalloc.stop()
    text = sum(len(t) for t in human.values())
    # With sacrebleu's tokenizer cache, scoring kept every scene's text and tokens: about 60 kB
    # over these 16 rounds. Without it, 3-4 kB: tables still growing to their size.
    assert kept < 8 * text, f"kept {kept} bytes after scoring {16 * text} bytes of new text"
