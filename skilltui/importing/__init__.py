"""Importing a person's own scripts into a work: the data set built from Final Draft, PDF and text.

Training reads a work's human/NN.fountain; people who write for the screen keep their
episodes as Final Draft files and PDFs. This package reads those into one shape
(fountain.py's elements) and writes them as the work's episodes:

- fdx.py: Final Draft XML, by paragraph type (defusedxml: no entities, no external references);
- pdf.py: a PDF's text layer, character positions by pypdfium2 (PDFium);
- text.py: plain text laid out with spaces, and Fountain, normalised;
- lines.py, artefacts.py, layout.py: the printed page shared by PDF and text, what a page
  adds that is not the script (page numbers, headers, (MORE), (CONT'D), scene numbers,
  revision marks), and the classifier that tells a line's kind from its indent;
- dual.py: dual dialogue printed side by side, read apart into its two speeches;
- report.py: what each file held and what was removed or could not be placed;
- importer.py: the command's plan (read and check everything) and write (only then).

It sits beside the drivers: it uses the engine's idea of a work, and nothing below it knows
it exists.
"""
