"""Benchmark: what prompt caching saves on one epoch of the bundled works, role by role.

Drives `skilltui diffuse` and `skilltui train --backend anthropic` on the three bundled
works (the demo's settings: 3 steps of 2 episodes, groups of 2) through the real
`anthropic` SDK against `tests/support/fakeapi.py`, whose prompt cache follows the API's rules
(prefix match up to a mark, the model's minimum cacheable length, a 5-minute life). A
scripted model plays every role the way a tool-using model would: the writer views the
story and a few notes and writes one episode per turn; the judge and the reducer answer
in prose; the optimizer reads the reports, edits a note and commits.

Per role it prints, from the usage the server billed:

- `read`: the share of input tokens read from the cache;
- `unread`: the share of tokens written to the cache that no later request read;
- `$ vs none`: the dollars paid against the same requests with no cache marks at all
  (every prompt token at the plain input price), both priced from the same run.

Targets over the training epoch: read >= 75%, unread <= 10%. Diffuse runs before the
epoch and is shown on its own line.

    python bench/bench_cache.py [--min-tokens 1024]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import tempfile
from collections import defaultdict
from importlib import resources
from pathlib import Path

from skilltui.agents import pricing
from skilltui.agents.base import Usage
from skilltui.cli import main as skilltui
from skilltui.engine.data.diffuse import noise_episode
from tests.support.fakeapi import FakeAnthropic, Recorded, Reply, text, tool_use

KEY = "sk-ant-bench-cache-0000000000"
EDITOR = "str_replace_based_edit_tool"
MODEL = "claude-sonnet-5-5"
ROLES = ("diffuse", "forward", "loss", "reduce", "backward")


def role_of(r: Recorded) -> str:
    system = json.dumps(r.body.get("system", ""))
    for role in ROLES:
        if f"You are the {role} agent" in system:
            return role
    return "diffuse" if "# Retell episode" in r.all_text else "other"


def turns(r: Recorded) -> int:
    return sum(1 for m in r.body.get("messages", []) if m.get("role") == "assistant")


def edit(command: str, **args: object) -> dict:
    return tool_use(EDITOR, {"command": command, **args})


class Model:
    """Plays every role from what the prompt says, like the model would have to."""

    def __init__(self, works: Path) -> None:
        self.works = works

    def __call__(self, r: Recorded) -> Reply:
        role = role_of(r)
        return getattr(self, role)(r) if role in ROLES else Reply([text("ok")])

    def diffuse(self, r: Recorded) -> Reply:
        episode = re.search(r"```fountain\n(.*?)```", r.all_text, re.S).group(1)
        import random

        return Reply([text(noise_episode(episode, random.Random(len(episode)), 0.3))])

    def forward(self, r: Recorded) -> Reply:
        """View the story (unless the prompt holds it), then up to three notes one by one, then
        write one episode per turn, then report."""
        opening = r.all_text
        first, last = map(int, re.search(r"# Write episodes (\d+) to (\d+)", opening).groups())
        story = re.search(r"The story: `([^`]+)`", opening).group(1)
        scripts = re.search(r"Write each episode to `([^`]+)/NN\.fountain`", opening).group(1)
        pool = re.search(r"The craft notes \(the pool, listed above\): `([^`]+)`", opening).group(1)
        notes = re.findall(r"^- ([a-z]+/[a-z0-9-]+\.md):", opening, re.M)[:3]
        plan: list[dict] = [] if "# The story\n" in opening else [edit("view", path=story)]
        plan += [edit("view", path=f"{pool}/{note}") for note in notes]
        work = Path(story).stem
        for episode in range(first, last + 1):
            human = (self.works / work / "human" / f"{episode:02d}.fountain").read_text()
            plan.append(edit("create", path=f"{scripts}/{episode:02d}.fountain", file_text=human))
        n = turns(r)
        if n < len(plan):
            return Reply([plan[n]])
        return Reply([text(f"I wrote episodes {first} to {last}, scene by scene from the story.")])

    def loss(self, r: Recorded) -> Reply:
        return Reply(
            [
                text(
                    "## What went wrong\n\n" + "The written episode loses the subtext of the human "
                    "one: lines are said outright where the original lets a look carry them. " * 6
                )
            ]
        )

    def reduce(self, r: Recorded) -> Reply:
        return Reply(
            [
                text(
                    "## Common to every work\n\n" + "Dialogue states what the human scripts imply; "
                    "scene headings drift from the story's places. " * 6
                )
            ]
        )

    def backward(self, r: Recorded) -> Reply:
        """Read the summary and each report one by one, open a note, write one, commit, report."""
        opening = r.all_text
        evidence = re.findall(r"Commonality report for this micro-step: `([^`]+)`", opening)
        evidence += re.findall(r"loss report `([^`]+)`", opening)
        notes = re.findall(r"^- ([a-z]+/[a-z0-9-]+\.md):", opening, re.M)[:1]
        label = re.search(r"epoch (\d+) step (\d+).*?(\d+)", opening)
        name = f"dialogue/subtext-{'-'.join(label.groups()) if label else 'x'}.md"
        note = (
            "---\ndescription: Let a look or an action carry what a line would say outright.\n---\n"
            "## Guidance\n\nWhen a character would state a feeling, cut the line and give the actor "
            "something to do instead. Keep the line only if the scene fails without it.\n"
        )
        plan = [edit("view", path=p) for p in evidence] + [edit("view", path=p) for p in notes]
        plan += [
            edit("create", path=name, file_text=note),
            tool_use("commit", {"message": "Add a subtext note: every work said too much."}),
        ]
        n = turns(r)
        if n < len(plan):
            return Reply([plan[n]])
        return Reply([text("Committed one note about subtext.")])


def measure(min_tokens: int, keep: Path | None) -> dict[str, dict[str, float]]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    try:
        works = tmp / "works"
        examples = Path(str(resources.files("skilltui") / "examples"))
        names = sorted(p.name for p in examples.iterdir() if (p / "human").is_dir())
        for name in names:
            shutil.copytree(examples / name, works / name)
        with FakeAnthropic(Model(works), min_cache_tokens={"*": min_tokens}) as fake:
            os.environ["ANTHROPIC_API_KEY"] = KEY
            os.environ["ANTHROPIC_BASE_URL"] = fake.base_url
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                for name in names:
                    if (
                        skilltui(["diffuse", "--work", str(works / name), "--backend", "anthropic", "--model", MODEL])
                        != 0
                    ):
                        raise SystemExit(f"diffuse failed for {name}")
                argv = [
                    "train",
                    "--auto",
                    "--backend",
                    "anthropic",
                    "--model",
                    MODEL,
                    "--runs-dir",
                    str(tmp / "runs"),
                    "--run-id",
                    "bench",
                    "--steps",
                    "3",
                    "--episodes-per-step",
                    "2",
                    "--group-size",
                    "2",
                    "--workers",
                    "3",
                ]
                for name in names:
                    argv += ["--work", str(works / name)]
                code = skilltui(argv)
            if code != 0:
                raise SystemExit(f"training failed with exit code {code}; see {tmp}")
            if fake.failures:
                raise SystemExit(f"fake server: {fake.failures}")
            return tally(fake)
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


def tally(fake: FakeAnthropic) -> dict[str, dict[str, float]]:
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for index, usage in fake.usage_by_request.items():
        role = role_of(fake.requests[index])
        s = sums[role]
        w1h = (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
        billed = Usage(
            usage["input_tokens"],
            usage["output_tokens"],
            usage["cache_creation_input_tokens"],
            usage["cache_read_input_tokens"],
        )
        w5m = Usage(
            billed.input_tokens, billed.output_tokens, billed.cache_write_tokens - w1h, billed.cache_read_tokens
        )
        h1 = Usage(0, 0, w1h, 0)
        plain = Usage(billed.input_tokens + billed.cache_write_tokens + billed.cache_read_tokens, billed.output_tokens)
        s["requests"] += 1
        s["input"] += plain.input_tokens
        s["read"] += billed.cache_read_tokens
        s["written"] += billed.cache_write_tokens
        s["cost"] += (
            pricing.cost_usd(MODEL, w5m)
            + pricing.cost_usd(MODEL, h1, cache_ttl="1h")
            - pricing.cost_usd(MODEL, Usage())
        )
        s["cost_none"] += pricing.cost_usd(MODEL, plain)
    for write in fake.cache.writes:
        if not write.read:
            sums[role_of(fake.requests[write.request])]["unread"] += write.tokens
    return sums


def line(name: str, s: dict[str, float]) -> str:
    read = s["read"] / s["input"] if s["input"] else 0.0
    unread = s["unread"] / s["written"] if s["written"] else 0.0
    ratio = s["cost"] / s["cost_none"] if s["cost_none"] else 1.0
    return (
        f"{name:9} {int(s['requests']):>5} {int(s['input']):>9,} {read:>7.1%} {int(s['written']):>9,} "
        f"{unread:>7.1%} {s['cost']:>10.4f} {s['cost_none']:>10.4f} {ratio:>8.2f}x"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--min-tokens",
        type=int,
        default=1024,
        help="the model's minimum cacheable length the server applies (Sonnet 5.5: 1024)",
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the run folder (prints where)")
    args = parser.parse_args()
    sums = measure(args.min_tokens, args.keep)
    print(f"one epoch of the bundled works, {MODEL}, minimum cacheable length {args.min_tokens} tokens")
    print(
        f"{'role':9} {'calls':>5} {'input':>9} {'read':>7} {'written':>9} {'unread':>7} "
        f"{'$ paid':>10} {'$ no marks':>10} {'ratio':>9}"
    )
    epoch: dict[str, float] = defaultdict(float)
    for role in ROLES:
        if role in sums:
            print(line(role, sums[role]))
            if role != "diffuse":
                for k, v in sums[role].items():
                    epoch[k] += v
    print(line("epoch", epoch))
    read = epoch["read"] / epoch["input"] if epoch["input"] else 0.0
    unread = epoch["unread"] / epoch["written"] if epoch["written"] else 0.0
    print(
        f"targets: read >= 75% ({'met' if read >= 0.75 else 'MISSED'}), "
        f"unread <= 10% ({'met' if unread <= 0.10 else 'MISSED'})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
