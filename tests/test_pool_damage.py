"""A pool that cannot be read is never re-created: the run stops with one line, nothing deleted,
and `skilltui repair RUN` puts main back on the newest intact commit the run recorded.

A HEAD that does not resolve is never taken for "no repository yet": removing `.git` would
train an empty pool and exit 0. Each trigger below is what a person, a
power cut or a stray git command can leave; each must end in exit 2, one line naming the
damage and the way on, and every byte of `.git` and `memory/` as it was.
"""

from __future__ import annotations

import ast
import hashlib
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from skilltui.cli import main
from skilltui.pool.notes import Pool
from skilltui.store.run_folder import Run
from tests.support.recorded import recorded
from tests.support.works import train_works as train

SKILLTUI = Path(__file__).resolve().parent.parent / "skilltui"


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` (the pool, its .git included) by path and content hash."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def git(pool: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(pool), *args], check=True, capture_output=True, text=True).stdout.strip()


def _ref_file(pool: Path) -> Path:
    ref = pool / ".git" / "refs" / "heads" / "main"
    if not ref.exists():  # packed by a gc: unpack it so the trigger hits the loose file
        git(pool, "update-ref", "refs/heads/main", git(pool, "rev-parse", "HEAD"))
    return ref


TRIGGERS: dict[str, Callable[[Path], None]] = {
    "orphan checkout": lambda p: git(p, "checkout", "-q", "--orphan", "x"),
    "main ref deleted": lambda p: git(p, "update-ref", "-d", "refs/heads/main"),
    "HEAD names a missing branch": lambda p: git(p, "symbolic-ref", "HEAD", "refs/heads/nope"),
    "ref file cut short": lambda p: _ref_file(p).write_text(_ref_file(p).read_text()[:11]),
    "ref file of NULs": lambda p: _ref_file(p).write_bytes(b"\0" * 41),
    "ref file empty": lambda p: _ref_file(p).write_bytes(b""),
    "garbage HEAD": lambda p: (p / ".git" / "HEAD").write_bytes(b"\x7fELF garbage\n"),
    "HEAD's commit missing": lambda p: _ref_file(p).write_text("1" * 40 + "\n"),
}


@pytest.mark.slow
@pytest.mark.parametrize("trigger", TRIGGERS, ids=list(TRIGGERS))
def test_a_damaged_pool_stops_the_run_with_one_line_and_nothing_deleted(
    trigger: str, works, done: Run, tmp_path: Path, capsys
) -> None:
    pool = done.pool.root
    head = git(pool, "rev-parse", "HEAD")
    TRIGGERS[trigger](pool)
    before = snapshot(pool)
    events = done.events_path.read_bytes()
    capsys.readouterr()
    assert train(tmp_path / "runs", works) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "damaged" in err and f"git -C {pool} fsck" in err and f"skilltui repair {done.root}" in err
    assert "Traceback" not in err
    assert snapshot(pool) == before  # not one byte of .git or the notes changed
    assert done.events_path.read_bytes() == events

    assert main(["repair", str(done.root)]) == 0
    out = capsys.readouterr().out
    assert f"main points at {head[:7]}" in out and "refs/skilltui/damaged/" in out
    assert git(pool, "rev-parse", "HEAD") == head
    kept = git(pool, "for-each-ref", "--format=%(refname)", "refs/skilltui/damaged/").split()
    assert len(kept) == 1 and "skilltui repair" in git(pool, "log", "-1", "--format=%B", kept[0])
    assert train(tmp_path / "runs", works) == 0  # and the run goes on from there
    assert recorded(done.events_path)[-1]["status"] == "finished"
    assert git(pool, "rev-list", "--count", "HEAD") == str(len(list(done.root.rglob("commit.txt"))) + 1)


def test_repair_picks_the_newest_recorded_commit_that_reads_whole(works, done: Run, tmp_path: Path, capsys) -> None:
    pool = done.pool.root
    head = git(pool, "rev-parse", "HEAD")
    parent = git(pool, "rev-parse", "HEAD~1")
    # The newest commit's own object is emptied (a power cut mid-write): the one before it is the newest intact.
    obj = pool / ".git" / "objects" / head[:2] / head[2:]
    obj.chmod(0o644)
    obj.write_bytes(b"")
    assert train(tmp_path / "runs", works) == 2
    assert "cannot be read" in capsys.readouterr().err
    assert main(["repair", str(done.root)]) == 0
    assert git(pool, "rev-parse", "HEAD") == parent
    assert main(["repair", str(done.root)]) == 0
    assert "not damaged" in capsys.readouterr().out


def test_repair_takes_a_run_folder_relative_to_where_it_runs(done: Run, capsys, monkeypatch) -> None:
    git(done.pool.root, "symbolic-ref", "HEAD", "refs/heads/nope")
    monkeypatch.chdir(done.root.parent)
    assert main(["repair", "r"]) == 0
    assert "main points at" in capsys.readouterr().out


def test_repair_refuses_a_folder_that_is_no_run(tmp_path: Path, capsys) -> None:
    assert main(["repair", str(tmp_path)]) == 2
    assert "not a run folder" in capsys.readouterr().err


def _loose_blob_of_head(pool: Pool) -> Path:
    blob = next(b for b in pool.repo.commit("HEAD").tree.traverse() if b.type == "blob")
    path = pool.root / ".git" / "objects" / blob.hexsha[:2] / blob.hexsha[2:]
    assert path.exists()
    return path


@pytest.mark.parametrize("command", ["train", "export", "review"])
def test_a_corrupt_object_is_named_as_damage_with_git_fsck(
    command: str, works, done: Run, tmp_path: Path, capsys, monkeypatch
) -> None:
    obj = _loose_blob_of_head(done.pool)
    done.pool.close()
    obj.chmod(0o644)
    obj.write_bytes(b"")
    capsys.readouterr()
    if command == "train":
        code = train(tmp_path / "runs", works)
    elif command == "export":
        code = main(["export", str(done.root), "--to", str(tmp_path / "skill")])
    else:
        monkeypatch.setattr("skilltui.apps.history.app.HistoryApp.run", lambda self: pytest.fail("the app opened"))
        monkeypatch.setattr("sys.stdin.isatty", lambda: True)
        monkeypatch.setattr("sys.stdout.isatty", lambda: True)
        code = main(["review", str(done.root)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "damaged" in err and "fsck" in err and "a bug" not in err
    assert obj.exists()


# -- no code path can remove a pool that has commits ------------------------------------------------

# Every call in skilltui/ that removes files or folders, by (module, function): each is either
# confined to what it names (a temporary file, a lock file, a staging folder) or, for the one
# place that removes a pool's `.git`, guarded by `never_committed`. A new removal must be
# added here with its reason, after checking it cannot reach a pool's `.git` or `memory/`.
REMOVALS = {
    ("pool/notes.py", "_remove_empty_repository"): "the only removal of a .git: refuses one with any object or ref",
    ("pool/notes.py", "init"): "the build folder beside the pool (.memory.tmpPID), never the pool",
    ("store/reconcile.py", "clear_stale_locks"): "*.lock files of a dead git, under the run lock",
    ("pool/notes.py", "keep_worktree"): "its own temporary index file",
    ("store/repair.py", "_keep_damaged"): "its own temporary index file",
    ("pool/notes.py", "reset"): "`git clean` of the pool's files, after keep_worktree kept every one under a ref",
    ("engine/update/candidates.py", "close_copy"): "a candidate's git worktree in its attempt folder; no real .git",
    ("engine/update/candidates.py", "_unlock"): "git's admin entry of a candidate's worktree a kill left locked",
    ("engine/update/decided.py", "carry_out"): "a rerun's decision.json in the run folder, once carried out",
    ("store/repair.py", "_repair"): "a killed repair's temporary index, and its saved HEAD once kept in a commit",
    ("engine/stages/passes.py", "_prepare_forward"): "files the writer left in its own scripts folder (not the pool)",
    ("core/durable.py", "write_atomic"): "its own temporary file",
    ("importing/importer.py", "write"): "an episode file of a work that --force replaces (1.fountain by 01.fountain)",
    ("core/durable.py", "_open_new"): "a leftover or a planted link at write_atomic's own temporary name",
    ("core/durable.py", "clean_temps"): "dead writers' .NAME.tmpPID files and folders; skips .git",
    ("agents/tools.py", "delete"): "one note file an agent may write; .git names are refused",
    ("agents/claude_code.py", None): "the CLI's own scratch folder",
    ("agents/codex.py", "_call"): "the Codex CLI's own temporary CODEX_HOME folder, made for one call",
    ("agents/mailbox.py", "_finish"): "an answered call's call and result files and its claim, in the mailbox",
    ("agents/mailbox_files.py", "open"): "its own write probe in the mailbox folder",
    ("agents/mailbox_files.py", "set_aside"): "the name it reserved in discarded/, when the answer went first",
    ("agents/mailbox_serve.py", "answer_one"): "its own claim on a request deleted while it answered",
    ("agents/mailbox_serve.py", "serve"): "its own serving/PID.json, as it stops",
    ("runs/export.py", None): "the export's staging and target folders, outside the run",
    ("drivers/engine_process.py", None): "an empty log file in the run folder",
}
REMOVERS = {"rmtree", "unlink", "rmdir", "removedirs"}  # and os.remove (a list's .remove is no removal)


def _removals(naming_git: bool = False) -> set[tuple[str, str | None]]:
    """(module, function) of every removal call; with `naming_git`, of those whose own text names `.git`."""
    found = set()
    for path in SKILLTUI.rglob("*.py"):
        module = str(path.relative_to(SKILLTUI))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            for call in [n for n in ast.walk(func) if isinstance(n, ast.Call)]:
                name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
                git_clean = any(isinstance(a, ast.Constant) and a.value == "clean" for a in call.args)
                on_os = isinstance(call.func, ast.Attribute) and getattr(call.func.value, "id", "") == "os"
                if name in REMOVERS or (name == "remove" and on_os) or git_clean:
                    names = [n.value for n in ast.walk(call) if isinstance(n, ast.Constant) and type(n.value) is str]
                    if not naming_git or any(".git" in name for name in names):
                        found.add((module, func.name))
    return found


def test_every_removal_in_the_code_is_one_that_cannot_reach_a_pool_with_commits() -> None:
    allowed = {(m, f) for m, f in REMOVALS if f is not None}
    whole_modules = {m for m, f in REMOVALS if f is None}
    found = {(m, f) for m, f in _removals() if m not in whole_modules}
    assert found <= allowed, f"new removals to check and list in REMOVALS: {sorted(found - allowed)}"
    # No removal names a `.git` itself: the one that removes one takes it from init, behind its guard.
    assert _removals(naming_git=True) == set()


def test_the_one_removal_of_a_git_folder_refuses_a_repository_with_commits(tmp_path: Path) -> None:
    pool = Pool(tmp_path / "memory")
    pool.init()
    pool.close()
    git(pool.root, "update-ref", "-d", "refs/heads/main")  # HEAD resolves to nothing, the objects remain
    before = snapshot(pool.root)
    with pytest.raises(Exception, match="damaged"):
        Pool(pool.root).init()
    assert snapshot(pool.root) == before
    empty = tmp_path / "empty"
    subprocess.run(["git", "init", "-q", str(empty)], check=True)  # no object, no ref: made again
    assert Pool(empty).init()


# -- what a pool cannot hold: refused at open, with one line ---------------------------------------


def _commit_by_hand(pool: Path, message: str) -> None:
    git(pool, "add", "-A")
    git(pool, "-c", "user.name=me", "-c", "user.email=me@x", "commit", "-qm", message)


def test_a_git_repository_made_inside_the_pool_is_refused_with_one_line(works, done: Run, tmp_path, capsys) -> None:
    """A nested repository is refused in one line, not an AttributeError about a submodule at every resume."""
    inner = done.pool.root / "scene" / "inner"
    inner.mkdir(parents=True)
    git(inner, "init", "-q")
    (inner / "a.md").write_text("mine\n")
    git(inner, "add", ".")
    git(inner, "-c", "user.name=me", "-c", "user.email=me@x", "commit", "-qm", "mine")
    head = git(done.pool.root, "rev-parse", "HEAD")
    capsys.readouterr()
    assert train(tmp_path / "runs", works) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "git repository of its own at scene/inner" in err
    assert git(done.pool.root, "rev-parse", "HEAD") == head and (inner / "a.md").read_text() == "mine\n"


def test_a_hand_committed_submodule_is_read_like_any_entry(tmp_path: Path) -> None:
    """A submodule entry in a commit reads like any entry, though GitPython gives it no name (`review` needs one)."""
    pool = Pool(tmp_path / "memory")
    pool.init()
    sha = git(pool.root, "rev-parse", "HEAD")
    git(pool.root, "update-index", "--add", "--cacheinfo", f"160000,{sha},scene/sub")
    git(pool.root, "-c", "user.name=me", "-c", "user.email=me@x", "commit", "-qm", "a submodule by hand")
    commit = Pool(pool.root).log(files=True)[0]
    assert commit.files == [("A", "scene/sub")]


def test_a_committed_note_whose_name_is_not_utf8_is_refused_and_reported(works, done: Run, tmp_path, capsys) -> None:
    """A file name with a byte that is not UTF-8 is refused and reported: the event sink cannot encode
    it, and `report` cannot render it."""
    root = done.pool.root
    with open(bytes(root / "scene") + b"/caf\xe9.md", "wb") as f:
        f.write(b"---\ndescription: x\n---\n## Guidance\n\nBody.\n")
    _commit_by_hand(root, "a note with a Latin-1 name")
    capsys.readouterr()
    assert train(tmp_path / "runs", works) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not UTF-8" in err and "scene/caf\\xe9.md" in err
    assert main(["report", str(done.root), "--to", str(tmp_path / "report.html")]) == 0
    assert "</html>" in (tmp_path / "report.html").read_text(encoding="utf-8")
    assert ("A", "scene/caf\\xe9.md") in done.pool.log(files=True)[0].files  # the history names it, readably
