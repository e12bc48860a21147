"""The formats a garden's notes are written in, each in one place: `markdown` (notes as people keep them in
Obsidian, Foam, Dendron, MkDocs, Hugo or a plain folder), `logseq` (a Logseq graph as Logseq shows it), `pdf/`
(a PDF's text layer, read in a process of its own), and `gardening` (the editors' markup both Markdown formats
share). Each reads one file into a `ParsedArticle` (`markdown`) or says why it cannot.

The formats import nothing of the sync or of answering (an import-linter contract holds it): the sync calls
them. Empty on purpose, so `python -m garden.formats.pdf.text_layer` starts without importing the others.
"""
