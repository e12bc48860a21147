"""One address per thing: a passage, a revision and a claim are each reached by their model's
`get_absolute_url`, and every page and the API link there."""

import pytest

from garden.models import ArticleRevision, Passage
from tests.factories import answer_for, verification_with_claims

pytestmark = pytest.mark.django_db


def _superseded_passage() -> Passage:
    return Passage.objects.select_related("article").filter(is_current=False).earliest("pk")


def test_a_current_passage_is_read_on_its_article_page_at_the_passage(client):
    passage = Passage.objects.select_related("article").filter(is_current=True).earliest("pk")
    url = passage.get_absolute_url()
    assert url == f"/articles/{passage.article.slug}/#passage-{passage.pk}"
    page = client.get(url.split("#")[0]).content.decode()
    assert f'id="passage-{passage.pk}"' in page


def test_a_superseded_passage_is_read_on_its_revision_page(client):
    passage = _superseded_passage()
    url = passage.get_absolute_url()
    assert url == f"/articles/{passage.article.slug}/?revision={passage.revision_id}#passage-{passage.pk}"
    page = client.get(url.split("#")[0]).content.decode()
    assert f'id="passage-{passage.pk}"' in page and "Superseded revision" in page


def test_a_pdf_passage_is_read_at_its_page():
    passage = Passage.objects.select_related("article").filter(is_current=True).earliest("pk")
    passage.page = 2
    assert passage.get_absolute_url() == f"/articles/{passage.article.slug}/#page-2"


def test_the_article_page_lists_each_revision_at_its_own_address(client):
    passage = _superseded_passage()
    old = ArticleRevision.objects.select_related("article").get(pk=passage.revision_id)
    current = old.article.revisions.get(superseded=False)
    assert current.get_absolute_url() == old.article.get_absolute_url()
    assert old.get_absolute_url() == f"{old.article.get_absolute_url()}?revision={old.pk}"
    html = client.get(old.article.get_absolute_url()).content.decode()
    assert f'href="{old.get_absolute_url()}"' in html


def test_the_answer_page_and_the_api_cite_a_superseded_passage_at_the_same_address(client):
    passage = _superseded_passage()
    answer = answer_for("An old fact [1].", passage)
    html = client.get(answer.get_absolute_url()).content.decode()
    api = client.get(f"/api/answers/{answer.public_id}").json()
    url = passage.get_absolute_url()
    assert api["citations"][0]["url"] == url
    assert f'href="{url}"' in html.replace("&amp;", "&")


def test_a_claim_is_read_in_its_answers_verdict(client):
    verification = verification_with_claims(1)
    claim = verification.claims.select_related("verification__answer").get()
    assert claim.get_absolute_url() == f"{verification.answer.get_absolute_url()}#claim-{claim.pk}"
    html = client.get(claim.get_absolute_url().split("#")[0]).content.decode()
    assert f'id="claim-{claim.pk}"' in html
