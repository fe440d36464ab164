"""Which written scene is which human scene: the alignment the loss's parts are read from.

A feature film has ~200 scenes; comparing every written scene with every human one grows
with the square of the length (docs/benchmarks.md, "The loss"). So each written scene
is compared only with *candidates*: the human scenes it shares the most stem bigrams with
(an inverted index of the human scenes' bigrams, skipping bigrams so common they say
nothing), and the human scenes near its own place (a band around the diagonal, which is
where a script in order finds its partners even when it rewords them). Short episodes
compare all pairs, which the index would find anyway.

Scenes are then matched one to one, best pairs first, and a match may grow by one
neighbour on one side: a written scene that runs two consecutive human scenes together
(a missing heading) matches both, and a human scene written as two matches both parts,
when the pair says more alike as a whole than the single scene did (a scene that lacks
its neighbour's content says less alike with it added, so it cannot claim it). Growing is what a
merged or split scene is owed; it costs `HEADING_COST` of a scene for the heading that is
missing or extra.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .scene_text import Text, similarity

ALL_PAIRS_UP_TO = 600  # human x written scenes compared exhaustively below this
CANDIDATES = 6  # human scenes per written scene from the bigram index
BAND = 3  # human scenes either side of the diagonal always compared
COMMON_GRAM = 0.2  # a bigram in more than this share of the human scenes is not indexed
CHANCE_PAIRS = 256  # pairs of human scenes sampled for the chance level
HEADING_COST = 0.25  # of a scene, for a merged or split scene's missing or extra heading


@dataclass(frozen=True)
class Group:
    """Human scenes and the written scenes that play them, with how alike they are above chance."""

    human: tuple[int, ...]
    written: tuple[int, ...]
    sim: float

    @property
    def size(self) -> int:
        return max(len(self.human), len(self.written))

    @property
    def credit(self) -> float:
        """What the group is worth in scenes: each scene it covers, less the heading it lacks or adds."""
        return max(0.0, self.sim * self.size - HEADING_COST * (self.size - 1))


def chance(human: list[Text]) -> float:
    """What two different human scenes share on average (names, stock words), capped at 0.5.

    All pairs for a short episode; for a long one a fixed spread of pairs (every scene with
    scenes at evenly spaced offsets), which keeps it linear and deterministic.
    """
    n = len(human)
    if n < 2:
        return 0.0
    if n * (n - 1) <= CHANCE_PAIRS:
        pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    else:
        offsets = max(1, CHANCE_PAIRS // n)
        step = max(1, (n - 1) // (offsets + 1))
        pairs = [(i, (i + k * step) % n) for k in range(1, offsets + 1) for i in range(n)]
        pairs = [(i, j) for i, j in pairs if i != j]
    return min(0.5, sum(similarity(human[i], human[j]) for i, j in pairs) / len(pairs))


def above(sim: float, level: float) -> float:
    return max(0.0, (sim - level) / (1.0 - level))


def candidate_pairs(written: list[Text], human: list[Text]) -> list[tuple[int, int]]:
    """(human, written) pairs worth comparing: all for short episodes, else index and band."""
    nh, nw = len(human), len(written)
    if nh * nw <= ALL_PAIRS_UP_TO:
        return [(i, j) for i in range(nh) for j in range(nw)]
    index: dict[object, list[int]] = {}
    for i, text in enumerate(human):
        for gram in text.bi:
            index.setdefault(gram, []).append(i)
    cap = max(2, int(COMMON_GRAM * nh))
    pairs: set[tuple[int, int]] = set()
    for j, text in enumerate(written):
        shared: dict[int, float] = {}
        for gram, weight in text.bi.items():
            posting = index.get(gram)
            if posting and len(posting) <= cap:
                for i in posting:
                    shared[i] = shared.get(i, 0.0) + weight
        best = sorted(shared, key=lambda i: (-shared[i], i))[:CANDIDATES]
        centre = round(j * (nh - 1) / max(1, nw - 1))
        near = range(max(0, centre - BAND), min(nh, centre + BAND + 1))
        pairs.update((i, j) for i in (*best, *near))
    return sorted(pairs)


@dataclass
class _Matching:
    """One episode's matching in progress: both sides' scenes, chance's level, which scene went to which group."""

    written: list[Text]
    human: list[Text]
    level: float
    used_h: dict[int, int] = field(default_factory=dict)  # human scene -> its group
    used_w: dict[int, int] = field(default_factory=dict)  # written scene -> its group


def match(written: list[Text], human: list[Text]) -> list[Group]:
    """Scene groups, one to one and grown by a neighbour where that says more; sorted by written position."""
    m = _Matching(written, human, chance(human))
    scored = [(above(similarity(written[j], human[i]), m.level), i, j) for i, j in candidate_pairs(written, human)]
    scored.sort(key=lambda p: (-p[0], p[2], p[1]))  # ties to the earlier written scene
    groups: list[Group] = []
    for sim, i, j in scored:
        if sim > 0 and i not in m.used_h and j not in m.used_w:
            m.used_h[i] = m.used_w[j] = len(groups)
            groups.append(Group((i,), (j,), sim))
    for k in sorted(range(len(groups)), key=lambda k: -groups[k].sim):
        groups[k] = _grow(m, groups[k], k)
    return sorted(groups, key=lambda g: (g.written[0], g.human[0]))


def _grow(m: _Matching, g: Group, k: int) -> Group:
    """Group `k` with one unmatched neighbour added on the side where it says more alike, if any."""
    written, human, level, used_h, used_w = m.written, m.human, m.level, m.used_h, m.used_w
    (i,), (j,) = g.human, g.written
    best = g
    for side, n in (("h", i - 1), ("h", i + 1), ("w", j - 1), ("w", j + 1)):
        taken, count = (used_h, len(human)) if side == "h" else (used_w, len(written))
        if not 0 <= n < count or n in taken:
            continue
        if side == "h":
            hs = tuple(sorted((i, n)))
            sim = above(similarity(written[j], human[hs[0]] + human[hs[1]]), level)
            grown = Group(hs, (j,), sim)
        else:
            ws = tuple(sorted((j, n)))
            sim = above(similarity(written[ws[0]] + written[ws[1]], human[i]), level)
            grown = Group((i,), ws, sim)
        # Only a neighbour the scene really holds: the pair must say more alike than the single
        # scene did, or a short neighbour would be claimed by a scene that only plays its partner.
        if grown.sim > best.sim + 1e-9 and grown.credit > best.credit:
            best = grown
    if best is not g:
        for h in best.human:
            used_h[h] = k
        for w in best.written:
            used_w[w] = k
    return best


def in_order(groups: list[Group]) -> list[Group]:
    """The heaviest chain of groups that runs in the human order (weighted LIS, n log n).

    `groups` is sorted by written position; a chain needs each group's human scenes after
    the previous group's.
    """
    if not groups:
        return []
    size = max(g.human[-1] for g in groups) + 1
    tree: list[tuple[float, int]] = [(0.0, -1)] * (size + 1)  # Fenwick tree by last human scene + 1
    back: list[int] = [-1] * len(groups)
    weight: list[float] = [0.0] * len(groups)
    for k, g in enumerate(groups):
        best, p = (0.0, -1), g.human[0]  # chains whose last human scene is before g's first
        while p > 0:
            if tree[p][0] > best[0]:
                best = tree[p]
            p -= p & -p
        weight[k], back[k] = best[0] + g.credit, best[1]
        p = g.human[-1] + 1
        while p <= size:
            if weight[k] > tree[p][0]:
                tree[p] = (weight[k], k)
            p += p & -p
    k = max(range(len(groups)), key=lambda k: (weight[k], -k))
    chain = []
    while k >= 0:
        chain.append(groups[k])
        k = back[k]
    return chain[::-1]


PLAYED = 0.5  # a scene matched at least this far above chance is played; a weaker match in part


def pairs_in_order(groups: list[Group]) -> float:
    """Pairs of human scenes that the written script plays in the human order.

    Each pair counts by how surely both its scenes are played (a match `PLAYED` above
    chance counts whole, a weaker one in part), so a script of another episode, whose
    scenes match only faintly, cannot earn order by faint matches that happen to be in
    order. Two scenes of one group count as in order (they run in one written scene, or
    one is written as two); a pair with a scene the script lacks is not in order.
    """
    played: dict[int, tuple[int, float]] = {}
    for rank, g in enumerate(groups):  # groups are sorted by written position
        for h in g.human:
            played[h] = (rank, min(1.0, g.sim / PLAYED))
    size = len(groups)
    tree = [0.0] * (size + 1)  # Fenwick tree of the played scenes' weights by written rank
    total = 0.0
    for h in sorted(played):  # earlier human scenes played at or before this one's place
        rank, weight = played[h]
        p, before = rank + 1, 0.0
        while p > 0:
            before += tree[p]
            p -= p & -p
        total += weight * before
        p = rank + 1
        while p <= size:
            tree[p] += weight
            p += p & -p
    return total


LINE_BAND = 12  # lines either side of the diagonal compared within a matched scene
LINE_MIN = 0.2  # below this two lines say different things


def align_lines(human: list[Text], written: list[Text], level: float = 0.0) -> list[tuple[int, int, float]]:
    """(human line, written line, similarity above `level`): each human line with the written line
    saying the same thing.

    One to one, best pairs first, within a band around the diagonal: lines in a scene come
    roughly in order, and the band keeps a scene of thousands of lines linear.
    """
    nh, nw = len(human), len(written)
    if not nh or not nw:
        return []
    scored = []
    for k in range(nh):
        centre = round(k * (nw - 1) / max(1, nh - 1))
        for m in range(max(0, centre - LINE_BAND), min(nw, centre + LINE_BAND + 1)):
            sim = above(similarity(written[m], human[k]), level)
            if sim >= LINE_MIN:
                scored.append((sim, k, m))
    scored.sort(key=lambda p: (-p[0], abs(p[1] - p[2]), p[1]))
    used_h: set[int] = set()
    used_w: set[int] = set()
    pairs = []
    for sim, k, m in scored:
        if k not in used_h and m not in used_w:
            used_h.add(k)
            used_w.add(m)
            pairs.append((k, m, sim))
    return pairs
