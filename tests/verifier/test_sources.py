"""The numbered sources the verifier builds from an answer's passages: each says what its passage is about."""

import pytest

from claimcheck.claims import split_claims
from claimcheck.judges.local import judge_claims
from claimcheck.terms import ClaimStatus
from garden.models import Article
from garden.services import revision_create
from tests.factories import answer_for
from verifier.sources import answer_sources

pytestmark = pytest.mark.django_db

BODY = """# Fellside station

## Facilities

The station has a single platform and a turntable.
"""


def test_a_source_carries_its_article_title_and_heading_and_the_judge_reads_them() -> None:
    article = Article.objects.create(slug="fellside", title="Fellside station")
    revision = revision_create(article=article, title="Fellside station", body=BODY)
    passage = revision.passages.get()
    answer = answer_for("Fellside station has a turntable [1].", passage)

    sources, passages = answer_sources(answer)

    assert [s.context for s in sources] == ["Fellside station — Facilities"]
    assert passages[1] == passage
    [vote] = judge_claims(split_claims(answer.text), sources)
    assert vote.status == ClaimStatus.VERIFIED
    assert vote.quote in passage.text and "Facilities" not in vote.quote


def test_a_superseded_revision_keeps_its_own_title() -> None:
    article = Article.objects.create(slug="fellside", title="Fellside station")
    old = revision_create(article=article, title="Fellside halt", body=BODY)
    revision_create(article=article, title="Fellside station", body=BODY.replace("a turntable", "a crane"))
    answer = answer_for("Fellside station has a crane [1].", *article.passages.filter(is_current=True))

    sources, _ = answer_sources(answer)

    assert sources[-1].superseded and sources[-1].context.startswith("Fellside halt")
    assert old.passages.get().text in sources[-1].text
