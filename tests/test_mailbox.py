"""`--backend mailbox:DIR`: calls answered through a folder, by `skilltui mailbox serve` in a second process or by hand.

The end-to-end tests run the training and the server as two processes and compare the
pool with the offline backend's run directly; the rest drive `MailboxBackend` in-process
with a sandbox from the `roots` fixture, and answer with `skilltui mailbox answer` (the
command a person uses) or by writing the files. Every wait is on a file appearing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from skilltui.agents.base import BackendError, Request
from skilltui.agents.mailbox import MailboxBackend
from skilltui.agents.mailbox_serve import serve
from skilltui.agents.tools import Sandbox, ToolError
from skilltui.cli import main
from skilltui.engine.data.diffuse import noise_work
from skilltui.engine.data.works import load_work
from skilltui.pool.repo import open_repo
from skilltui.store.run_folder import write_atomic
from tests.support.recorded import recorded
from tests.support.works import NAMES


def train_argv(runs: Path, run_id: str, works: list[Path], backend: str, *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "skilltui", "train", "--auto", "--runs-dir", str(runs), "--run-id", run_id]
    argv += ["--steps", "2", "--group-size", "1", "--backend", backend, *extra]
    for work in works:
        argv += ["--work", str(work)]
    return argv


def start_server(box: Path, log: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", "skilltui", "mailbox", "serve", str(box), "--backend", "offline"]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(log, "ab"))  # noqa: SIM115


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_for(condition: Callable[[], object], what: str, seconds: float = 120) -> object:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def pool_state(run: Path) -> tuple[list[tuple[str, str]], dict[str, bytes]]:
    """Every commit's tree and whole message, and the notes' bytes: what 'the same pool' means."""
    repo = open_repo(run / "memory")
    notes = {
        str(p.relative_to(run / "memory")): p.read_bytes()
        for p in sorted((run / "memory").rglob("*.md"))
        if ".git" not in p.parts
    }
    commits = [(c.tree.hexsha, str(c.message)) for c in repo.iter_commits()]
    return commits, notes


def leaking_work(make_work: Callable[..., Path], name: str) -> Path:
    """A work whose cast is MARA, the name the offline optimizer's notes use as their first example.

    Its first note is refused by the commit tool as a leak, and the optimizer, which tells a
    leak by the refusal's code, commits it again with other invented examples.
    """
    folder = make_work(name, 4, story=False)
    for episode in (folder / "human").glob("*.fountain"):
        text = episode.read_text()
        for cast in NAMES:
            text = re.sub(rf"\b{cast}\b", "MARA", text)
        episode.write_text(text)
    work = load_work(folder)
    write_atomic(work.story_path, noise_work(work, seed=0, noise=0.3))
    return folder


def tools_used(run: Path) -> Counter[tuple[str, str, str, str | None]]:
    """Each tool call the run reported: its role, tool, path (inside the run, as the run's own) and error."""
    calls = [e for e in recorded(run / "events.jsonl") if e["kind"] == "tool"]
    return Counter((e["role"], e["tool"], e["path"].replace(f"{run}/", "RUN/"), e["error"]) for e in calls)


def event_kinds(run: Path) -> list[str]:
    return sorted(e["kind"] for e in recorded(run / "events.jsonl") if e["kind"] not in ("delta",))


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_run_served_by_the_offline_backend_ends_with_the_offline_pool(make_work, tmp_path: Path) -> None:
    works = [make_work("sable-quay", 4), leaking_work(make_work, "tin-orchard")]
    gated = ("--val-work", str(make_work("held-out", 4)), "--gate")  # the gate asks if the writer is deterministic
    runs, box = tmp_path / "runs", tmp_path / "box"
    box.mkdir()
    direct = subprocess.run(train_argv(runs, "direct", works, "offline", *gated), capture_output=True, text=True)
    assert direct.returncode == 0, direct.stderr
    server = start_server(box, tmp_path / "serve.log")
    try:
        wait_for(lambda: list((box / "serving").glob("*.json")), "the server's word that it serves")
        mailed = subprocess.run(
            train_argv(runs, "mailed", works, f"mailbox:{box}", *gated), capture_output=True, text=True, timeout=600
        )
    finally:
        stop(server)
    assert mailed.returncode == 0, mailed.stderr
    assert pool_state(runs / "mailed") == pool_state(runs / "direct")
    assert pool_state(runs / "mailed")[1], "the run added notes"
    refused = [e for e in recorded(runs / "mailed" / "events.jsonl") if e["kind"] == "tool" and e["error"]]
    assert any("names the speaking character 'MARA'" in e["error"] for e in refused), "a leak was refused"
    assert "TOVE" in pool_state(runs / "mailed")[1]["dialogue/dialogue-blocks.md"].decode(), "and fixed"
    assert event_kinds(runs / "mailed") == event_kinds(runs / "direct")
    assert tools_used(runs / "mailed") == tools_used(runs / "direct") and tools_used(runs / "direct")
    # Every call was answered and taken: nothing waits, nothing was discarded.
    assert not list((box / "requests").iterdir()) and not list((box / "discarded").iterdir())
    assert len(list((box / "done").glob("*.request.json"))) == len(list((box / "done").glob("*.answer.json"))) > 0


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_killed_run_resumes_waiting_on_the_same_request(make_work, tmp_path: Path) -> None:
    works = [make_work("sable-quay", 4)]
    runs, box = tmp_path / "runs", tmp_path / "box"
    box.mkdir()
    argv = train_argv(runs, "r", works, f"mailbox:{box}")
    first = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        asked = wait_for(lambda: sorted((box / "requests").glob("*.json")), "the first request")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    (request,) = asked
    before = (request.read_bytes(), request.stat().st_mtime_ns, request.stat().st_ino)
    log = tmp_path / "again.log"
    again = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(log, "w"))  # noqa: SIM115
    server = None
    try:
        wait_for(lambda: f"waiting again on request {request.stem}" in log.read_text(), "the resumed run's wait")
        assert sorted((box / "requests").glob("*.json")) == [request]
        assert (request.read_bytes(), request.stat().st_mtime_ns, request.stat().st_ino) == before
        server = start_server(box, tmp_path / "serve.log")
        again.wait(timeout=600)
    finally:
        for process in (again, server):
            if process is not None:
                stop(process)
    assert again.returncode == 0, log.read_text()
    assert (box / "done" / f"{request.stem}.request.json").read_bytes() == before[0]


# -- one call, in process ---------------------------------------------------------------------


def agent_sandbox(roots: dict[str, Path]) -> Sandbox:
    return Sandbox(
        read_roots=[roots["pool"], roots["work"]],
        write_roots=[roots["scripts"]],
        denied=[roots["work"] / "human"],
        traced=roots["pool"],
        base=roots["pool"],
    )


def answer_cli(box: Path, rid: str, *args: str) -> int:
    return main(["mailbox", "answer", str(box), rid, *args])


def waiting(box: Path) -> str:
    """The id of the one request that waits (once it is written)."""
    return wait_for(lambda: [p.stem for p in (box / "requests").glob("*.json")], "a request")[0]  # type: ignore[index]


async def in_thread(fn: Callable[[], object]) -> object:
    return await asyncio.to_thread(fn)


async def test_a_person_answers_and_edits_go_through_the_sandbox(tmp_path: Path, roots: dict[str, Path]) -> None:
    box = tmp_path / "box"
    box.mkdir()
    backend = MailboxBackend(f"mailbox:{box}")
    tools: list[tuple[str, str, str | None]] = []
    sandbox = agent_sandbox(roots)
    answer = tmp_path / "answer.json"
    secret = roots["work"] / "human" / "01.fountain"
    edits = [
        {"command": "view", "path": "dialogue/subtext.md"},
        {"command": "create", "path": str(roots["scripts"] / "01.fountain"), "file_text": "INT. DOCK - DAY\n"},
        {"command": "create", "path": str(secret), "file_text": "overwritten"},
    ]
    answer.write_text(json.dumps({"text": "wrote episode 1", "edits": edits}))

    def person() -> int:
        return answer_cli(box, waiting(box), "--file", str(answer))

    request = Request(role="forward", prompt="Write episode 1.", on_tool=lambda *a: tools.append(a))
    result, code = await asyncio.gather(backend.agent(request, sandbox), in_thread(person))
    assert code == 0 and result.text == "wrote episode 1"
    assert (roots["scripts"] / "01.fountain").read_text() == "INT. DOCK - DAY\n"
    assert secret.read_text() == "SECRET TARGET\n"
    assert [(t, e is None) for t, _, e in tools] == [("view", True), ("create", True), ("create", False)]
    assert sandbox.reads == ["dialogue/subtext.md"]
    assert result.cost_usd is None  # a person's answer has no price


async def test_a_served_agent_is_refused_what_the_runs_sandbox_refuses(tmp_path: Path, roots: dict[str, Path]) -> None:
    box = tmp_path / "box"
    box.mkdir()
    secret = str(roots["work"] / "human" / "01.fountain")
    seen: dict[str, object] = {}

    class Peeker:
        name, model, deterministic = "peeker", "peek", False

        async def agent(self, request: Request, sandbox: Sandbox):
            def work() -> None:
                try:
                    sandbox.read_text(secret)
                except ToolError as exc:
                    seen["refused"] = str(exc)
                seen["story"] = sandbox.read_text(str(roots["work"] / "story.md"))
                sandbox.run("create", {"path": str(roots["scripts"] / "01.fountain"), "file_text": "EXT. SEA\n"})

            await asyncio.to_thread(work)
            from skilltui.agents.base import CallResult

            return CallResult(text="done", cost_usd=0.5)

    sandbox = agent_sandbox(roots)
    server = asyncio.create_task(serve(MailboxBackend(f"mailbox:{box}").box, Peeker(), count=1, say=lambda line: None))
    result = await MailboxBackend(f"mailbox:{box}").agent(Request(role="forward", prompt="Write."), sandbox)
    await server
    assert "off-limits" in str(seen["refused"]) and seen["story"] == "A story.\n"
    assert (roots["scripts"] / "01.fountain").read_text() == "EXT. SEA\n"
    assert result.text == "done" and result.cost_usd == 0.5


async def test_old_unknown_and_broken_answers_are_set_aside_with_one_line(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    lines: list[str] = []
    backend = MailboxBackend(f"mailbox:{box}", say=lines.append)
    (box / "answers" / "loss-0000000000000000-1.json").write_text(json.dumps({"id": "loss-0000000000000000-1"}))

    def person() -> None:
        rid = waiting(box)
        (box / "answers" / f"{rid}.json").write_text("{not json")
        wait_for(lambda: len(lines) == 2, "the broken answer's line")
        assert answer_cli(box, rid, "--text", "the report") == 0

    result, _ = await asyncio.gather(backend.text(Request(role="loss", prompt="Judge.")), in_thread(person))
    assert result.text == "the report"
    assert len(lines) == 2 and "loss-0000000000000000-1" in lines[0] and "old or unknown" in lines[0]
    assert "not JSON" in lines[1] and "still waits" in lines[1]
    assert len(list((box / "discarded").glob("*.json"))) == 2 and len(list((box / "discarded").glob("*.why"))) == 2


async def test_every_refused_answer_is_kept_with_its_own_line(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    lines: list[str] = []
    backend = MailboxBackend(f"mailbox:{box}", say=lines.append)
    tries = ['{"text": "first try", oops', '{"text": "second try", oops', '{"id": "wrong", "text": "third try"}']

    def person() -> None:
        rid = waiting(box)
        for n, text in enumerate(tries, 1):
            (box / "answers" / f"{rid}.json").write_text(text)
            wait_for(lambda n=n: len(lines) == n, f"refused answer {n}'s line")
        assert answer_cli(box, rid, "--text", "the report") == 0

    # Refused within the same second, as a person's quick retries are: none may replace another.
    result, _ = await asyncio.gather(backend.text(Request(role="loss", prompt="Judge.")), in_thread(person))
    assert result.text == "the report"
    kept = sorted((box / "discarded").glob("*.json"))
    assert sorted(p.read_text() for p in kept) == sorted(tries)
    assert [p.with_suffix(".why").read_text().strip() for p in kept] == lines


async def test_a_request_deleted_while_the_run_waits_is_written_again(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    lines: list[str] = []
    backend = MailboxBackend(f"mailbox:{box}", say=lines.append)

    def person() -> None:
        rid = waiting(box)
        asked = json.loads((box / "requests" / f"{rid}.json").read_text())
        (box / "requests" / f"{rid}.json").unlink()  # a tidy-up that went too far
        wait_for(lambda: lines, "the line that says so", seconds=10)
        again = json.loads((box / "requests" / f"{rid}.json").read_text())
        assert {k: v for k, v in again.items() if k not in ("written_at", "written_again")} == {
            k: v for k, v in asked.items() if k != "written_at"
        }
        assert answer_cli(box, rid, "--text", "the report") == 0

    request = Request(role="loss", prompt="Judge.", timeout=20)  # the whole timeout is not waited out
    result, _ = await asyncio.gather(backend.text(request), in_thread(person))
    assert result.text == "the report"
    assert len(lines) == 1 and "was deleted from" in lines[0] and "written again" in lines[0]
    assert [e["event"] for e in result.transcript][:2] == ["request", "request_written_again"]


async def test_a_request_deleted_while_it_is_served_is_served_again(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    said: list[str] = []

    class DeletesFirst:
        """Answers; during its first answer the request is deleted (as a person tidying the folder would)."""

        name, model, deterministic = "deletes-first", "x", False
        calls = 0

        async def text(self, request: Request):
            from skilltui.agents.base import CallResult

            self.calls += 1
            if self.calls == 1:
                for path in (box / "requests").glob("*.json"):
                    path.unlink()
            return CallResult(text=f"answer {self.calls}")

    mailbox = MailboxBackend(f"mailbox:{box}", say=said.append)
    server = asyncio.create_task(serve(mailbox.box, DeletesFirst(), count=1, say=said.append))
    result = await mailbox.text(Request(role="loss", prompt="Judge.", timeout=20))
    await asyncio.wait_for(server, 20)
    assert result.text == "answer 2"
    assert any("deleted while it was being answered" in line for line in said)
    assert any("written again" in line for line in said)


async def test_a_timeout_leaves_the_request_and_the_next_attempt_waits_on_it(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    backend = MailboxBackend(f"mailbox:{box}")
    with pytest.raises(BackendError, match="no answer to mailbox request loss-.* in 0.2s"):
        await backend.text(Request(role="loss", prompt="Judge.", timeout=0.2))
    (first,) = (box / "requests").glob("*.json")
    stamp = first.stat().st_mtime_ns

    def person() -> None:
        assert answer_cli(box, first.stem, "--text", "late but taken") == 0

    result, _ = await asyncio.gather(backend.text(Request(role="loss", prompt="Judge.")), in_thread(person))
    assert result.text == "late but taken" and result.transcript[0]["resumed"] is True
    assert (box / "done" / f"{first.stem}.request.json").stat().st_mtime_ns == stamp
    # The same call asked again after it was answered is a new request, with the next number,
    # and an answer written again to the old one is discarded with a line.
    (box / "answers" / f"{first.stem}.json").write_text(json.dumps({"id": first.stem, "text": "again"}))
    lines: list[str] = []
    backend.say = lines.append
    with pytest.raises(BackendError):
        await backend.text(Request(role="loss", prompt="Judge.", timeout=0.05))
    assert [p.stem for p in (box / "requests").glob("*.json")] == [first.stem[:-1] + "2"]
    assert len(lines) == 1 and f"answer {first.stem} discarded" in lines[0]


async def test_the_run_counts_the_answerer_deterministic_only_while_a_deterministic_server_serves(
    tmp_path: Path,
) -> None:
    from skilltui.agents.offline import OfflineBackend

    box = tmp_path / "box"
    box.mkdir()
    run = MailboxBackend(f"mailbox:{box}")
    assert run.deterministic is False  # nobody serves: a person answers, and never the same way twice
    for answerer, deterministic in ((OfflineBackend(), True), (OfflineBackend(noise=0.2), False)):
        server = asyncio.create_task(serve(run.box, answerer, count=None, say=lambda line: None))
        await asyncio.to_thread(wait_for, lambda: list((box / "serving").glob("*.json")), "the server's word")
        assert run.deterministic is deterministic
        server.cancel()
        with pytest.raises(asyncio.CancelledError):
            await server
        assert not list((box / "serving").glob("*.json")) and run.deterministic is False


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--backend", "offline", "--offline-noise", "2"], "--offline-noise must be between 0"),
        (["--backend", "offline", "--offline-noise-call", "-1"], "--offline-noise-call must be between 0"),
        (["--backend", "codex", "--offline-noise", "0.2"], "--offline-noise is the offline writer's"),
    ],
)
def test_serve_refuses_noise_it_cannot_give_in_one_line(tmp_path: Path, capsys, flags, words) -> None:
    box = tmp_path / "box"
    box.mkdir()
    assert main(["mailbox", "serve", str(box), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and not list(box.iterdir())


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("mailbox:", "needs a folder"),
        ("mailbox:{tmp}/missing", "does not exist"),
        ("mailbox:/proc", "cannot be written"),
    ],
)
def test_a_mailbox_that_cannot_be_used_is_refused_before_the_run(make_work, tmp_path, capsys, spec, words) -> None:
    work = make_work("alpha")
    runs = tmp_path / "runs"
    argv = ["train", "--auto", "--runs-dir", str(runs), "--work", str(work), "--backend", spec.format(tmp=tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and "Traceback" not in err
    assert not runs.exists()


def test_an_answer_file_that_is_not_json_is_refused(tmp_path: Path, capsys) -> None:
    box = tmp_path / "box"
    (box / "requests").mkdir(parents=True)
    (box / "requests" / "loss-ab-1.json").write_text(json.dumps({"id": "loss-ab-1"}))
    bad = tmp_path / "answer.txt"
    bad.write_text("just some words")
    assert answer_cli(box, "loss-ab-1", "--file", str(bad)) == 2
    assert answer_cli(box, "loss-zz-1", "--text", "hi") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "not JSON" in err[0] and "no request loss-zz-1 waits" in err[1]
    assert not (box / "answers").exists() or not list((box / "answers").iterdir())
    assert not os.path.exists(box / "answers" / "loss-ab-1.json")


def test_estimate_counts_the_calls_and_names_no_price(make_work, tmp_path: Path, capsys) -> None:
    box = tmp_path / "box"
    box.mkdir()
    work = make_work("alpha")
    runs = tmp_path / "runs"
    argv = ["train", "--estimate", "--steps", "2", "--runs-dir", str(runs), "--work", str(work)]
    argv += ["--backend", f"mailbox:{box}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:] if line.split()[:1] != ["dollars:"]}
    assert rows["forward"][1] == "mailbox" and int(rows["forward"][2]) == 2  # two steps of one work
    assert "whoever answers the mailbox sets the price" in out
    assert not runs.exists() and not list(box.iterdir())


def test_list_shows_what_waits_and_what_is_answered(tmp_path: Path, capsys) -> None:
    box = tmp_path / "box"
    (box / "requests").mkdir(parents=True)
    for rid in ("forward-aa-1", "loss-bb-1"):
        (box / "requests" / f"{rid}.json").write_text(json.dumps({"id": rid, "kind": "text", "written_at": "now"}))
    assert answer_cli(box, "loss-bb-1", "--text", "a report") == 0
    capsys.readouterr()
    assert main(["mailbox", "list", str(box)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("forward-aa-1") and lines[0].endswith("waiting")
    assert lines[1].startswith("loss-bb-1") and "answered, not yet taken" in lines[1]
    assert lines[2].startswith("2 waiting in ")
