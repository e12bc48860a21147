"""Logseq graphs read as Logseq shows them: the graph and its config (`graph`, `edn`, `dates`), a page's blocks
(`blocks`), references and embeds resolved across the graph (`resolution`) and the format the registry knows
(`reading`).

A folder is a graph when it has `logseq/config.edn` (or both `pages/` and `journals/`). Its `config.edn` is read
by a small EDN reader for the few keys used here; anything odd in it leaves Logseq's defaults in place and is
told (`Graph.problem`), never failing an import. A page's title is its `title::`, else its file name decoded in
the graph's file name format; a journal's is its date in the graph's title format. Block references
(`((uuid))`, `{{embed ((uuid))}}`) are resolved across the graph into the page's stored text, so readers,
retrieval and the judge see the block's words; `{{embed [[page]]}}` becomes an embed (`![[page]]`); other macros
are left as words, never braces. Pure: no database.
"""
