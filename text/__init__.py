"""Text as every part of the product reads it, beneath the garden and the engine alike: the garden's markup
grammar (`markup`: links, embeds, headings, code, slugs, citation markers), the English words several parts
share (`words`), how garden text goes into a model's prompt as data (`prompts`) and the kind of answer a
question asks for (`answer_kinds`).

Pure Python: it imports nothing of the project and no Django, Celery or database driver (an import-linter
contract in pyproject.toml holds it), so any package may use it.
"""
