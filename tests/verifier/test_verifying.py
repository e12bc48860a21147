"""The critic checks as the app runs them on an answer: with the settings' defaults, no file of the server is read."""

import pytest

from tests.factories import answer_for
from verifier.verifying import critics_run

pytestmark = pytest.mark.django_db


def test_path_citations_read_no_file_of_the_server_unless_a_source_tree_is_named() -> None:
    # The project's own files are there to read (the old default was the project folder): a settings file's
    # first line, a right and a wrong guess at the words of the .env beside it. None is opened.
    answer = answer_for(
        "- `config/settings/base.py:1 - Settings shared by every environment`\n"
        "- `.env:1 - SECRET_KEY production`\n"
        "- `.env:1 - ANTHROPIC_API_KEY staging`\n"
        "- `.run/services.env:1 - DATABASE_URL postgres`\n"
    )
    [gate] = [finding for finding in critics_run(answer) if finding.check == "citation_gate"]
    items = gate.details["items"]
    assert [(item["status"], item["reason"]) for item in items] == [("dropped", "no-source-tree")] * 4
