"""The app's full garbage collections wait for a quiet moment, and never wait forever."""

from __future__ import annotations

import gc
import weakref

from skilltui.apps.train.collector import LIMIT, PERIOD, QUIET, QuietCollector


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_full_collections_leave_python_while_the_app_runs_and_come_back_after():
    before = gc.get_threshold()
    collector = QuietCollector(Clock())
    collector.start()
    try:
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] > 1_000_000
    finally:
        collector.stop()
    assert gc.get_threshold() == before


def test_a_collection_waits_for_the_period_and_for_a_pause_in_the_typing():
    clock = Clock()
    collector = QuietCollector(clock)
    collector.start()
    try:
        clock.now += PERIOD / 2
        assert not collector.tick()  # too soon after the last one
        clock.now += PERIOD
        collector.touched()
        assert not collector.tick()  # someone is typing
        clock.now += QUIET / 2
        assert not collector.tick()
        clock.now += QUIET
        assert collector.tick()  # due, and quiet
        assert not collector.tick()  # and not again at once
    finally:
        collector.stop()


def test_typing_that_never_stops_still_gets_a_collection_after_the_limit():
    clock = Clock()
    collector = QuietCollector(clock)
    collector.start()
    try:
        ran = 0
        for _ in range(int(LIMIT / 0.1) + 5):
            clock.now += 0.1
            collector.touched()
            ran += collector.tick()
        assert ran == 1 and collector.collections == 1
    finally:
        collector.stop()


def test_a_collection_frees_old_cycles_the_young_collections_cannot():
    class Node:
        pass

    clock = Clock()
    collector = QuietCollector(clock)
    collector.start()
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a
        gc.collect(1)  # the pair survives the young generations: it is old now
        probe = weakref.ref(a)
        del a, b
        gc.collect(1)  # what Python still runs on its own does not reach it
        assert probe() is not None
        clock.now += LIMIT
        assert collector.tick()
        assert probe() is None
    finally:
        collector.stop()
