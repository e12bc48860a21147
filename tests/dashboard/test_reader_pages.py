"""What a reader sees: the ask page, the answer with linked citations, the refusal banner, articles."""

import re
from html import unescape

import pytest
from django.db.models import Count
from django.test import Client
from django.urls import reverse

from garden.answering.asking import EMPTY_QUESTION
from garden.models import Answer, Article, ArticleRevision, Passage, Topic
from garden.removed_lines import REMOVED_LINES
from tests.factories import answer_for, login
from verifier.queueing import verification_create
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

IN_SCOPE = "How long is the Harrowden Viaduct and how many arches does it have?"
OUT_OF_SCOPE = "What is the boiling point of ethanol at sea level?"


def test_ask_page_has_a_question_box_that_works_with_and_without_htmx(client):
    page = client.get(reverse("dashboard:ask"))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'name="question"' in html and 'hx-post="/"' in html and 'action="/"' in html
    assert "/static/django_htmx/htmx-2.min.js" in html  # bundled with django-htmx, no CDN


def test_asking_without_javascript_redirects_to_the_answer_page(client):
    response = client.post(reverse("dashboard:ask"), {"question": IN_SCOPE})
    answer = Answer.objects.get()
    assert response.status_code == 302 and response["Location"] == answer.get_absolute_url()

    page = client.get(answer.get_absolute_url()).content.decode()
    first = answer.sources.get(number=1)
    assert IN_SCOPE in page
    assert f'href="/articles/{first.passage.article.slug}/#passage-{first.passage_id}"' in page
    assert "Pre-flight" in page and "HIGH risk" in page
    assert f'hx-get="/answers/{answer.public_id}/verdict/"' in page and "Waiting for the judge" in page
    assert "Sources retrieved" in page


def test_a_source_link_opens_its_passage_on_the_article_page(client):
    passage = Passage.objects.select_related("article").filter(is_current=True, page=None).earliest("pk")
    answer = answer_for("The garden says so [1].", passage)
    address = f"/articles/{passage.article.slug}/#passage-{passage.pk}"
    assert f'href="{address}"' in client.get(answer.get_absolute_url()).content.decode()
    article = client.get(address.split("#")[0]).content.decode()
    assert f'<section class="passage" id="passage-{passage.pk}">' in article
    # Links saved while passages were anchored at their old name are sent on by this script (tests/e2e).
    assert '<script src="/static/js/passage-anchors.js" defer></script>' in article


def test_asking_with_htmx_swaps_in_the_answer_fragment(client):
    response = client.post(reverse("dashboard:ask"), {"question": IN_SCOPE}, headers={"HX-Request": "true"})
    html = response.content.decode()
    answer = Answer.objects.get()
    assert response.status_code == 200 and response["HX-Push-Url"] == answer.get_absolute_url()
    assert f'id="answer-{answer.public_id}"' in html and "<html" not in html


def test_an_out_of_scope_question_shows_the_refusal_banner(client):
    response = client.post(reverse("dashboard:ask"), {"question": OUT_OF_SCOPE}, follow=True)
    html = response.content.decode()
    assert "Retrieval refused." in html and "No model was called." in html
    assert "Nothing to check" in html
    # The pre-flight box does not advise trusting claims that do not exist.
    assert "trust the claims marked verified" not in html and "no claims to trust or check" in html


@pytest.mark.parametrize("question", ["", "x" * 2001])
def test_an_empty_or_over_long_question_gets_a_clear_error_in_the_page(client, question):
    response = client.post(reverse("dashboard:ask"), {"question": question})
    html = response.content.decode()
    assert response.status_code == 422
    assert (EMPTY_QUESTION if not question else "limited to 2,000 characters") in html
    htmx = client.post(reverse("dashboard:ask"), {"question": question}, headers={"HX-Request": "true"})
    assert htmx.status_code == 422 and 'role="alert"' in htmx.content.decode()
    assert not Answer.objects.exists()


def test_the_verdict_fragment_polls_until_the_verification_finishes(client):
    client.post(reverse("dashboard:ask"), {"question": IN_SCOPE})
    answer = Answer.objects.get()
    fragment = client.get(
        reverse("dashboard:verdict", args=[answer.public_id]), headers={"HX-Request": "true"}
    )
    assert 'hx-trigger="every 2s"' in fragment.content.decode()
    answer.verification.status = "done"
    answer.verification.save()
    fragment = client.get(
        reverse("dashboard:verdict", args=[answer.public_id]), headers={"HX-Request": "true"}
    )
    assert "hx-trigger" not in fragment.content.decode()


def test_an_article_with_html_renders_it_as_inert_text(client):
    article = Article.objects.create(slug="inert", title="Inert")
    ArticleRevision.objects.create(article=article, title="Inert", body="x", content_hash="x")
    from garden.services import revision_create

    revision_create(
        article=article,
        title="Inert",
        body='Hello <script>alert("pwned")</script> and '
        '<img src=x onerror="alert(1)"> and [[station-ashcombe|Ashcombe]].',
    )
    html = client.get(article.get_absolute_url()).content.decode()
    assert "<script>alert" not in html and "<img" not in html
    assert "&lt;script&gt;alert" in html
    assert 'href="/articles/station-ashcombe/"' in html


def test_an_old_revision_is_shown_marked_superseded(client):
    revision = ArticleRevision.objects.filter(superseded=True).select_related("article").first()
    assert revision is not None
    html = client.get(f"{revision.article.get_absolute_url()}?revision={revision.pk}").content.decode()
    assert "Superseded revision" in html


def test_an_old_revision_s_removed_lines_are_shown_to_editors_only(client):
    """The 2023 fares, superseded by 2025's: a reader sees the lines the current version still holds and is told
    the others were removed (an edited line is one of them); an editor sees the old revision whole."""
    old = ArticleRevision.objects.get(article__slug="fares", superseded=True)
    address = f"{old.article.get_absolute_url()}?revision={old.pk}"
    removed = ["£14.00", "apply for the 2023 season", "£37.00"]
    assert all(text in old.body for text in removed)
    current = old.article.revisions.get(superseded=False).body
    unchanged = "Dogs: £2.00 each."
    assert f"- {unchanged}" in old.body and f"- {unchanged}" in current

    reader, editor = Client(), Client()
    login(reader, "reader")
    login(editor, "editor")
    for viewer in (client, reader):
        page = unescape(viewer.get(address).content.decode())
        assert not any(text in page for text in removed) and REMOVED_LINES in page
        assert unchanged in page

    page = unescape(editor.get(address).content.decode())
    assert all(text in page for text in removed) and REMOVED_LINES not in page
    assert REMOVED_LINES not in unescape(client.get(old.article.get_absolute_url()).content.decode())


def test_unknown_pages_are_404(client):
    assert client.get("/articles/no-such-article/").status_code == 404
    assert client.get("/answers/999999/").status_code == 404


def test_an_answer_echoing_html_renders_inert_before_and_after_the_verdict(client):
    passage = Passage.objects.filter(
        article__slug="about-this-wiki", is_current=True, text__contains="<script>"
    ).first()
    assert passage is not None, "the sample garden keeps an article that quotes a <script> tag"
    answer = answer_for('The filter caught <script>alert("x")</script> in the guestbook [1].', passage)
    for _ in range(2):
        html = client.get(answer.get_absolute_url()).content.decode()
        assert '<script>alert("x")</script>' not in html and "&lt;script&gt;alert" in html
        verification = verification_create(answer=answer)
        assert verification is not None
        verification_run(verification_id=verification.pk)


def _pages(client, address):
    """The titles listed on each page of `address`, following its Next links as a reader without JavaScript."""
    listed = []
    while address:
        response = client.get(address)
        assert response.status_code == 200
        html = response.content.decode()
        listed.append(re.findall(r'<li>\s*<a href="/articles/[^"]+/">([^<]+)</a>', html))
        found = re.search(r'<a href="(\?page=\d+)" rel="next">Next page</a>', html)
        address = (address.split("?")[0] + found.group(1)) if found else None
    return listed


def test_the_article_list_is_paged_and_its_next_links_reach_every_article_once(client, settings):
    settings.ARTICLES_PER_PAGE = 7
    titles = [unescape(title) for page in _pages(client, "/articles/") for title in page]
    live = list(Article.objects.live().order_by("title", "pk").values_list("title", flat=True))
    assert len(live) > 14 and titles == live
    assert max(len(page) for page in _pages(client, "/articles/")) == 7


def test_a_page_of_articles_links_back_and_says_where_it_is(client, settings, django_assert_max_num_queries):
    settings.ARTICLES_PER_PAGE = 7
    pages = -(-Article.objects.live().count() // 7)
    with django_assert_max_num_queries(6):  # the count, the page, its topics and the session's
        html = client.get("/articles/?page=2").content.decode()
    assert '<nav class="pager" aria-label="Pages">' in html
    assert '<a href="?page=1" rel="prev">Previous page</a>' in html and f"Page 2 of {pages}" in html
    # Past the end is the last page, and anything else the first: never an error page.
    assert f"Page {pages} of {pages}" in client.get("/articles/?page=999").content.decode()
    first = client.get("/articles/?page=x").content.decode()
    assert "Page 1 of" in first and 'rel="prev"' not in first


def test_a_topic_page_is_paged(client, settings):
    topic = Topic.objects.live().annotate(n=Count("articles")).filter(n__gte=2).order_by("-n").first()
    settings.ARTICLES_PER_PAGE = 1
    titles = [unescape(title) for page in _pages(client, topic.get_absolute_url()) for title in page]
    assert titles == list(topic.articles.live().order_by("title", "pk").values_list("title", flat=True))
    assert len(titles) >= 2
