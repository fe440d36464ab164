"""Benchmark: the engine's loss on episodes the size of a television hour.

Every written scene is compared with every human one, so the cost grows with scenes
squared. The engine extracts each scene's n-grams once per scoring (`scores._grams`) and
compares the counts (`scores._bleu`); the baseline, measured in the same run on the same
pairs, calls sacrebleu's `sentence_score` for every pair, which re-tokenises both texts
each time. Both give the same numbers; the ratio is what extracting once buys.

    python bench/bench_loss.py [--scenes 50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from conftest import NAMES, make_varied_episode  # noqa: E402
from sacrebleu.metrics import BLEU  # noqa: E402

from skilltui.engine import scores  # noqa: E402


def episode(rng: random.Random, scenes: int) -> str:
    text = ""
    while text.count("\nINT. ") + text.count("\nEXT. ") + 1 < scenes:
        text += make_varied_episode(rng, NAMES[:6]) + "\n"
    return text


def timed(written: str, human: str, repeat: int) -> tuple[float, float]:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        loss = scores.score_step({1: written}, {1: human})["loss"]
        runs.append(time.perf_counter() - started)
    return statistics.median(runs), loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(0)
    human, written = episode(rng, args.scenes), episode(rng, args.scenes)
    fast, loss = timed(written, human, args.repeat)
    bleu = BLEU(effective_order=True)

    def per_pair(w: str, h: str) -> float:
        return bleu.sentence_score(w, [h]).score / 100.0 if w.strip() and h.strip() else 0.0

    # Every comparison goes through `_bleu(_grams(a), _grams(b))`: with the texts passed as
    # they are and compared by `sentence_score`, each pair is tokenised again.
    with mock.patch.object(scores, "_grams", lambda text: text), mock.patch.object(scores, "_bleu", per_pair):
        slow, baseline_loss = timed(written, human, args.repeat)
    print(f"episode: {len(scores.parse(human).scenes)} scenes, {len(human.split())} words")
    print(f"baseline (sentence_score per pair): {slow * 1000:8.1f} ms  loss {baseline_loss}")
    print(f"engine (n-grams once per scene):    {fast * 1000:8.1f} ms  loss {loss}")
    print(f"ratio: {slow / fast:.1f}x faster, same loss: {loss == baseline_loss}")


if __name__ == "__main__":
    main()
