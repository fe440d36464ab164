"""Where validation keeps its samples: one folder per (pool tree, pass), never overwritten.

A measurement belongs to the notes' git tree, and every pass over the validation set on
the same tree is a new sample beside the earlier ones:

```
val/trees/<tree>/                       the tree's notes, written out for the writer to read
val/pool-<tree>/works|loss/             pass 1 (the layout runs had before passes existed)
val/pool-<tree>/pass<k>/works|loss/     pass k >= 2
```

So a resumed run, or a gate that comes back to the same notes, reads the samples it has
instead of paying for them again, and a tree can be measured whatever the live pool holds
(the gate's parent while the pool holds the candidate, a resumed step's notes).

The passes that chose a kept tree (the gate kept it because they looked good) are set aside
(`val/pool-<tree>/set_aside.json`, how many of its first passes): they stay on disk, and
`counted` leaves them out, so the tree's later figures (its step's point, its baseline as the
next parent) rest only on passes that did not choose it.
"""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

from ..core.durable import write_atomic
from .places import Place
from .run_folder import read_json


def pass_dir(root: Path, tree: str, k: int) -> Path:
    base = root / f"pool-{tree[:16]}"
    return base if k == 1 else base / f"pass{k}"


def place(root: Path, tree: str, work: str, story: Path, k: int) -> Place:
    base = pass_dir(root, tree, k)
    notes = root / "trees" / tree[:16]
    return Place(base / "works" / work, story, base / "loss", validation=True, notes=notes)


def write_tree(pool_root: Path, root: Path, tree: str) -> Path:
    """The tree's files under val/trees/<tree>/ (blocking: one `git archive`); written once, then reused."""
    out = root / "trees" / tree[:16]
    done = out / ".complete"
    if done.exists():
        return out
    archive = subprocess.run(
        ["git", "-C", str(pool_root), "archive", "--format=tar", tree], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            target = out / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            extracted = tar.extractfile(member)
            assert extracted is not None
            write_atomic(target, extracted.read())
    write_atomic(done, b"")
    return out


def trees(root: Path) -> list[str]:
    """The (16-character) trees validation has measured under `root`."""
    return sorted(d.name.removeprefix("pool-") for d in root.glob("pool-*") if d.is_dir())


def passes(root: Path, tree: str, work: str) -> int:
    """How many finished passes `work` has on `tree`, without reading them (blocking)."""
    k = 0
    while (pass_dir(root, tree, k + 1) / "loss" / f"{work}.md").exists() and (
        pass_dir(root, tree, k + 1) / "loss" / f"{work}.json"
    ).exists():
        k += 1
    return k


def samples(root: Path, tree: str, work: str) -> list[dict]:
    """The scores of every finished pass of `work` on `tree`, in pass order (blocking)."""
    found: list[dict] = []
    k = 1
    while True:
        loss_dir = pass_dir(root, tree, k) / "loss"
        scores, report = loss_dir / f"{work}.json", loss_dir / f"{work}.md"
        if not (scores.exists() and report.exists()):
            return found
        found.append(read_json(scores))
        k += 1


def set_aside(root: Path, tree: str) -> int:
    """How many of `tree`'s first passes chose it when the gate kept it: left out of what it counts (0: none)."""
    marker = pass_dir(root, tree, 1) / "set_aside.json"
    return int(read_json(marker)["passes"]) if marker.exists() else 0


def set_aside_passes(root: Path, tree: str, passes: int) -> None:
    """Leave `tree`'s first `passes` out of its counted samples from now on (never fewer than before)."""
    if passes > set_aside(root, tree):
        write_atomic(pass_dir(root, tree, 1) / "set_aside.json", json.dumps({"passes": passes}))


def counted(root: Path, tree: str, work: str) -> list[dict]:
    """`work`'s samples on `tree` that count: every finished pass but the ones set aside (blocking)."""
    return samples(root, tree, work)[set_aside(root, tree) :]
