"""Withheld by identity, not by address: a note's article is the same article whatever its slug came from (a
`slug:` line, a clash's suffix, its title in a Logseq graph), so making the note private, broken or unreadable
withholds that article, never retires it (a retired article stays readable); and a public note never takes
over a withheld note's address, its old revisions or the answers quoting them."""

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from garden.answering.retrieval import retrieve
from garden.models import Article
from garden.sync import garden_import
from tests.factories import answer_for, garden_write
from tests.garden.test_private_stays_private import client_as

pytestmark = pytest.mark.django_db

SECRET = "Quillmartin"
BODY = (
    f"The pay review of 2025 gives every engineer on band {SECRET} a raise of eleven percent. "
    "The review committee meets in the glasshouse every March to set the bands."
)
QUESTION = f"What raise does band {SECRET} get in the pay review of 2025?"


@dataclass(frozen=True)
class SlugSource:
    files: dict[str, str]  # the garden
    note: str  # the file of the note made private
    place: str  # its article's path

    def article(self) -> Article:
        return Article.objects.get(path=self.place)


SOURCES = {
    # Hugo and Jekyll write a post's address in its front matter.
    "slug-line": SlugSource(
        {"posts/pay.md": f"---\nslug: pay-review\ntitle: Salary bands\n---\n{BODY}"},
        "posts/pay.md",
        "posts/pay",
    ),
    # `A b.md` keeps `a-b`; `a-b.md` is told apart by a hash of its path.
    "clash-suffix": SlugSource(
        {"A b.md": "# A b\n\nThe orchard ledger lists the apple trees by row.", "a-b.md": f"# Pay\n\n{BODY}"},
        "a-b.md",
        "a-b",
    ),
    # A Logseq page's address comes from its `title::`.
    "logseq-title": SlugSource(
        {"logseq/config.edn": "{}\n", "pages/pay.md": f"title:: Salary bands\n\n- {BODY}\n"},
        "pages/pay.md",
        "pages/pay",
    ),
}


def _front_matter_or_properties(text: str, front: str, properties: str) -> str:
    """`front` put into the note's front matter if it has one, else `properties` put before its first block."""
    return text.replace("---\n", f"---\n{front}", 1) if text.startswith("---\n") else properties + text


def make_private_by_flag(garden: Path, note: str) -> None:
    text = (garden / note).read_text()
    garden_write(garden, {note: _front_matter_or_properties(text, "draft: true\n", "private:: true\n")})


def make_private_by_gardenignore(garden: Path, note: str) -> None:
    garden_write(garden, {".gardenignore": f"{note}\n"})


def make_private_by_dot_folder(garden: Path, note: str) -> None:
    (garden / ".private" / note).parent.mkdir(parents=True)
    (garden / note).rename(garden / ".private" / note)


def make_private_by_logseq_property(garden: Path, note: str) -> None:
    text = (garden / note).read_text()
    if text.startswith("---\n"):
        end = text.index("\n---\n", 4) + len("\n---\n")
        text = f"{text[:end]}public:: false\n{text[end:]}"
    else:
        text = f"public:: false\n{text}"
    garden_write(garden, {note: text})


def make_private_by_broken_front_matter(garden: Path, note: str) -> None:
    text = (garden / note).read_text()
    broken = "title: Pay review: 2025\nprivate: true\n"
    if text.startswith("---\n"):
        garden_write(garden, {note: text.replace("---\n", f"---\n{broken}", 1)})
    else:
        garden_write(garden, {note: f"---\n{broken}---\n{text}"})


def make_unreadable(garden: Path, note: str) -> None:
    garden_write(garden, {note: (garden / note).read_bytes() + b"\xff\xfe not UTF-8"})


WAYS: dict[str, Callable[[Path, str], None]] = {
    "flag": make_private_by_flag,
    "gardenignore": make_private_by_gardenignore,
    "dot-folder": make_private_by_dot_folder,
    "logseq-public-false": make_private_by_logseq_property,
    "broken-front-matter": make_private_by_broken_front_matter,
    "unreadable": make_unreadable,
}


def shown_to_a_reader(article: Article, revision: int, answer_url: str) -> list[int]:
    reader = client_as("reader")
    page = article.get_absolute_url()
    return [reader.get(path).status_code for path in (page, f"{page}?revision={revision}", answer_url)]


def retrieved(article: Article) -> bool:
    return article.pk in {hit.article_id for hit in retrieve(QUESTION).sources}


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize("source", list(SOURCES))
def test_a_note_made_private_is_withheld_under_the_address_it_was_imported_with(tmp_path, source, way):
    slug_source = SOURCES[source]
    garden = garden_write(tmp_path / "garden", slug_source.files)
    garden_import([garden])
    article = slug_source.article()
    assert article.slug != Path(slug_source.place).name  # the address is not the one its path gives
    others = set(Article.objects.exclude(pk=article.pk).values_list("pk", flat=True))
    old = article.revisions.get(superseded=False)
    passage = article.passages.get(is_current=True, text__contains=SECRET)
    answer = answer_for(f"Band {SECRET} gets a raise of eleven percent [1].", passage)
    garden_write(garden, {slug_source.note: (garden / slug_source.note).read_text() + "\n\nEdited once."})
    garden_import([garden])  # `?revision=` of the first text is an old revision now
    assert shown_to_a_reader(article, old.pk, answer.get_absolute_url()) == [200, 200, 200]
    original = (garden / slug_source.note).read_bytes()

    WAYS[way](garden, slug_source.note)
    report = garden_import([garden])

    article.refresh_from_db()
    assert article.withheld and article.retired_at is None, report
    assert report.retired == 0
    assert shown_to_a_reader(article, old.pk, answer.get_absolute_url()) == [404, 404, 404]
    assert not retrieved(article)
    # The note whose address its path would give (`a-b`, beside `A b.md`) is not withheld in its place.
    assert not Article.objects.filter(pk__in=others, withheld_at__isnull=False).exists()

    (garden / ".gardenignore").unlink(missing_ok=True)
    shutil.rmtree(garden / ".private", ignore_errors=True)
    (garden / slug_source.note).write_bytes(original)
    garden_import([garden])
    article.refresh_from_db()
    assert not article.withheld
    assert shown_to_a_reader(article, old.pk, answer.get_absolute_url()) == [200, 200, 200]
    assert retrieved(article)


POST = f"---\nslug: pay-review\ntitle: Salary bands\n---\n{BODY}"
TAKER = (
    "---\nslug: pay-review\ntitle: Office plants\n---\nThe office plants are watered on Mondays by the rota."
)


@pytest.fixture
def withheld_post(tmp_path: Path) -> tuple[Path, Article, int, str]:
    """A Hugo post at `/articles/pay-review/`, with an answer citing it and an old revision, made a draft."""
    garden = garden_write(tmp_path / "garden", {"posts/pay.md": POST, "Handbook.md": "# Handbook\n\nHello."})
    garden_import([garden])
    article = Article.objects.get(slug="pay-review")
    old = article.revisions.get(superseded=False)
    answer = answer_for("Band gets eleven percent [1].", article.passages.get(text__contains=SECRET))
    garden_write(garden, {"posts/pay.md": POST + "\n\nThe bands are reviewed again in the autumn."})
    garden_import([garden])
    make_private_by_flag(garden, "posts/pay.md")
    garden_import([garden])
    article.refresh_from_db()
    assert article.withheld
    return garden, article, old.pk, answer.get_absolute_url()


def test_a_public_note_never_takes_over_a_withheld_notes_address(withheld_post):
    garden, article, revision, answer_url = withheld_post
    garden_write(garden, {"plants.md": TAKER})

    report = garden_import([garden])

    article.refresh_from_db()
    assert article.withheld and article.title == "Salary bands"
    assert shown_to_a_reader(article, revision, answer_url) == [404, 404, 404]
    taker = Article.objects.get(path="plants")
    assert taker.slug.startswith("pay-review-") and not taker.withheld
    assert client_as("reader").get(taker.get_absolute_url()).status_code == 200
    notices = [reason for path, reason in report.notices if path.endswith("plants.md")]
    assert notices and "pay-review" in notices[0] and taker.slug in notices[0]
    # Sync after sync, the taker keeps its own address and the withheld note stays withheld.
    garden_import([garden])
    article.refresh_from_db()
    assert article.withheld and Article.objects.get(path="plants").slug == taker.slug


def test_a_withheld_note_deleted_since_keeps_its_address_from_a_newcomer(withheld_post):
    garden, article, revision, answer_url = withheld_post
    (garden / "posts/pay.md").unlink()
    garden_import([garden])
    garden_write(garden, {"plants.md": TAKER})

    garden_import([garden])

    article.refresh_from_db()
    assert article.withheld
    assert shown_to_a_reader(article, revision, answer_url) == [404, 404, 404]
    assert Article.objects.get(path="plants").slug != "pay-review"


def test_the_withheld_note_made_public_again_keeps_its_address_and_the_taker_its_own(withheld_post):
    garden, article, revision, answer_url = withheld_post
    garden_write(garden, {"plants.md": TAKER})
    garden_import([garden])
    taker = Article.objects.get(path="plants").slug

    garden_write(garden, {"posts/pay.md": POST})
    garden_import([garden])

    article.refresh_from_db()
    assert article.slug == "pay-review" and not article.withheld
    assert shown_to_a_reader(article, revision, answer_url) == [200, 200, 200]
    assert Article.objects.get(path="plants").slug == taker
