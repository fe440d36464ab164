"""Every setting of a training run, declared once, by task: its default, its flag, its help, its bound.

`Settings` (settings.py) is these fields and what is done with them. Each field carries a
`Flag` in its metadata, plain data with no argparse in it: the command line builds `train`'s
flags from it (commands/settings_flags.py), one argument group per task, so the flag, its
default, its help and its check cannot drift apart. A help text says `{default}` where the
default goes, filled from the field itself, so what `--help` shows is what the engine uses.
`Settings.check` refuses a value outside a field's bound with `FLAG PROBLEM`, one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..agents import backend_arg, default_backend
from ..core.flags import at_least, positive, setting, within
from .data.works import DEFAULT_MAX_SCRIPT_KB

# The tasks a person is deciding when they reach for a flag, in the order `train --help` lists them.
GROUPS = {
    "data": "what trains",
    "model": "who plays the agents",
    "training": "the loop and the backward pass",
    "validation": "held-out works and the gate",
    "test": "works nothing else sees, for the final figure",
    "review": "who decides",
    "cost": "before and while it runs",
    "tracking": "where the run is kept and logged",
}

# The default bound on lines one micro-step may add plus remove: two full notes' worth.
DEFAULT_MAX_EDIT_LINES = 80
# The default bound on the pool's size in tokens (core.tokens): what a writer can still read whole.
DEFAULT_POOL_BUDGET = 4000
# Each candidate is a whole backward call and a working copy of the pool, and a person
# weighs them side by side: past 16 a round costs more than any review can use.
MAX_CANDIDATES = 16
# 5, not 3: with the futility stop five looks cost about the calls three did, and keep far more (gate-statistics.md).
GATE_MAX_REPEATS = 5
LEGACY_GATE_MAX_REPEATS = 3  # what gated runs started before recorded; they resume with it
# What a consolidation may cost in validation loss and still be kept (docs/gate-statistics.md says why).
DEFAULT_MARGIN = 0.01


AT_LEAST_1 = {"bound": at_least(1), "problem": "must be at least 1"}
SECONDS = {"metavar": "S", "bound": positive, "problem": "must be a positive number of seconds"}


@dataclass
class Fields:
    """The settings' fields, grouped by task; `Settings` adds what is done with them."""

    # -- data: what trains
    works: list[Path] = setting(
        group="data", name="--work", metavar="DIR", help="a work folder; repeat for several works"
    )
    episodes_per_step: int = setting(
        2, group="data", help="episodes each step covers (default {default})", **AT_LEAST_1
    )
    max_script_kb: int = setting(
        DEFAULT_MAX_SCRIPT_KB,
        group="data",
        metavar="KB",
        help="refuse a human episode bigger than this when the work is opened (default {default}; "
        "a feature film is ~120)",
        **AT_LEAST_1,
    )
    init_pool: Path | None = setting(
        None,
        group="data",
        metavar="DIR",
        help="start from a copy of a trained pool; with --no-backward this is the control arm",
    )
    prompts: Path | None = setting(None, group="data", metavar="DIR", help="a folder of your own prompt templates")

    # -- model: who plays the agents
    backend: str = setting(
        "offline",
        group="model",
        metavar="BACKEND",
        parse=backend_arg,
        default_from=default_backend,
        help="who plays the agents: offline (no network; the default without ANTHROPIC_API_KEY), "
        "anthropic (the default with a key), claude-code (optional extra), codex (the Codex CLI, OPENAI_API_KEY), "
        "mailbox:DIR (a person or another agent answers each call through the folder DIR; see `skilltui mailbox`)",
    )
    model: str | None = setting(None, group="model", help="model for every role (e.g. claude-sonnet-5-5)")
    role_models: dict[str, str] = setting(
        factory=dict,
        group="model",
        name="--role-model",
        metavar="ROLE=[BACKEND:]MODEL",
        help="a model for one role (forward or writer, loss or judge, reduce, backward, consolidate), on the run's "
        "backend or another: loss=claude-haiku-5-5, writer=openai:llama3 (repeatable)",
    )
    role_backends: dict[str, str] = setting(factory=dict, group="model", filled_by="--role-model")
    # The openai backend's server: how a run reaches it, not what it computes.
    base_url: str | None = setting(
        None,
        group="model",
        metavar="URL",
        help="--backend openai: an OpenAI-compatible server (vLLM, Ollama, LM Studio, OpenRouter), e.g. "
        "http://localhost:11434/v1; default $OPENAI_BASE_URL, else OpenAI's",
    )
    # Per-role call timeouts in seconds (the seeds' defaults); reduce shares the loss bound.
    forward_timeout: float = setting(
        2400.0, group="model", help="seconds one writer call may take (default {default:g})", **SECONDS
    )
    loss_timeout: float = setting(
        1800.0, group="model", help="seconds one judge or reduce call may take (default {default:g})", **SECONDS
    )
    backward_timeout: float = setting(
        5400.0, group="model", help="seconds one backward call may take (default {default:g})", **SECONDS
    )
    offline_latency: float = setting(
        0.0,
        group="model",
        metavar="S",
        help="seconds each offline call takes, streamed gradually (default {default:g})",
        bound=at_least(0),
        problem="must be 0 or more seconds",
    )
    offline_noise: float = setting(
        0.0,
        group="model",
        metavar="P",
        help="the offline writer garbles a share P of its paragraphs (dropped, cut short, cue lost), drawn "
        "per call from a generator seeded by the run and the call, so passes differ (default {default:g}: "
        "deterministic)",
        bound=within(0, 1),
        problem="must be between 0 (a deterministic writer) and 1 (every paragraph)",
    )
    offline_noise_call: float = setting(
        0.0,
        group="model",
        metavar="P",
        help="with chance P a whole writing call of the offline writer ignores the notes it read, so the "
        "episodes of one pass move together (seeded per call; default {default:g})",
        bound=within(0, 1),
        problem="must be between 0 (no bad calls) and 1 (every call skims)",
    )

    # -- training: the loop and the backward pass
    steps: int = setting(3, group="training", help="steps per epoch (default {default})", **AT_LEAST_1)
    epochs: int = setting(1, group="training", help="passes over the works (default {default})", **AT_LEAST_1)
    workers: int = setting(
        4, group="training", help="works running forward+loss at once (default {default})", **AT_LEAST_1
    )
    group_size: int = setting(
        4,
        group="training",
        help="works per backward micro-step (default {default}); 0 puts every work in one group",
        bound=at_least(0),
        problem="must be 0 (every work in one group) or more",
    )
    no_backward: bool = setting(False, group="training", help="freeze the pool: no backward pass, no updates")
    judge_weight: float = setting(
        0.0,
        group="training",
        metavar="W",
        help="blend the judge's rubric (scene purpose, voice, visual action, structure) into the loss: "
        "(1-W) * engine loss + W * rubric loss; default {default:g}, the engine's loss alone. A missing or "
        "malformed rubric falls back to the engine's loss and is recorded",
        bound=within(0, 1),
        problem="must be between 0 (the engine's loss alone) and 1 (the rubric's alone)",
    )
    backward_retries: int = setting(
        2,
        group="training",
        metavar="N",
        help="new attempts, each from the reset pool and told what went wrong, after a backward attempt "
        "fails its checks (default {default}); then the group's update is skipped",
        bound=at_least(0),
        problem="must be 0 (no retry) or more",
    )
    # Backward attempts per micro-step from the same parent; the reviewer keeps one or none.
    candidates: int = setting(
        1,
        group="training",
        metavar="K",
        help="backward attempts per micro-step, all from the same parent, run at once (default {default}); with "
        "--gate each is validated and the automatic reviewer keeps the best the gate would keep, or none",
        bound=lambda v: isinstance(v, int) and 1 <= v <= MAX_CANDIDATES,
        problem=f"takes a whole number from 1 to {MAX_CANDIDATES} (backward attempts per micro-step; each is a "
        "full backward call and a working copy of the pool, and more than a reviewer can weigh side by side)",
    )
    strict: bool = setting(
        False,
        group="training",
        help="stop the run when a micro-step fails every attempt, instead of skipping its update",
    )
    max_edit_lines: int = setting(
        DEFAULT_MAX_EDIT_LINES,
        group="training",
        metavar="N",
        help="the learning rate: lines one micro-step may add plus remove in the notes (default {default}); "
        "the commit tool refuses a bigger change",
        bound=at_least(1),
        problem="must be at least 1 (lines one micro-step may add and remove)",
    )
    pool_budget: float = setting(
        DEFAULT_POOL_BUDGET,
        group="training",
        metavar="TOKENS",
        help="the most tokens the notes may come to (characters / 3.5, as prompts are sized; default {default:g}); "
        "the commit tool refuses a backward commit that takes the pool over it",
        bound=at_least(1),
        problem=f"must be a positive number of tokens (default {DEFAULT_POOL_BUDGET})",
    )
    # An epoch that kept an update ends with a consolidation micro-step (consolidation.py).
    consolidate: bool = setting(
        True,
        group="training",
        help="end every epoch that kept an update with a consolidation micro-step that merges, prunes and "
        "shortens notes (default on; --no-consolidate skips it)",
    )
    consolidate_edit_lines: int | None = setting(  # None: 4 x --max-edit-lines
        None,
        group="training",
        metavar="N",
        help="a consolidation's edit budget (4x max)",
        bound=at_least(1),
        problem="must be at least 1 (lines a consolidation may add and remove)",
    )

    # -- validation: held-out works and the gate
    val_works: list[Path] = setting(
        factory=list,
        group="validation",
        name="--val-work",
        metavar="DIR",
        help="a held-out work (repeatable): after every step the pool runs forward and loss on its first "
        "--episodes-per-step episodes (always the same ones), never backward; its material stays in the run's "
        "val/ folder, out of the backward pass's reach",
    )
    val_repeats: int = setting(
        1,
        group="validation",
        metavar="R",
        help="passes over the validation works per measurement (default {default}); each pass is a new sample "
        "of the same notes, and a tree's figure is their mean",
        bound=at_least(1),
        problem="must be at least 1 (passes over the validation works per measurement)",
    )
    val_episodes: int | None = setting(
        None,
        group="validation",
        metavar="N",
        help="validate on episodes 1..N of every validation work (default: --episodes-per-step); more "
        "episodes give the gate more paired samples per pass",
        bound=at_least(1),
        problem="must be at least 1 (episodes of each validation work per pass)",
    )
    gate: bool = setting(
        False,
        group="validation",
        help="validate right after each micro-step and compare it with its parent, episode by episode; the "
        "automatic reviewer keeps it only when the interval on the mean change in validation loss is below "
        "zero (in the app you see the figures and decide); needs --val-work",
    )
    gate_confidence: float = setting(
        0.9,
        group="validation",
        metavar="C",
        help="the confidence of the gate's interval (default {default:g}: a {default:.0%} interval); higher keeps "
        "fewer updates",
        bound=within(0.5, 1, below=True),
        problem="must be at least 0.5 and below 1, e.g. 0.9 for a 90% interval",
    )
    # Checked against --val-repeats in Settings.check, and only with --gate (without it no pass is added).
    # None: GATE_MAX_REPEATS, or LEGACY_GATE_MAX_REPEATS for a run started before (engine/opening.py).
    gate_max_repeats: int | None = setting(
        None,
        group="validation",
        metavar="N",
        help=f"while the interval straddles zero the gate adds a pass on both sides, up to N passes each "
        f"(unless given, {GATE_MAX_REPEATS}; a run started when the default was {LEGACY_GATE_MAX_REPEATS} keeps it); "
        "each pass costs a validation forward and loss per validation work",
    )
    consolidate_margin: float = setting(
        DEFAULT_MARGIN,
        group="validation",
        metavar="M",
        help="a consolidation is kept only when the upper end of the gate's interval on its change in "
        "validation loss is below +M (default {default:g}; docs/gate-statistics.md)",
        bound=within(0, 1, below=True),
        problem="must be at least 0 and below 1 (a loss it may cost), e.g. 0.01",
    )
    # Removed: the interval rule replaced it. Kept as a field only to refuse it with a pointer.
    gate_tolerance: float | None = setting(
        None,
        group="validation",
        metavar="X",
        help="removed: the gate now keeps an update only when its interval is below zero (see --gate-confidence)",
        bound=lambda v: False,
        problem="is gone: the gate keeps an update only when its interval is below zero; "
        "set how sure it must be with --gate-confidence C (default 0.9)",
    )

    # -- test: works only the writer's forward pass ever sees (docs/test-split.md)
    test_works: list[Path] = setting(
        factory=list,
        group="test",
        name="--test-work",
        metavar="DIR",
        help="a test work (repeatable): written forward with the start pool and the trained pool, paired, before "
        "the first update and after every epoch; scored by the engine alone, seen by no other prompt and not by "
        "the gate",
    )
    test_episodes: int | None = setting(  # None: --episodes-per-step
        None,
        group="test",
        metavar="N",
        help="episodes 1..N of every test work (default --episodes-per-step)",
        bound=at_least(1),
        problem="must be at least 1 (episodes of each test work per pass)",
    )
    test_repeats: int = setting(
        2,
        group="test",
        metavar="R",
        help="passes per pool at each test point (default {default})",
        bound=at_least(1),
        problem="must be at least 1 (passes per pool at each test point)",
    )
    test_every: str = setting(
        "epoch",
        group="test",
        choices=("epoch", "end"),
        help="a test point after every epoch (default) or only after the last",
    )

    # -- review: who decides
    auto: bool = setting(
        False,
        group="review",
        help="headless: approve every update automatically (with --gate: roll back what the gate rejects)",
    )

    # -- cost: before and while it runs
    max_cost: float | None = setting(
        None,
        group="cost",
        metavar="USD",
        help="stop before the next stage once the run has spent this much; resumable",
        bound=positive,
        problem="must be a positive number of US dollars",
    )
    # How a run is paid for, not what it computes, so a run may resume with or without it.
    batch: bool = setting(
        False,
        group="cost",
        help="send each step's loss-judge calls, and its reduce calls, as one Message Batch at half price "
        "(--backend anthropic; slower: for runs nobody watches). A killed run resumes polling the same batch",
    )

    # -- tracking: where the run is kept and logged
    runs_dir: Path = setting(Path("runs"), group="tracking", help="where runs are kept (default ./{default})")
    run_id: str | None = setting(
        None, group="tracking", help="the run folder's name (default: derived from the settings)"
    )
