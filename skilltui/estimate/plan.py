"""What a run will cost before it runs: calls per role, tokens per call, dollars and wall time.

`skilltui train ... --estimate` asks this module, and a run that starts writes the same
figures to `estimate.json`, so `skilltui runs` can put the forecast next to what was spent.
Nothing here calls a model or writes to the run: the prompts are the engine's own Jinja2
templates rendered with the real stories, human episodes and pool listing, and every size
is counted by `core.tokens` (characters / 3.5), the rule the cache marks and the pool budget
use. The plan follows the loop (`loop.py`): the same steps, works per step and groups.

What cannot be known before the calls is assumed, and the assumptions are constants here
that `--estimate` prints (see `ASSUMED`): how many turns an agent takes and what each turn
adds, how long a judge's report is, how much a micro-step adds to the pool. The writer's
output is the human episodes' length, since it writes the same episodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..agents import pricing
from ..agents.cache_policy import min_cacheable
from ..core.formats import FOLDERS
from ..core.tokens import count_tokens
from ..engine.data.works import Work, covers, load_works, planned_steps
from ..engine.loss.scores import score_step
from ..engine.prompts import Prompts
from ..engine.settings import Settings
from ..engine.stages.batching import make_groups
from ..engine.stages.passes import forward_prompt, note_policy, pool_context, story_lead
from ..pool.notes import Pool
from .power import gate_statement
from .sizes import CallSize, agent_call, text_call, tool_tokens

# What a call adds beyond its prompt, where only a model could say.
TURN_TOKENS = 60  # the words around each tool call: a path, a remark
REPORT_TOKENS = 500  # a judge's loss report, and a reduce's commonality report
NOTE_TOKENS = 250  # what one kept micro-step adds to the pool (one short note)
HEADER_TOKENS = 30  # one note's line in the pool listing: its path and description
OPENAI_MIN_CACHEABLE = 1024  # OpenAI caches a prompt's prefix on its own from this length

ASSUMED = (
    f"the writer reads every note once and writes episodes as long as the human ones, in 3 turns; "
    f"a loss or reduce report is {REPORT_TOKENS} tokens; a backward agent reads its evidence and the "
    f"notes, writes one note of {NOTE_TOKENS} tokens and commits, in 4 turns, and every micro-step is "
    f"kept on the first attempt and changes the notes (so, with --gate, is validated); the gate decides at "
    f"its first look, and a writer that varies pays a fresh pass each side for each kept update and one more "
    f"of the kept notes in place of the pass that chose them; each tool "
    f"call adds {TURN_TOKENS} tokens of output"
)


@dataclass
class RoleEstimate:
    """One role's calls over the run: how many, what each is sent and writes, on which model."""

    role: str
    model: str
    sizes: list[CallSize] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return len(self.sizes)

    def mean(self, name: str) -> int:
        return round(sum(getattr(s, name) for s in self.sizes) / len(self.sizes)) if self.sizes else 0


class Planner:
    """Renders the prompts one run would send and sizes every call of its plan."""

    def __init__(self, settings: Settings, works: list[Work], val_works: list[Work], models: dict[str, str]) -> None:
        self.s = settings
        self.works = works
        self.val_works = val_works
        self.test_works = load_works(settings.test_works) if settings.test_works else []  # checked by open_run
        self.models = models
        self.prompts = Prompts(settings.prompts)
        # Only paths and the listing are read from the pool here, so a pool that does not exist yet will do.
        root = (settings.runs_dir / (settings.run_id or "RUN") / "memory").absolute()
        self.pool_root = root
        self.pool_tokens, self.headers = _start_pool(settings)
        self.roles: dict[str, RoleEstimate] = {}

    def add(self, role: str, size: CallSize) -> None:
        of = {"validation loss": "loss", "validation": "forward", "test": "forward", "consolidate": "backward"}
        model = self.models[of.get(role, role)]
        self.roles.setdefault(role, RoleEstimate(role, model)).sizes.append(size)

    def plan(self) -> dict[str, RoleEstimate]:
        s = self.s
        steps = planned_steps(self.works, s.steps, s.episodes_per_step)
        if self.val_works:
            self._validate()
        self._test(sides=1)  # the start pool, before any update
        for epoch in range(s.epochs):
            for step in range(steps):
                first, last = step * s.episodes_per_step + 1, (step + 1) * s.episodes_per_step
                active = [w for w in self.works if covers(w, first, last)]  # as the loop schedules them
                if not active:
                    break
                for work in active:
                    self._forward(work, epoch, step, first, last, role="forward")
                    self._loss(work, epoch, first, last, validation=False)
                if s.no_backward:
                    continue
                by_name = {w.name: w for w in active}
                for names in make_groups(list(by_name), s.group_size):
                    group = [by_name[n] for n in names]
                    if len(group) > 1:
                        self._reduce(group)
                    # --candidates K: K backward attempts per micro-step, each validated under the gate.
                    for _ in range(s.candidates):
                        self._backward(group, first, last)
                        if s.gate:
                            self._validate()
                    self._record_kept()
                    self._grow()
                # With the gate, the step's point measures the notes its last micro-step left, already measured.
                if self.val_works and not s.gate:
                    self._validate()
            # Every micro-step is assumed to keep a note, so every epoch ends with its consolidation.
            if s.consolidate and not s.no_backward and self.headers:
                for _ in range(s.candidates):  # a consolidation is a micro-step: K candidates too
                    self._consolidate()
                    if s.gate:
                        self._validate()
                self._record_kept()
            if s.test_every == "epoch" or epoch == s.epochs - 1:
                self._test(sides=2)  # the trained pool and the start pool, paired
        return self.roles

    def _grow(self) -> None:
        """A kept micro-step adds a note, up to the budget the commit tool holds the pool to."""
        if self.pool_tokens + NOTE_TOKENS <= self.s.pool_budget:
            self.pool_tokens += NOTE_TOKENS
            self.headers.append((f"{next(iter(FOLDERS))}/note-{len(self.headers) + 1}.md", "x" * (HEADER_TOKENS * 3)))

    def _min(self, role: str) -> int:
        """The model's minimum cacheable prompt: anthropic's by model; OpenAI caches prompts of 1,024
        tokens and more on its own; other backends place no marks of ours."""
        model = self.models["backward" if role == "consolidate" else role]
        backend = self.s.backend_for(role)
        return min_cacheable(model) if backend == "anthropic" else OPENAI_MIN_CACHEABLE if backend == "openai" else 0

    def _system(self, role: str) -> str:
        return self.prompts.render("system", role=role)

    def _base(self, role: str, *texts: str) -> int:
        """An agent call's first input: its system prompt, its texts and its tool definitions."""
        tools = tool_tokens(role, self.s.backend_for(role))
        return count_tokens(self._system(role)) + sum(count_tokens(t) for t in texts) + tools

    def _forward(self, work: Work, epoch: int, step: int, first: int, last: int, *, role: str) -> None:
        """One writer call; `role` forward, validation or test (neither of the last two is cached)."""
        validation = role != "forward"
        root = self.pool_root
        scripts = root.parent / "epoch0" / "step0" / "works" / work.name / "scripts"
        prompt = forward_prompt(self.prompts, work, (first, last), work.story_path, root, scripts)
        lead = story_lead(work.story_path)
        prefix = pool_context(self.prompts, self.headers, root)
        written = sum(count_tokens(work.episode_text(n)) for n in range(first, last + 1))
        turns = [(TURN_TOKENS, self.pool_tokens), (written + TURN_TOKENS, 20), (TURN_TOKENS, 0)]
        base = self._base("forward", prefix, prompt)
        # The story is cached across the steps of a work (cache_policy): later steps read it.
        lead_cached = not validation and (epoch > 0 or step > 0)
        self.add(
            role,
            agent_call(base, count_tokens(lead), lead_cached, turns, self._min("forward")),
        )

    def _loss(self, work: Work, epoch: int, first: int, last: int, *, validation: bool) -> None:
        human = {n: work.episode_text(n) for n in range(first, last + 1)}
        episodes = [{"number": n, "human": human[n], "written": human[n]} for n in sorted(human)]
        scores = score_step(dict(human), human)
        prompt = self.prompts.render("loss", work=work.name, first=first, last=last, scores=scores, episodes=episodes)
        lead = self.prompts.render("loss_targets", work=work.name, first=first, last=last, episodes=episodes)
        base = count_tokens(self._system("loss")) + count_tokens(prompt)
        # The human episodes are cached for an hour for the next epoch's judge, and read there.
        lead_ttl = "1h" if epoch < self.s.epochs - 1 else None
        size = text_call(
            base, count_tokens(lead), REPORT_TOKENS, lead_ttl=lead_ttl, lead_read=epoch > 0, minimum=self._min("loss")
        )
        self.add("validation loss" if validation else "loss", size)

    def _report(self) -> str:
        return "x" * int(REPORT_TOKENS * 3.5) + "\n| part | similarity |\n" * 8

    def _reduce(self, group: list[Work]) -> None:
        reports = {w.name: self._report() for w in group}
        reads = {w.name: [rel for rel, _ in self.headers] for w in group}
        prompt = self.prompts.render("reduce", reports=reports, count=len(reports), reads=reads)
        self.add("reduce", text_call(count_tokens(self._system("reduce")) + count_tokens(prompt), 0, REPORT_TOKENS))

    def _backward(self, group: list[Work], first: int, last: int) -> None:
        root = self.pool_root
        samples = [
            {"work": w.name, "first": first, "last": last, "loss": 0.5, "report": f"{root}/{w.name}.md"}
            | {"scores": f"{root}/{w.name}.json", "reads": f"{root}/{w.name}/reads.json"}
            for w in group
        ]
        prompt = self.prompts.render(
            "backward",
            label="e1 s1 g1 a1",
            pool_dir=str(root),
            summary=f"{root}/summary.md" if len(group) > 1 else None,
            samples=samples,
            commit_subject="train e1 s1 g1 a1",
            reviewer_notes=[],
            failures=[],
            lint_problems=[],
            feedback="(no earlier update)",
            attribution="(no forward pass has been scored yet)",
            max_edit_lines=self.s.max_edit_lines,
            pool_tokens=self.pool_tokens,
            pool_budget=self.s.pool_budget,
        )
        rules = dict(pool_dir=str(root), max_edit_lines=self.s.max_edit_lines, note_policy=note_policy(self.prompts))
        lead = self.prompts.render("backward_rules", **rules)
        prefix = pool_context(self.prompts, self.headers, root, policy=False)
        evidence = REPORT_TOKENS * (len(group) + (len(group) > 1))
        turns = [
            (TURN_TOKENS, evidence),
            (TURN_TOKENS, self.pool_tokens),
            (NOTE_TOKENS + TURN_TOKENS, 20),
            (TURN_TOKENS, 20),
        ]
        base = self._base("backward", prefix, prompt)
        # The rules lead every backward call of the run alike: the first writes them, the rest read.
        self.add(
            "backward", agent_call(base, count_tokens(lead), "backward" in self.roles, turns, self._min("backward"))
        )

    def _consolidate(self) -> None:
        """The epoch's consolidation: the whole pool and every note's figures in its prompt, a few edits, a commit."""
        root = self.pool_root
        shown = [{"path": p, "text": d, "passes": 1, "mean_with": 0.5, "mean_without": 0.5} for p, d in self.headers]
        prompt = self.prompts.render(
            "consolidate",
            label="epoch 1 consolidation",
            pool_dir=str(root),
            notes=shown,
            unread=[],
            pairs=[],
            pool_tokens=self.pool_tokens,
            pool_budget=self.s.pool_budget,
            max_edit_lines=self.s.consolidation_budget,
            commit_subject="train epoch 1 consolidation",
            reviewer_notes=[],
            failures=[],
            lint_problems=[],
            note_policy=note_policy(self.prompts),
        )
        # The notes' whole text goes into the prompt; the listing above stands in for their descriptions.
        prefix = pool_context(self.prompts, self.headers, root, policy=False)
        base = self._base("consolidate", prefix, prompt) + self.pool_tokens
        turns = [(NOTE_TOKENS + TURN_TOKENS, 20), (TURN_TOKENS, 20), (TURN_TOKENS, 20)]
        self.add("consolidate", agent_call(base, 0, False, turns, self._min("consolidate")))

    def _test(self, sides: int) -> None:
        """A test point: --test-repeats passes of each side on every test work, forward only (no judge)."""
        n = self.s.test_episodes or self.s.episodes_per_step
        for _ in range(sides * self.s.test_repeats):
            for work in self.test_works:
                self._forward(work, 0, 0, 1, n, role="test")

    def _record_kept(self) -> None:
        """A kept update's fresh pass on each side (`Validator.record_kept`), unless one pass is exact,
        and the kept tree's pass in place of the one that chose it (`Validator.baseline`).

        Only the offline writer without noise writes the same scripts every time; any other
        writer's kept update is recorded from passes that did not choose it, and as the next
        parent it is measured afresh as often as it was chosen on (once: the first look decides).
        """
        s = self.s
        exact = s.backend == "offline" and s.offline_noise <= 0 and s.offline_noise_call <= 0
        if s.gate and self.val_works and not exact:
            for _ in range(3):
                self._validate()

    def _validate(self) -> None:
        n = self.s.episodes_per_step
        for work in self.val_works:
            self._forward(work, 0, 0, 1, n, role="validation")
            self._loss(work, 0, 1, n, validation=True)


def _start_pool(settings: Settings) -> tuple[int, list[tuple[str, str]]]:
    """The pool's size and listing when training starts: --init-pool's notes, else none."""
    if not settings.init_pool:
        return 0, []
    donor = Pool(settings.init_pool)
    texts = {rel: (donor.root / rel).read_text(encoding="utf-8") for rel in donor.note_paths()}
    return sum(count_tokens(t) for t in texts.values()), list(donor.headers())


ORDER = ("forward", "loss", "reduce", "backward", "consolidate", "validation", "validation loss", "test")
# The roles whose calls --batch sends through the Message Batches API.
BATCHED = ("loss", "reduce")


def forecast(settings: Settings, works: list[Work], val_works: list[Work], models: dict[str, str]) -> dict[str, Any]:
    """The run's estimate as data (what `estimate.json` holds and `--estimate` prints)."""
    roles = Planner(settings, works, val_works, models).plan()
    rows = []
    totals = {"plain": 0.0, "cached": 0.0, "batched": 0.0}
    priced = True
    for name in [r for r in ORDER if r in roles]:
        r = roles[name]
        plain = [x.usd(r.model, caching=False) for x in r.sizes]
        cached = [x.usd(r.model, caching=True) for x in r.sizes]
        batched = [x.usd(r.model, caching=True, batch=name in BATCHED) for x in r.sizes]
        known = all(v is not None for v in plain + cached + batched)
        priced = priced and known
        if known:
            totals["plain"] += sum(v for v in plain if v is not None)
            totals["cached"] += sum(v for v in cached if v is not None)
            totals["batched"] += sum(v for v in batched if v is not None)
        rows.append(
            {
                "role": name,
                "model": r.model,
                "calls": r.calls,
                "input_per_call": r.mean("input_tokens"),
                "output_per_call": r.mean("output_tokens"),
                "seconds": _seconds(settings, name, r),
            }
        )
    usd = totals["batched"] if settings.batch else totals["cached"]
    # --batch is the Message Batches API: a figure for it only when loss and reduce call Anthropic.
    batchable = {settings.backend_for(role) for role in BATCHED} == {"anthropic"}
    return {
        "rows": rows,
        "usd_plain": round(totals["plain"], 6) if priced else None,
        "usd_cached": round(totals["cached"], 6) if priced else None,
        "usd_cached_batched": round(totals["batched"], 6) if priced and batchable else None,
        "unpriced": sorted({roles[n].model for n in ORDER if n in roles and pricing.price_for(roles[n].model) is None}),
        "usd": round(usd, 6) if priced else None,
        "wall_seconds": round(_wall(rows, settings, len(works), len(val_works))),
        "workers": settings.workers,
        "backend": settings.backend,
        "assumed": ASSUMED,
        **({"gate_power": gate_statement(settings, len(val_works))} if settings.gate and val_works else {}),
    }


def _seconds(settings: Settings, role: str, r: RoleEstimate) -> float:
    """A role's calls' time: a model's from its output rate; the offline writer's is its --offline-latency per call."""
    if settings.backend_for(role) == "offline":
        return r.calls * settings.offline_latency
    return sum(x.seconds(r.model) for x in r.sizes)


def _wall(rows: list[dict[str, Any]], settings: Settings, works: int, val_works: int) -> float:
    """Forward and loss run --workers works at once; a step's reduces and micro-steps one after another."""
    seconds = {r["role"]: r["seconds"] for r in rows}
    parallel = max(1, min(settings.workers, works))
    val_parallel = max(1, min(settings.workers, val_works))
    return (
        (seconds.get("forward", 0) + seconds.get("loss", 0)) / parallel
        + seconds.get("reduce", 0)
        + seconds.get("backward", 0)
        + seconds.get("consolidate", 0)
        + (seconds.get("validation", 0) + seconds.get("validation loss", 0)) / val_parallel
        + seconds.get("test", 0) / max(1, min(settings.workers, len(settings.test_works)))
    )


def check_inputs(settings: Settings) -> tuple[list[Work], list[Work]]:
    """The works and validation works, checked as `open_run` checks them; writes nothing."""
    from ..engine.data.test_works import load_test_works
    from ..engine.data.works import load_works
    from ..engine.opening import load_val_works

    settings.check()
    works = load_works(settings.works)
    val_works = load_val_works(settings.val_works, works, settings.episodes_per_step)
    load_test_works(settings, works + val_works)  # bad test input is refused here as by open_run
    settings.check_works(works)
    Prompts(settings.prompts).check()
    return works, val_works


def estimate_run(settings: Settings, backend_model: str | None) -> dict[str, Any]:
    """The forecast of a run from its settings alone: checks the inputs as `open_run` does, writes nothing."""
    works, val_works = check_inputs(settings)
    return forecast(settings, works, val_works, settings.models_by_role(backend_model))
