"""Every title gets a readable, unique address: Cyrillic, Greek, CJK and accented names keep their letters, names
that still make one slug are told apart the same way on every sync, and ASCII slugs are what they always were."""

import random
import re
import string

import pytest

from garden.models import Article, Link
from garden.sync import garden_import
from tests.factories import garden_write
from text.markup import slugify

pytestmark = pytest.mark.django_db

NOTES = {
    "Пароли.md": "Пароли хранятся в сейфе. See [[日本語]] and [[Ελληνικά|the Greek note]].",
    "日本語.md": "日本語のノートです。 [[Пароли]] links back.",
    "Ελληνικά.md": "Ελληνικά κείμενα για τον κήπο.",
    "Café.md": "The café opens at nine. [[Caf]] is another note.",
    "Caf.md": "Caf is the cafeteria's short name.",
    "हिन्दी.md": "हिन्दी में एक नोट।",
    "🐝.md": "A note named with an emoji only.",
}


def test_names_in_any_script_keep_their_letters() -> None:
    assert slugify("Пароли") == "пароли"
    assert slugify("日本語") == "日本語"
    assert slugify("Ελληνικά") == "ελληνικά"
    assert slugify("Café") == "café" != slugify("Caf")
    assert slugify("Cafe\u0301") == "café"  # a name saved decomposed (macOS) is the same address
    assert slugify("हिन्दी") == "हिन्दी"  # vowel signs are part of the word, not separators
    assert slugify("Sync/Security and privacy") == "sync-security-and-privacy"


def test_ascii_slugs_are_what_they_always_were() -> None:
    def before(value: str) -> str:  # the slugify every stored ASCII slug was made with
        return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")

    rng = random.Random(22)
    names = ["projects.garden.design", "A_B c--d", "  Hive #3 (2025)! ", "100% honey", "x/y\\z", "---"]
    names += ["".join(rng.choices(string.printable, k=rng.randint(0, 40))) for _ in range(2000)]
    assert [slugify(name) for name in names] == [before(name) for name in names]


def test_every_note_imports_under_its_own_address_and_each_page_opens(tmp_path, client):
    folder = garden_write(tmp_path / "g", NOTES)
    report = garden_import([folder])
    assert report.failures == []

    articles = {a.path: a for a in Article.objects.filter(path__in=[n.removesuffix(".md") for n in NOTES])}
    assert {path: a.slug for path, a in articles.items() if path != "🐝"} == {
        "Пароли": "пароли",
        "日本語": "日本語",
        "Ελληνικά": "ελληνικά",
        "Café": "café",
        "Caf": "caf",
        "हिन्दी": "हिन्दी",
    }
    assert re.fullmatch(r"note-[0-9a-f]{8}", articles["🐝"].slug)

    listing = client.get("/articles/")
    assert listing.status_code == 200
    page = listing.content.decode()
    for article in articles.values():
        assert article.title in page and article.get_absolute_url() in page
        assert client.get(article.get_absolute_url()).status_code == 200

    passwords = articles["Пароли"]
    assert Link.objects.get(source=articles["日本語"]).target == passwords
    targets = set(Link.objects.filter(source=passwords).values_list("target__path", flat=True))
    assert targets == {"日本語", "Ελληνικά"}
    assert passwords.get_absolute_url() in client.get(articles["日本語"].get_absolute_url()).content.decode()
    assert Link.objects.get(source=articles["Café"]).target == articles["Caf"]


def test_names_that_make_one_slug_are_told_apart_the_same_way_on_every_sync(tmp_path):
    folder = garden_write(tmp_path / "g", {"a-b.md": "First.", "A b.md": "Second.", "Notes/x.md": "Third."})
    report = garden_import([folder])
    assert report.failures == []
    slugs = dict(Article.objects.filter(path__in=["a-b", "A b"]).values_list("path", "slug"))
    assert slugs["A b"] == "a-b"  # first by path
    assert re.fullmatch(r"a-b-[0-9a-f]{6}", slugs["a-b"])

    # A note arriving with the same slug, first by path, takes no address from the notes already there.
    garden_write(folder, {"A-B.md": "Fourth."})
    assert garden_import([folder]).failures == []
    after = dict(Article.objects.filter(path__in=["a-b", "A b", "A-B"]).values_list("path", "slug"))
    assert (after["A b"], after["a-b"]) == (slugs["A b"], slugs["a-b"])
    assert re.fullmatch(r"a-b-[0-9a-f]{6}", after["A-B"]) and after["A-B"] != after["a-b"]
