"""Benchmark: `skilltui import` of a 120-page feature PDF, against PDFium reading its bare text.

Draws a feature-length production PDF with the tests' second layout (tests/support/drawn_scripts.py:
Final Draft's margins, a running header, page numbers, scene numbers in both margins,
(MORE)/(CONT'D), a revised page), then times, in the same process and on the same file:

- `baseline`: pypdfium2's plain `get_text_range()` of every page (the text, no positions),
  the least any PDF import built on PDFium can cost;
- `import`: the real command, `skilltui import FILE --work DIR` (positions, artefacts,
  classification, the report, the Fountain written).

Prints the best of `--rounds` for each, the ratio, and the loss of the imported script
against the original; then the same feature drawn as Final Draft prints a revised draft
(`draw_final_draft`: revision headers, an A-page, inserted scenes numbered 12A, CONTINUED
markers, automatic (CONT'D), dual dialogue side by side), its import time against the same
baseline and its loss. Target: the import of 120 pages in <= 5 s on this machine.

    python bench/bench_import.py [--pages 120] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import tempfile
import time
from pathlib import Path

from skilltui.cli import main
from skilltui.engine.loss.scores import combine, score_episode
from tests.support.drawn_scripts import draw_final_draft, draw_pdf, lay_out, with_dual_dialogue
from tests.support.works import NAMES, make_varied_episode


def feature(pages: int) -> str:
    """Scenes of the tests' varied episodes until the drawn layout runs to `pages` pages."""
    rng = random.Random(120)
    cast = rng.sample(NAMES, 4)
    parts: list[str] = []
    while True:
        parts.append(make_varied_episode(rng, cast))
        text = "\n\n".join(parts)
        if len(lay_out(text)[0]) >= pages:
            return text


def best(rounds: int, run) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import pypdfium2 as pdfium

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        text = feature(args.pages)
        pdf = folder / "01.pdf"
        drawn = draw_pdf(text, pdf, revised=(2, 40))

        dual = with_dual_dialogue(text)
        final_draft = folder / "02.pdf"
        draw_final_draft(
            dual, final_draft, revised=frozenset({2, 40}), a_pages=frozenset({3}), inserted=frozenset({12, 101})
        )

        def baseline() -> None:
            document = pdfium.PdfDocument(str(pdf))
            for page in document:
                page.get_textpage().get_text_range()
            document.close()

        works = iter(range(10_000))

        def importer(source: Path):
            def run() -> None:
                work = folder / f"work{next(works)}"
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    assert main(["import", str(source), "--work", str(work), "--first", "1"]) == 0

            return run

        base = best(args.rounds, baseline)
        took = best(args.rounds, importer(pdf))
        fd_took = best(args.rounds, importer(final_draft))
        written = (folder / "work0" / "human" / "01.fountain").read_text(encoding="utf-8")
        loss = combine(score_episode(written, text))
        fd_written = (folder / f"work{args.rounds}" / "human" / "01.fountain").read_text(encoding="utf-8")
        fd_loss = combine(score_episode(fd_written, dual))
        pages = len(lay_out(text)[0])
        print(f"feature PDF: {pages} pages, {pdf.stat().st_size // 1024} KB, artefacts drawn {sum(drawn.values())}")
        print(f"baseline  pypdfium2 get_text_range: {base:.2f} s")
        print(f"import    skilltui import:          {took:.2f} s  ({took / base:.2f}x baseline)")
        print(f"loss of the import against the original: {loss:.4f}")
        print(f"Final Draft revised draft: {final_draft.stat().st_size // 1024} KB, import {fd_took:.2f} s")
        print(f"  ({fd_took / base:.2f}x baseline), loss against the original: {fd_loss:.4f}")
        print(f"target <= 5 s: {'met' if took <= 5 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
