"""Answering a question from the garden: pre-flight (`preflight`), the names a question mentions (`phrases`),
retrieval and the refusal gate (`retrieval`, measured by `retrieval_report`), synthesis (`synthesis/`), and the
flow of one question that runs them and stores what came of it (`asking`).

It reads the garden's models and imports nothing of the formats or the sync (an import-linter contract holds
it). Empty on purpose: `garden.models` imports `phrases`, so a package that imported its modules here would
import the models back while they load.
"""
