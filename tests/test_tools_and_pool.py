"""The sandbox keeps agents inside their roots; the linter keeps notes short and findable."""

from __future__ import annotations

import os

import pytest

from skilltui.agents.tools import Sandbox, ToolError
from skilltui.cli import main
from skilltui.pool.notes import MAX_DESCRIPTION_CHARS, MAX_LINES, Pool, lint_note, render_note


@pytest.fixture
def roots(tmp_path):
    story = tmp_path / "run" / "stories" / "w.md"
    story.parent.mkdir(parents=True)
    story.write_text("## Episode 1\n\nA story.\n")
    pool = tmp_path / "run" / "memory"
    (pool / "dialogue").mkdir(parents=True)
    (pool / "dialogue" / "cues.md").write_text(render_note("Cues in capitals.", "Write MARA, not Mara."))
    scripts = tmp_path / "run" / "epoch0" / "step0" / "works" / "w" / "scripts"
    scripts.mkdir(parents=True)
    human = tmp_path / "works" / "w" / "human"
    human.mkdir(parents=True)
    (human / "01.fountain").write_text("INT. SECRET - DAY\n")
    loss = tmp_path / "run" / "epoch0" / "step0" / "loss"
    loss.mkdir(parents=True)
    (loss / "w.md").write_text("the judge's report\n")
    sandbox = Sandbox(read_roots=[story, pool], write_roots=[scripts], denied=[human.parent, loss], traced=pool)
    return sandbox, story, pool, scripts, human, loss


def test_off_limits_paths_are_refused(roots, tmp_path):
    sandbox, story, pool, scripts, human, loss = roots
    attempts = [
        str(human / "01.fountain"),  # absolute path to the target episodes
        str(scripts / ".." / ".." / ".." / ".." / ".." / ".." / "works" / "w" / "human" / "01.fountain"),
        "../../../../../../works/w/human/01.fountain",  # relative, climbing out of the write root
        str(loss / "w.md"),  # a loss report
        "/etc/passwd",
    ]
    for path in attempts:
        with pytest.raises(ToolError, match="off-limits"):
            sandbox.view(path)
    os.symlink(human / "01.fountain", scripts / "peek.fountain")
    with pytest.raises(ToolError, match="off-limits"):
        sandbox.view(str(scripts / "peek.fountain"))
    os.symlink(loss, pool / "dialogue" / "reports")
    with pytest.raises(ToolError, match="off-limits"):
        sandbox.view(str(pool / "dialogue" / "reports" / "w.md"))


def test_writes_are_confined_to_write_roots(roots):
    sandbox, story, pool, scripts, *_ = roots
    with pytest.raises(ToolError, match="may write only"):
        sandbox.create(str(pool / "dialogue" / "new.md"), "x")
    with pytest.raises(ToolError, match="may write only"):
        sandbox.str_replace(str(story), "A story.", "Another.")
    os.symlink(pool, scripts / "escape")
    with pytest.raises(ToolError, match="off-limits"):
        sandbox.create(str(scripts / "escape" / "dialogue" / "evil.md"), "x")
    assert sandbox.create("01.fountain", "INT. ROOM - DAY\n").startswith("wrote")
    assert (scripts / "01.fountain").read_text() == "INT. ROOM - DAY\n"
    assert not (pool / "dialogue" / "evil.md").exists()


def test_reads_of_notes_are_traced_and_errors_are_readable(roots):
    sandbox, story, pool, scripts, *_ = roots
    sandbox.view(str(story))
    assert sandbox.reads == []
    assert "MARA" in sandbox.view(str(pool / "dialogue" / "cues.md"))
    assert sandbox.reads == ["dialogue/cues.md"]
    listing = sandbox.view(str(pool))
    assert "dialogue/cues.md" in listing
    sandbox.create("01.fountain", "abc\n")
    with pytest.raises(ToolError, match="not found"):
        sandbox.str_replace("01.fountain", "zzz", "y")
    with pytest.raises(ToolError, match="unknown command"):
        sandbox.run("rm", {"command": "rm", "path": "x"})
    with pytest.raises(ToolError, match="no commit tool"):
        sandbox.commit("msg")


GOOD = render_note("When a scene starts, open it with a heading.", "Write INT. KITCHEN - NIGHT.")


@pytest.mark.parametrize(
    ("path", "text", "problem"),
    [
        ("dialogue/ok.md", GOOD, None),
        ("elsewhere/ok.md", GOOD, "live directly in one of the folders"),
        ("dialogue/deep/ok.md", GOOD, "live directly in one of the folders"),
        ("dialogue/Bad Name.md", GOOD, "lowercase"),
        ("dialogue/x.md", "## Guidance\n\nbody\n", "front matter"),
        ("dialogue/x.md", "---\ndescription: d\nextra: [unclosed\n---\n## Guidance\n\nx\n", "not valid YAML"),
        ("dialogue/x.md", "---\ntitle: x\n---\n## Guidance\n\nx\n", "one-line description"),
        ("dialogue/x.md", render_note("d" * (MAX_DESCRIPTION_CHARS + 1), "x"), "description is"),
        ("dialogue/x.md", "---\ndescription: d\n---\n## Other\n\nx\n", "must start with the heading"),
        ("dialogue/x.md", "---\ndescription: d\n---\n## Guidance\n\n", "is empty"),
        ("dialogue/x.md", "---\ndescription: d\n---\n## Guidance\n\nx\n## More\n", "only one heading"),
        ("dialogue/x.md", render_note("d", "\n".join(["line"] * MAX_LINES)), "lines; the limit"),
        ("dialogue/x.md", render_note("d", "x" * 2000), "body is"),
    ],
)
def test_lint_rejects_bad_notes(path, text, problem):
    problems = lint_note(path, text)
    if problem is None:
        assert problems == []
    else:
        assert problems and any(problem in p for p in problems), problems


def test_lint_command_exit_codes(tmp_path, capsys):
    pool = tmp_path / "pool"
    (pool / "scene").mkdir(parents=True)
    (pool / "scene" / "good.md").write_text(GOOD)
    assert main(["lint", str(pool)]) == 0
    (pool / "scene" / "bad.md").write_text("nothing\n")
    (pool / "stray.txt").write_text("x")
    assert main(["lint", str(pool)]) == 1
    out = capsys.readouterr().out
    assert "scene/bad.md" in out and "stray.txt" in out and "good.md" not in out


def test_pool_headers_follow_edits(tmp_path):
    pool = Pool(tmp_path / "pool")
    pool.init()
    (pool.root / "scene").mkdir()
    (pool.root / "scene" / "a.md").write_text(render_note("First.", "x"))
    assert pool.headers() == [("scene/a.md", "First.")]
    (pool.root / "scene" / "a.md").write_text(render_note("Second, longer description.", "x"))
    assert pool.headers() == [("scene/a.md", "Second, longer description.")]
    before = pool.head()
    after = pool.commit_all("add a")
    assert pool.changes(before, after).added == ["scene/a.md"]
    assert "+description: Second" in pool.patch(before, after)
    (pool.root / "scene" / "b.md").write_text("dirty")
    assert not pool.is_clean()
    pool.reset(after)
    assert pool.is_clean() and pool.head() == after


def test_lint_counts_the_files_with_problems_and_refuses_a_work_folder(tmp_path, capsys, make_work):
    pool = tmp_path / "pool"
    (pool / "scene").mkdir(parents=True)
    (pool / "scene" / "good.md").write_text(GOOD)
    (pool / "scene" / "bad.md").write_text("nothing\n")
    (pool / "stray.txt").write_text("x")
    assert main(["lint", str(pool)]) == 1
    summary = capsys.readouterr().err.strip().splitlines()[-1]
    assert "in 2 files" in summary and "2 notes in the pool" in summary, summary
    work = make_work("w")
    assert main(["lint", str(work)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a work folder, not a pool" in err[0], err


def test_a_long_file_view_says_where_it_is_cut_and_how_to_read_on(tmp_path):
    """`view` marks where it cuts a long file, so a long story never reads as one without its end."""
    story = tmp_path / "story.md"
    lines = [f"## Episode {n}\n\nMARA crosses the yard at dawn, again." for n in range(1, 900)]
    story.write_text("\n".join(lines) + "\n")
    sandbox = Sandbox(read_roots=[tmp_path])
    first = sandbox.view(str(story)).splitlines()
    assert first[-1].startswith("[cut here: this view shows lines 1-")
    total = len(story.read_text().splitlines())
    seen, view_range = [], None
    while True:
        shown = sandbox.run("view", {"path": str(story), **({"view_range": view_range} if view_range else {})})
        shown_lines = shown.splitlines()
        cut = shown_lines[-1] if shown_lines[-1].startswith("[cut here") else None
        seen += [line.split("\t", 1)[1] for line in (shown_lines[:-1] if cut else shown_lines)]
        assert len(shown) <= 60_000 + 200
        if cut is None:
            break
        view_range = [int(cut.split("view_range [")[1].split(",")[0]), -1]
    assert len(seen) == total and seen == story.read_text().splitlines()


def test_the_offline_writer_reads_a_story_past_the_cut(tmp_path):
    from skilltui.agents.base import Request
    from skilltui.agents.offline import OfflineBackend
    from skilltui.core.formats import story_episodes

    story = tmp_path / "story.md"
    story.write_text("".join(f"## Episode {n}\n\nMARA crosses the yard at dawn, again.\n\n" for n in range(1, 1200)))
    sandbox = Sandbox(read_roots=[tmp_path])
    request = Request(role="forward", prompt="", context={})
    text = OfflineBackend()._read_whole(request, sandbox, [], str(story))
    assert 1199 in story_episodes(text)


def test_a_refusal_says_what_is_off_limits_without_quoting_the_refused_path(roots):
    sandbox, story, pool, scripts, human, loss = roots
    os.symlink(human.parent, scripts / "peek")
    for path in [str(human / "01.fountain"), str(loss / "w.md"), str(scripts / "peek" / "human"), "/etc/passwd"]:
        with pytest.raises(ToolError, match="off-limits") as refused:
            sandbox.view(path)
        said = str(refused.value)
        assert path not in said and str(human.parent) not in said and str(loss) not in said, said
        assert "human" not in said and "/etc" not in said, said
