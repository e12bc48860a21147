"""PDFs are notes too: read by their text layer, cut into passages by page, retrieved, cited as "title, p. N" and opened
at that page; scans are skipped, encrypted or broken files fail with their reason; private rules apply."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from pypdf import PageObject

from garden.answering.asking import question_ask
from garden.formats.pdf import reading as pdfs
from garden.formats.pdf import text_layer as pdf_text
from garden.formats.pdf.reading import (
    NO_TEXT_LAYER,
    PDF_BROKEN,
    PDF_ENCRYPTED,
    PDF_TOO_LARGE,
    PDF_TOO_MANY_PAGES,
    PDF_TOO_SLOW,
)
from garden.models import Answer, Article, Passage
from garden.sync import garden_import
from garden.walk import SkipKind
from tests.factories import garden_write
from tests.garden.pdfmaker import SCANNED, pdf_write
from tests.garden.vault_pdfs import MANUAL, STUDY, STUDY_TITLE, VAULT
from verifier.models import Verification
from verifier.queueing import verification_create
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

THIRTY_ONE = "thirty-one percent of the untreated colonies"
QUESTION = "How many untreated colonies were lost over the winter in the varroa study?"


@pytest.fixture
def vault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """The test vault with PDFs, imported through the command (which raises on any failure)."""
    folder = tmp_path / "vault"
    shutil.copytree(VAULT, folder)
    call_command("import_garden", str(folder), "--no-progress")
    return folder, capsys.readouterr().out


def study() -> Article:
    return Article.objects.get(path="Papers/Varroa study.pdf")


def test_a_vault_with_pdfs_imports_them_by_page_and_leaves_out_scans_and_private_ones(vault):
    folder, out = vault
    assert "Skipped 3: 2 in private places, 1 scanned PDF." in out
    assert f"Skipped {folder / 'Scans' / 'Swarm letter 1987.pdf'}: {NO_TEXT_LAYER}" in out
    assert study().title == STUDY_TITLE  # the metadata title
    assert Article.objects.get(path="Manuals/Honey extractor manual.pdf").title == "Honey extractor manual"
    assert Article.objects.filter(path="Apiary/Hive inspections").exists()  # the notes beside them
    pages = {passage.page for passage in study().passages.filter(is_current=True)}
    assert pages == {1, 2, 3}
    result = study().passages.get(is_current=True, text__contains=THIRTY_ONE)
    assert result.page == 2 and result.cited_as == f"{STUDY_TITLE}, p. 2"
    # A sentence printed across two lines is one sentence in its passage.
    assert "lost nine percent over the winter, against thirty-one percent" in result.text
    # Notes' passages have no page.
    assert not Passage.objects.filter(article__path="Apiary/Hive inspections", page__isnull=False).exists()


def test_no_passage_runs_across_two_pages(vault):
    for passage in Passage.objects.filter(article=study(), is_current=True):
        assert passage.page is not None
        page_text = " ".join(STUDY[passage.page - 1])
        assert all(word in page_text for word in passage.text.split()), passage.text


def test_a_question_is_answered_from_a_pdf_and_cited_by_its_page(vault, client, settings):
    settings.ANTHROPIC_API_KEY = ""  # the local synthesiser: no model call
    answer = question_ask(text=QUESTION)
    assert not answer.refused and "thirty-one percent" in answer.text
    cited = next(s for s in answer.sources.all() if s.passage.article_id == study().pk)
    assert cited.passage.page == 2

    page = client.get(answer.get_absolute_url()).content.decode()
    link = f"{study().get_absolute_url()}#page-2"
    assert f'<a href="{link}">{STUDY_TITLE}, p. 2</a>' in page

    # The link opens the article at that page, which shows that page's text, and the next page after it.
    article_page = client.get(link.split("#")[0]).content.decode()
    at_page = article_page.index('id="page-2"')
    assert article_page.index(THIRTY_ONE) > at_page
    assert article_page.index('id="page-3"') > article_page.index(THIRTY_ONE)
    assert article_page.index("This study followed 212 colonies") < at_page

    body = client.get(f"/api/answers/{answer.public_id}").json()
    citation = next(c for c in body["citations"] if c["article"] == study().slug)
    assert (citation["page"], citation["cited_as"]) == (2, f"{STUDY_TITLE}, p. 2")
    assert citation["url"].endswith("#page-2")


def test_the_ask_command_cites_a_pdf_by_its_page(vault, settings, capsys):
    settings.ANTHROPIC_API_KEY = ""
    call_command("ask", QUESTION)
    assert f"{STUDY_TITLE}, p. 2 ({study().slug})" in capsys.readouterr().out


def test_the_judge_quotes_a_pdf_passage_like_any_other(vault, client, settings):
    settings.ANTHROPIC_API_KEY = ""
    settings.VERIFIER_MODE = "local"
    answer = question_ask(text=QUESTION)
    verification = verification_create(answer=Answer.objects.get(pk=answer.pk))
    assert verification is not None
    verification_run(verification_id=verification.pk)
    verification = Verification.objects.get(pk=verification.pk)
    from_pdf = [
        c for c in verification.claims.all() if c.passage is not None and c.passage.article_id == study().pk
    ]
    verified = [c for c in from_pdf if c.status == "verified"]
    assert verified, [(c.text, c.status) for c in verification.claims.all()]
    assert all(
        c.passage is not None and c.quote and c.quote in c.passage.text for c in verified
    )  # the quote gate found it there
    page = client.get(answer.get_absolute_url()).content.decode()
    assert f"{STUDY_TITLE}, p. 2</a>" in page and "#page-2" in page


def test_a_private_pdf_is_never_read_and_its_words_are_nowhere(vault, client, settings):
    settings.ANTHROPIC_API_KEY = ""
    assert not Article.objects.filter(path__startswith="Receipts/").exists()
    assert not Passage.objects.filter(text__contains="ZEPHYRPDF").exists()
    answer = question_ask(text="Which queens were on order 7719 ZEPHYRPDF, and how were they paid?")
    assert "ZEPHYRPDF" not in answer.text and "4471" not in answer.text
    assert not any("Queen order" in s.passage.article.title for s in answer.sources.all())


def test_an_unchanged_pdf_is_not_read_again_an_edited_one_is_and_a_removed_one_retires(tmp_path, monkeypatch):
    folder = tmp_path / "g"
    garden_write(folder, {"Notes.md": "The apiary has six hives."})
    pdf = pdf_write(folder / "Manual.pdf", MANUAL)
    call_command("import_garden", str(folder), "--no-progress")
    manual = Article.objects.get(path="Manual.pdf")
    assert manual.revisions.count() == 1

    read: list[bytes] = []
    reading = pdfs.text_layer_bounded

    def counted(data: bytes, **caps: Any) -> tuple[str, list[str]]:
        read.append(data)
        return reading(data, **caps)

    monkeypatch.setattr(pdfs, "text_layer_bounded", counted)
    report = garden_import([folder])
    assert (report.created, report.revised, report.unchanged) == (0, 0, 2)
    assert read == []  # its bytes were imported before: not read again
    assert manual.title == "Manual" and Article.objects.get(pk=manual.pk).title == "Manual"

    pdf_write(pdf, [MANUAL[0], ["Run the extractor at no more than 250 revolutions per minute at first."]])
    report = garden_import([folder])
    assert report.revised == 1 and manual.revisions.count() == 2 and len(read) == 1
    assert manual.passages.filter(is_current=True, text__contains="250 revolutions", page=2).exists()

    pdf.unlink()
    report = garden_import([folder])
    assert report.retired == 1
    manual.refresh_from_db()
    assert manual.retired_at is not None


def test_a_pdf_moved_into_a_private_place_is_withheld(tmp_path):
    folder = tmp_path / "g"
    garden_write(folder, {"Notes.md": "The apiary has six hives.", "Hives.md": "Hive four is queenless."})
    pdf = pdf_write(folder / "Manual.pdf", MANUAL)
    garden_import([folder])
    (folder / "_private").mkdir()
    pdf.rename(folder / "_private" / "Manual.pdf")
    report = garden_import([folder])
    manual = Article.objects.get(path="Manual.pdf")
    assert manual.withheld and report.withheld == 1 and report.retired == 0
    assert not Passage.objects.filter(article=manual, is_current=True).exists()


def test_a_scanned_pdf_is_skipped_and_an_encrypted_or_broken_one_fails_with_its_reason(tmp_path, capsys):
    folder = tmp_path / "g"
    garden_write(folder, {"Notes.md": "The apiary has six hives."})
    pdf_write(folder / "Scan.pdf", [SCANNED])
    pdf_write(folder / "Locked.pdf", MANUAL, password="bees")
    pdf_write(folder / "Open.pdf", MANUAL, password="")  # protected by an empty password: readers open it
    (folder / "Broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\ngarbage")
    (folder / "Not a pdf.pdf").write_bytes(b"\x00\x01 a file named .pdf that is nothing of the kind")

    report = garden_import([folder])
    assert [(Path(path).name, kind) for path, kind, _ in report.skipped] == [
        ("Scan.pdf", SkipKind.SCANNED_PDF)
    ]
    failures = {Path(path).name: reason for path, reason in report.failures}
    assert failures["Locked.pdf"] == PDF_ENCRYPTED
    assert failures["Broken.pdf"].startswith(PDF_BROKEN.split("(")[0])
    assert failures["Not a pdf.pdf"].startswith(PDF_BROKEN.split("(")[0])
    assert set(failures) == {"Locked.pdf", "Broken.pdf", "Not a pdf.pdf"}
    assert Article.objects.filter(path__in=["Notes", "Open.pdf"]).count() == 2

    with pytest.raises(CommandError) as failed:
        call_command("import_garden", str(folder), "--no-progress")
    assert failed.value.returncode == 1
    errors = capsys.readouterr().err
    assert f"FAILED {folder / 'Locked.pdf'}: {PDF_ENCRYPTED}" in errors
    assert "Scan.pdf" not in errors


def test_the_caps_come_from_settings_and_are_checked_before_pages_are_read(tmp_path, settings, monkeypatch):
    folder = tmp_path / "g"
    garden_write(folder, {"Notes.md": "The apiary has six hives."})
    long = pdf_write(folder / "Long.pdf", [["Page one."], ["Page two."], ["Page three."]])
    pdf_write(folder / "Large.pdf", [["A large file. " * 400]])
    settings.GARDEN_PDF_MAX_PAGES = 2
    size = (folder / "Large.pdf").stat().st_size
    settings.GARDEN_PDF_MAX_BYTES = size - 1
    read: list[bytes] = []
    reading = pdfs.text_layer_bounded

    def counted(data: bytes, **caps: Any) -> tuple[str, list[str]]:
        read.append(data)
        return reading(data, **caps)

    monkeypatch.setattr(pdfs, "text_layer_bounded", counted)

    report = garden_import([folder])
    reasons = {Path(path).name: (kind, reason) for path, kind, reason in report.skipped}
    assert reasons["Long.pdf"] == (SkipKind.PDF_OVER_CAP, PDF_TOO_MANY_PAGES.format(pages=3, limit=2))
    assert reasons["Large.pdf"] == (
        SkipKind.PDF_OVER_CAP,
        PDF_TOO_LARGE.format(size=f"{size:,} bytes", limit=f"{size - 1:,} bytes"),
    )
    assert not report.failures
    assert read == [long.read_bytes()]  # the large one was never read: its size told

    # The page count is known before any page's text is read (here in this process, to watch it).
    extracted: list[PageObject] = []
    original = PageObject.extract_text

    def extract(page: PageObject, *args: Any, **kwargs: Any) -> str:
        extracted.append(page)
        return original(page, *args, **kwargs)

    monkeypatch.setattr(PageObject, "extract_text", extract)
    with pytest.raises(pdf_text.Unreadable) as unreadable:
        pdf_text.text_layer(long.read_bytes(), 2)
    assert unreadable.value.said == {"page_count": 3} and extracted == []
    assert pdf_text.text_layer(long.read_bytes(), 3)[1] == ["Page one.", "Page two.", "Page three."]
    assert len(extracted) == 3


def test_a_pdf_that_takes_too_long_to_read_is_stopped_and_fails_while_the_sync_goes_on(tmp_path, settings):
    folder = tmp_path / "g"
    garden_write(folder, {"Notes.md": "The apiary has six hives."})
    pdf_write(folder / "Manual.pdf", MANUAL)
    settings.GARDEN_PDF_MAX_SECONDS = 0.0  # no reader finishes in no time: stopped, whatever it was doing
    report = garden_import([folder])
    assert report.failures == [(str(folder / "Manual.pdf"), PDF_TOO_SLOW.format(seconds=0.0))]
    assert Article.objects.filter(path="Notes").exists()


def test_a_wikilink_to_a_pdf_links_to_its_article(tmp_path, client):
    folder = garden_write(
        tmp_path / "g", {"Reading.md": "Start with [[Hive study.pdf]], then [[Absent.pdf]]."}
    )
    pdf_write(folder / "Papers" / "Hive study.pdf", [["Colonies were weighed weekly."]])
    report = garden_import([folder])
    assert report.failures == []
    study = Article.objects.get(path="Papers/Hive study.pdf")
    reading = Article.objects.get(path="Reading")
    assert [link.target for link in reading.links_out.all() if link.target] == [study]
    page = client.get(reading.get_absolute_url()).content.decode()
    assert f'<a href="{study.get_absolute_url()}" rel="noopener noreferrer">Hive study.pdf</a>' in page
    assert '<span class="red-link" title="No note of this name in the garden">Absent.pdf' in page
