"""`plain` gives what `dataclasses.asdict` gives, without sharing anything mutable.

The event log and the wire are made from `Event.to_dict()`; if `plain` differed from `asdict`
by one value, old and new logs would differ and a reader would see a field change type. The
golden log holds every kind a gated run records; the cases below add what events hold only
sometimes (nested dataclasses, tuples, namedtuples, dicts of lists).
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict, defaultdict, namedtuple
from pathlib import Path

from skilltui.model import events as ev
from skilltui.model.parse import parse_event
from skilltui.model.plain import plain, plain_fields
from skilltui.model.review import CandidateView, Decision, GateVerdict, ReviewRequest, request_to_dict

GOLDEN = Path(__file__).parent / "data" / "golden" / "gated-run.events.jsonl"

Pair = namedtuple("Pair", "left right")


@dataclasses.dataclass
class Leaf:
    name: str
    marks: list[int]
    where: Path = Path("/tmp/x")


@dataclasses.dataclass
class Tree:
    leaves: list[Leaf]
    by_name: dict[str, Leaf]
    pair: Pair
    span: tuple[float, float]
    flags: OrderedDict[str, bool]
    nothing: None = None


def a_tree() -> Tree:
    leaf = Leaf("a", [1, 2])
    return Tree(
        leaves=[leaf, Leaf("b", [])],
        by_name={"a": leaf},
        pair=Pair([1], {"k": [2]}),
        span=(0.5, 1.5),
        flags=OrderedDict(x=True),
    )


def test_every_event_in_a_gated_run_comes_out_as_asdict_gives_it() -> None:
    events = [parse_event(json.loads(line)) for line in GOLDEN.read_text().splitlines()]
    assert len({e.kind for e in events}) >= 15  # the golden run spans most kinds
    for event in events:
        assert event.to_dict() == {"kind": event.kind, **dataclasses.asdict(event)}, event.kind
        assert list(event.to_dict()) == ["kind", *(f.name for f in dataclasses.fields(event))]


def test_nested_values_match_asdict_in_value_type_and_order() -> None:
    tree = a_tree()
    got, want = plain_fields(tree), dataclasses.asdict(tree)
    assert got == want
    assert type(got["pair"]) is Pair and type(got["span"]) is tuple and type(got["flags"]) is OrderedDict
    assert list(got) == list(want)


def test_the_result_shares_nothing_mutable_with_its_source() -> None:
    tree = a_tree()
    got = plain_fields(tree)
    got["leaves"][0]["marks"].append(99)
    got["pair"].left.append(99)
    got["by_name"]["a"]["marks"].clear()
    assert tree.leaves[0].marks == [1, 2] and tree.pair.left == [1]
    path = Path("/tmp/x")
    assert plain(path) == path


def test_a_defaultdict_keeps_its_factory() -> None:
    counts: defaultdict[str, list[int]] = defaultdict(list, {"a": [1]})
    got = plain(counts)
    assert type(got) is defaultdict and got.default_factory is list and got == {"a": [1]}
    got["a"].append(2)
    assert counts["a"] == [1]


def test_a_review_request_and_a_decision_cross_the_wire_as_before(tmp_path: Path) -> None:
    verdict = GateVerdict(before=0.4, after=0.3, works=2, advice="keep", reason="better")
    candidate = CandidateView(number=2, attempt=3, after="b" * 40, subject="s", patch="p", reads=["a.md"], gate=verdict)
    request = ReviewRequest(
        run_dir=tmp_path, epoch=1, step=2, group=0, attempt=1, label="1/2", works=["w"],
        before="a" * 40, after="b" * 40, subject="s", patch="p", evidence="e", reports={"w": "r"},
        lint_ok=True, lint_problems=[], gate=verdict, candidates=[candidate],
    )  # fmt: skip
    want = dataclasses.asdict(request)
    want["run_dir"] = str(tmp_path)
    got = request_to_dict(request)
    assert got == want and got["candidates"][0]["gate"]["reason"] == "better"
    decision = Decision(action="approve", by="human", note="fine")
    assert plain_fields(decision) == dataclasses.asdict(decision)


def test_an_event_dict_is_its_own() -> None:
    event = ev.Attribution(epoch=1, step=1, notes={"craft/a.md": {"kept": 2}})
    out = event.to_dict()
    out["notes"]["craft/a.md"]["kept"] = 0
    assert event.notes["craft/a.md"]["kept"] == 2
