"""Bounded work: a size limit is applied before any other work, and every entry point that reads a reader's or a
garden's text is linear in it.

Each entry point gets 250,000 characters of adversarial text (long runs of spaces, openers that never close, ...)
and must finish within UNITS_ALLOWED units, a unit being a plain scan of the same text in the same run (`\\w+`
words, `split`, `count`), both in this process's CPU time, so the bound holds on a slow or busy machine. A
quadratic pattern misses it by orders of magnitude: before this bound existed, 40,000 spaces cost `/api/check`
14 s, about 100,000 units, and a quadratic pattern's units grow with the text's length.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from claimcheck.claims import split_claims
from claimcheck.critics.base import blank_code, citation_markers
from claimcheck.critics.citation_gate import numbered, paths, quotes
from claimcheck.judges.local import clauses, encoding, lexicon
from claimcheck.judges.local import sources as judge_sources
from dashboard.api import BODY_TOO_BIG
from dashboard.markdown import EMBED_NESTED, EMBED_SHOWN_ABOVE, EMBED_TOO_LONG, QUOTE_DEPTH, render_markdown
from garden.answering.asking import QuestionError, question_clean
from garden.answering.preflight import preflight
from garden.formats.gardening import editor_markup_removed
from garden.formats.markdown import ArticleFileError, parse_article_text
from garden.formats.org.reading import parse_org_text
from garden.models import Article, ArticleRevision, Link, Passage
from garden.passages import Span, passage_spans
from providers.embeddings import DIMENSIONS
from text.markup import citation_numbers, strip_citations
from verifier.checking import CheckError, check_text_clean

# Long enough that every pattern that was quadratic took minutes here (seconds at 20,000 characters, so 150 times
# as long at this size), short enough that the 300 texts below cost the suite a minute of CPU, not four (at 1 MB).
SIZE = 250_000
# A linear entry point takes a few to a hundred units on these texts; a quadratic one takes 10,000s.
OVER_LONG = 1_000_000  # a text far over every limit, refused before any other work
UNITS_ALLOWED = 400

# Each piece repeated to SIZE characters after one letter: runs of one character and openers without a close.
PIECES = {
    "spaces": " ",
    "tabs": "\t",
    "newlines": "\n",
    "spaces and newlines": " \n",
    "tabs and newlines": "\t\n",
    "opening brackets": "[",
    "opening parentheses": "(",
    "wikilink openers": "[[",
    "block reference openers": "((",
    "embed openers": "![[",
    "pipes": "|",
    "backticks": "`",
    "fences with info": "```a\n",
    "comment openers": "%%",
    "html comment openers": "<!--",
    "highlight openers": "==a ",
    "field markers": "::",
    "inline field openers": "[x:: ",
    "hashes": "#",
    "heading with hashes": "# a#",
    "stars": "*",
    "digits": "1",
    "citation openers": "[1, ",
    "link openers": "[a](b",
    "curly quote openers": "“a ",
    "quotes": '"',
    "sentence ends": "a. ",
    "dashes": "- ",
    "path citations": "a/b:1 - ",
}


def _text(piece: str, size: int = SIZE) -> str:
    return "x" + piece * (size // len(piece))


def _unit(text: str) -> float:
    """CPU seconds for a plain linear scan of `text`, the least of three runs."""
    best = float("inf")
    for _ in range(3):
        began = time.process_time()
        len(re.findall(r"\w+", text))
        text.split()
        text.count("x")
        best = min(best, time.process_time() - began)
    return best


def _judge_text_preparation(text: str) -> None:
    """The local judge's parsing and splitting, without the model: a source cut into pieces (at most 60 words,
    what the model and the clause reading then see), its digits, words, and the gaps between them."""
    judge_sources._piece_spans(text)
    lexicon.split_words(encoding._ascii_digits(strip_citations(text)))
    clauses._gaps(text)


def _citation_gate_parsers(text: str) -> None:
    citation_markers(text)
    list(numbered._claims(text))
    list(quotes._QUOTE.finditer(blank_code(text)))
    list(paths.audit_paths(text, None))


def _imported(text: str) -> Any:
    try:
        return parse_article_text(text, path="adversarial.md", slug="adversarial")
    except ArticleFileError:
        return None  # refused with a reason is an answer too; the time is what counts


def _imported_org(text: str) -> Any:
    try:
        return parse_org_text(text, path="adversarial.org", place="adversarial")
    except ArticleFileError:
        return None


# Org's own openers, read by the Org format only: emphasis and verbatim marks that never close, blocks and
# drawers that never end, headings, links.
ORG_PIECES = {
    "org emphasis openers": " *a",
    "org italic openers": " /a",
    "org verbatim openers": " =a",
    "org block openers": "#+BEGIN_SRC\n",
    "org drawer openers": ":a:\n",
    "org headings": "* a\n",
    "org link openers": "[[file:a",
    "org keywords": "#+a: b\n",
}


ENTRY_POINTS: dict[str, Callable[[str], Any]] = {
    "pre-flight": preflight,
    "check text preparation": strip_citations,
    "citation numbers": citation_numbers,
    "note import": _imported,
    "org note import": _imported_org,
    "editor markup": editor_markup_removed,
    "passage splitting": passage_spans,
    "claim splitting": split_claims,
    "citation gate parsers": _citation_gate_parsers,
    "judge text preparation": _judge_text_preparation,
    "page rendering": render_markdown,
}


def _units(entry_point: Callable[[str], Any], text: str, tries: int = 3) -> float:
    """The CPU time of `entry_point(text)` in units. This process's own time, so that the other test processes
    on the same cores do not count; over the bound, tried again (up to `tries` times) and the least taken, as a
    pause for the collector or a cold cache is not the code's. A quadratic pattern misses it every time."""
    least = float("inf")
    for _ in range(tries):
        began = time.process_time()
        entry_point(text)
        least = min(least, (time.process_time() - began) / _unit(text))
        if least < UNITS_ALLOWED:
            break
    return least


@pytest.mark.slow
@pytest.mark.parametrize("piece", PIECES.values(), ids=PIECES.keys())
@pytest.mark.parametrize("entry_point", ENTRY_POINTS.values(), ids=ENTRY_POINTS.keys())
def test_every_text_entry_point_is_linear_in_adversarial_text(
    entry_point: Callable[[str], Any], piece: str
) -> None:
    units = _units(entry_point, _text(piece))
    assert units < UNITS_ALLOWED, f"{units:.0f} units of a plain scan for {SIZE:,} characters of {piece!r}"


@pytest.mark.slow
@pytest.mark.parametrize("piece", ORG_PIECES.values(), ids=ORG_PIECES.keys())
def test_org_import_is_linear_in_adversarial_org_text(piece: str) -> None:
    units = _units(_imported_org, _text(piece))
    assert units < UNITS_ALLOWED, f"{units:.0f} units of a plain scan for {SIZE:,} characters of {piece!r}"


@pytest.mark.xfail(
    reason="Left open: Python-Markdown's getLink reads a link destination from every `[a](` to where it "
    "closes, so many openers closed once at the end still cost their number squared",
    run=False,  # hours at this size
)
def test_page_rendering_of_link_openers_closed_once_at_the_end_is_linear() -> None:
    text = _text("[a](b") + ")"
    assert _units(render_markdown, text) < UNITS_ALLOWED


# The cases that were quadratic before (seconds for 20,000 characters then; minutes to hours at SIZE).
KNOWN_QUADRATIC = [
    (strip_citations, " "),  # /api/check's citation stripping: 40,000 spaces took 14 s
    (editor_markup_removed, "\t"),  # the import's comment pattern: 40,000 spaces took 7.7 s
    (_imported, "[["),  # wikilinks: 20,000 characters of `[[` took 14 s
    (editor_markup_removed, "<!--"),
    (editor_markup_removed, "[x:: "),
    (editor_markup_removed, "==a "),
    (_imported, "# a#"),
    (passage_spans, "```a\n"),  # fences that never close
    (_citation_gate_parsers, "`"),  # the critics' inline code
    (render_markdown, "["),  # 10,000 `[` took 20 s to render
    (render_markdown, "\n"),  # 1 MB of blank lines took 18.5 s
]


@pytest.mark.parametrize(("entry_point", "piece"), KNOWN_QUADRATIC)
def test_the_patterns_that_were_quadratic_are_linear(entry_point: Callable[[str], Any], piece: str) -> None:
    units = _units(entry_point, _text(piece))
    assert units < UNITS_ALLOWED, f"{units:.0f} units of a plain scan for {SIZE:,} characters of {piece!r}"


def test_an_over_long_question_is_refused_before_any_other_work() -> None:
    text = _text(" x", OVER_LONG)
    began = time.process_time()
    with pytest.raises(QuestionError, match="limited to 2,000 characters"):
        question_clean(text)
    assert time.process_time() - began < 50 * _unit(text)


def test_an_over_long_text_to_check_is_refused_before_any_other_work() -> None:
    text = _text(" ", OVER_LONG)
    began = time.process_time()
    with pytest.raises(CheckError, match="limited to 10,000 characters; this has 1,000,001"):
        check_text_clean(text)
    assert time.process_time() - began < 50 * _unit(text)


def test_the_limit_counts_the_text_as_sent_not_what_is_left_after_stripping_citations(settings: Any) -> None:
    settings.CHECK_MAX_CHARS = 30
    assert check_text_clean("The line reopened in 1990. [1]") == "The line reopened in 1990."
    with pytest.raises(CheckError, match="limited to 30 characters"):
        check_text_clean("The line reopened in 1990. [1][2]")


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ["/api/check", "/api/ask"])
def test_a_two_megabyte_body_is_refused_at_once_in_the_api_error_shape(client: Any, endpoint: str) -> None:
    body = '{"text": "' + " " * 2_000_000 + '"}'
    began = time.process_time()
    response = client.post(endpoint, body, content_type="application/json")
    assert time.process_time() - began < 0.5
    assert response.status_code == 413
    assert response.json() == {"error": BODY_TOO_BIG.format(limit=django_settings.REQUEST_MAX_BYTES)}


@pytest.mark.django_db
def test_an_over_long_text_sent_to_the_api_gets_the_clear_message_quickly(client: Any, settings: Any) -> None:
    settings.ANONYMOUS_CAN_CHECK = True
    body = '{"text": "' + " " * 400_000 + 'x"}'
    began = time.process_time()
    response = client.post("/api/check", body, content_type="application/json")
    assert time.process_time() - began < 0.5
    assert response.status_code == 400
    assert response.json() == {"error": "Text to check is limited to 10,000 characters; this has 400,001."}


@pytest.mark.django_db
def test_the_api_schema_states_the_limits_from_the_settings(client: Any) -> None:
    schemas = client.get("/api/openapi.json").json()["components"]["schemas"]
    assert schemas["AskIn"]["properties"]["question"]["maxLength"] == 2000
    assert schemas["CheckIn"]["properties"]["text"]["maxLength"] == 10_000


@pytest.mark.django_db
def test_the_ask_command_refuses_an_over_long_question_quickly() -> None:
    began = time.process_time()
    with pytest.raises(CommandError, match="limited to 2,000 characters"):
        call_command("ask", "x" * 100_000)
    assert time.process_time() - began < 0.5


def test_check_text_skips_an_over_long_line_with_its_reason(tmp_path: Path, capsys: Any) -> None:
    lines = tmp_path / "in.jsonl"
    lines.write_text(
        '{"id": "long", "source": "The line reopened in 1990.", "text": "' + " " * 20_000 + 'x"}\n'
    )
    with pytest.raises(CommandError, match="1 line"):
        call_command("check_text", "--jsonl", str(lines))
    assert (
        "line 1: skipped, the text is limited to 10,000 characters; this has 20,001"
        in capsys.readouterr().err
    )


@pytest.mark.django_db
def test_a_two_megabyte_form_is_refused_at_once(client: Any) -> None:
    began = time.process_time()
    response = client.post("/", {"question": " " * 2_000_000})
    assert time.process_time() - began < 0.5
    assert response.status_code == 400


# An article page renders within a budget whatever its note writes: embeds, nested callouts, anchored links.
EMBEDS = 1000
LARGE_NOTE = "The large note's own words. " * (2_000_000 // 28)
# A link in place of an embed, with its title and words, is under this many bytes of the page.
EMBED_LINK_BYTES = 200
# The page around the article (navigation, the revisions aside, ...) is under this.
PAGE_BYTES = 20_000


def _note(
    title: str, body: str, *, passages: str = "spans", links: dict[str, Article] | None = None
) -> Article:
    """A live note with its current revision, its passages (cut as an import cuts them, or `one` passage) and
    its links (as written -> the article each resolved to)."""
    slug = title.lower().replace(" ", "-")
    article = Article.objects.create(slug=slug, title=title, path=f"{title}.md")
    revision = ArticleRevision.objects.create(article=article, title=title, body=body, content_hash=slug)
    spans = passage_spans(body) if passages == "spans" else [Span(0, len(body))]
    Passage.objects.bulk_create(
        Passage(
            revision=revision,
            article=article,
            ordinal=ordinal,
            text=span.of(body),
            start=span.start,
            end=span.end,
            embedding=[1.0] + [0.0] * (DIMENSIONS - 1),
            embedded_by="test",
        )
        for ordinal, span in enumerate(spans)
    )
    for written, target in (links or {}).items():
        Link.objects.create(source=article, target=target, target_slug=target.slug, written=[written])
    return article


def _queries(client: Any, article: Article) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(article.get_absolute_url()).status_code == 200
    return len(captured.captured_queries)


@pytest.mark.django_db
def test_a_thousand_embeds_of_a_two_megabyte_note_are_links_in_a_page_of_their_size(
    client: Any, django_assert_max_num_queries: Any
) -> None:
    large = _note("Large", LARGE_NOTE, passages="one")
    once = _note("Embeds once", "![[Large]]\n", links={"large": large})
    page = _note("Embeds", "![[Large]]\n\n" * EMBEDS, passages="one", links={"large": large})
    with django_assert_max_num_queries(_queries(client, once)):
        response = client.get(page.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    assert "own words" not in html  # before: 1,000 copies of 2 MB, 2 GB of HTML
    assert html.count(EMBED_TOO_LONG.format(link=f'<a href="{large.get_absolute_url()}">Large</a>')) == EMBEDS
    assert len(response.content) < PAGE_BYTES + EMBEDS * EMBED_LINK_BYTES


@pytest.mark.django_db
def test_a_page_shows_each_embedded_note_once_and_all_of_them_within_its_budget(client: Any) -> None:
    budget = django_settings.EMBED_MAX_CHARS
    notes = [_note(f"Part {n}", f"Words of part {n}. " * (budget * 4 // 10 // 17)) for n in range(3)]
    # Embedded across many passages: what a page shows is counted for the page, not for each passage.
    body = "".join(f"![[Part {n % 3}]]\n\n" for n in range(EMBEDS))
    page = _note("Parts", body, links={f"part {n}": note for n, note in enumerate(notes)})
    assert page.passages.count() > 3
    response = client.get(page.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    # Two of the three fit the budget and are shown once; each later embed of them says it is shown above.
    assert [html.count(f"Words of part {n}.") for n in range(3)] == [budget * 4 // 10 // 17] * 2 + [0]
    for n in range(2):
        link = f'<a href="{notes[n].get_absolute_url()}">Part {n}</a>'
        assert html.count(EMBED_SHOWN_ABOVE.format(link=link)) == len(range(n, EMBEDS, 3)) - 1
    third = f'<a href="{notes[2].get_absolute_url()}">Part 2</a>'
    assert html.count(EMBED_TOO_LONG.format(link=third)) == len(range(2, EMBEDS, 3))
    assert len(response.content) < PAGE_BYTES + 2 * budget + EMBEDS * EMBED_LINK_BYTES


@pytest.mark.django_db
def test_the_thousand_embeds_of_an_embedded_note_are_links_one_level_down(
    client: Any, django_assert_max_num_queries: Any
) -> None:
    inner = _note("Inner", "The inner note's own words.\n")
    outer = _note(
        "Outer",
        "The outer note's words.\n\n" + "![[Inner]]\n\n" * EMBEDS,
        passages="one",
        links={"inner": inner},
    )
    page = _note("Embeds outer", "![[Outer]]\n", links={"outer": outer})
    plain = _note("Plain", "Plain words.\n")
    once = _note("Embeds plain", "![[Plain]]\n", links={"plain": plain})
    with django_assert_max_num_queries(_queries(client, once)):  # the inner note is never loaded
        response = client.get(page.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("The outer note's words.") == 1
    assert "inner note's own words" not in html
    link = f'<a href="{inner.get_absolute_url()}">Inner</a>'
    assert html.count(EMBED_NESTED.format(link=link)) == EMBEDS
    assert len(response.content) < PAGE_BYTES + EMBEDS * EMBED_LINK_BYTES


@pytest.mark.django_db
def test_a_thousand_nested_callouts_render_to_a_fixed_depth(client: Any) -> None:
    body = "".join("> " * level + f"[!note] Level {level}\n" for level in range(1, EMBEDS + 1))
    page = _note("Callouts", body, passages="one")
    response = client.get(page.get_absolute_url())
    assert response.status_code == 200  # before: a RecursionError, a 500
    html = response.content.decode()
    assert html.count('class="callout callout-note"') == QUOTE_DEPTH
    assert "Level 1</p>" in html and f"Level {EMBEDS}" in html  # the deepest ones are still there, as text
    assert len(response.content) < PAGE_BYTES + len(body) // 10  # the markers past the depth are not shown


@pytest.mark.django_db
def test_a_thousand_anchored_links_land_on_their_passages_in_the_queries_of_one(
    client: Any, django_assert_max_num_queries: Any
) -> None:
    handbook = _note(
        "Handbook", "".join(f"## Section {n}\n\nWhat section {n} says.\n\n" for n in range(EMBEDS))
    )
    once = _note("Links once", "[[Handbook#Section 7]]\n", links={"handbook": handbook})
    body = "".join(f"[[Handbook#Section {n}]] " for n in range(EMBEDS))
    page = _note("Links", body, passages="one", links={"handbook": handbook})
    with django_assert_max_num_queries(_queries(client, once)):  # before: two more for each link
        response = client.get(page.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    for n in (0, 499, EMBEDS - 1):
        passage = handbook.passages.get(text__contains=f"What section {n} says.")
        assert f'<a href="{passage.get_absolute_url()}" rel="noopener noreferrer">Handbook</a>' in html
    assert len(response.content) < PAGE_BYTES + EMBEDS * EMBED_LINK_BYTES
