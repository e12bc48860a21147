"""PDFs as notes: `reading` reads one into a `ParsedArticle` with its pages; `text_layer` is the child process
that reads its text layer (pypdf), which `reading` runs and stops when it takes too long. Empty on purpose: the
child imports nothing but pypdf, so it starts in a few tens of milliseconds.
"""
