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
"""

from __future__ import annotations

import io
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
