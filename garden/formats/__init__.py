"""The formats a garden's notes are written in, each in one place: `markdown` (notes as people keep them in
Obsidian, Foam, Dendron, MkDocs, Hugo or a plain folder), `logseq` (a Logseq graph as Logseq shows it), `pdf/`
(a PDF's text layer, read in a process of its own), `org/` (Org-mode files, org-roam's too), and `gardening`
(the editors' markup both Markdown formats share). Each implements `protocol` and is listed in `registry`, and
reads one file into a `ParsedArticle` (`note`, the types every format shares) or says why it cannot.

The formats import nothing of the sync or of answering, and the sync reaches them only through `registry` and
`note` (import-linter contracts hold both). Empty on purpose, so `python -m garden.formats.pdf.text_layer` starts without importing the others.
"""
