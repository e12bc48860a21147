"""The critics as the app runs them on an answer: with the settings' defaults, no file of the server is read."""

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from claimcheck.critics import CriticResult
from claimcheck.critics.fabricated_reference import FAILED_MESSAGE
from claimcheck.critics.fabricated_reference import NAME as FABRICATED
from garden.audiences import members_add
from garden.models import Article, Question
from garden.sync import garden_import
from tests.factories import answer_for, garden_write
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
    [gate] = [finding for finding in critics_run(answer) if finding.critic == "citation_gate"]
    items = gate.details["items"]
    assert [(item["status"], item["reason"]) for item in items] == [("dropped", "no-source-tree")] * 4


def test_a_slug_the_asker_may_not_read_reads_as_one_no_note_has(tmp_path: Path) -> None:
    folder = garden_write(
        tmp_path / "garden",
        {
            ".gardenaccess": "hr/: hr\n",
            "hr/Pay bands.md": "The pay review gives band Quillmartin a raise of eleven percent.\n",
            "Moorings.md": "The harbour has forty moorings.\n",
            "Tides.md": "The tide gauge reads four metres at the spring tide.\n",
        },
    )
    members_add("hr", [])
    assert not garden_import([folder]).failures
    Article.objects.filter(slug="moorings").update(withheld_at=timezone.now(), withheld_reason="made private")
    alice, bob = (User.objects.create_user(name, password="x") for name in ("alice", "bob"))
    members_add("hr", ["alice"])
    text = "See /articles/hr-pay-bands/, /articles/moorings/, /articles/tides/ and /articles/nowhere-at-all/."

    def fabricated(asker: User) -> CriticResult:
        answer = answer_for(text)
        Question.objects.filter(answer=answer).update(asked_by=asker)
        answer.refresh_from_db()
        [finding] = [found for found in critics_run(answer) if found.critic == FABRICATED]
        return finding

    # Bob is not in hr: its note, the note made private and a slug no note has read alike.
    finding = fabricated(bob)
    assert finding.details["article_links"] == ["hr-pay-bands", "moorings", "nowhere-at-all"]
    assert finding.message == FAILED_MESSAGE.format(
        count="3 references",
        verb="do",
        items="/articles/hr-pay-bands/, /articles/moorings/, /articles/nowhere-at-all/",
    )
    assert fabricated(alice).details["article_links"] == ["moorings", "nowhere-at-all"]
