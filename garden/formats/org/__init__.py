"""Org-mode files as notes (Emacs Org, org-roam): `markup` reads an Org text into the Markdown note it exports
to, with its keywords, properties and ids; `reading` reads a file of the garden into a `ParsedArticle` and is the
format the registry lists (`reading.FORMAT`).
"""
