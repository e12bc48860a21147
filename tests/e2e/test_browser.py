"""What people see in a real browser: a reader asks and watches the verdict arrive, a refusal, an editor
resolving a flagged claim, an operator watching Verify-all reach its report, a visitor marking an answer and
reporting a claim; at desktop and phone widths. The README's screenshot is taken here too, of the first question it
tells a newcomer to ask (`README_SCREENSHOT=1` writes it to docs/images/answer.png: `make screenshot`)."""

import os
import re
import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from garden.models import Answer, Conversation, Passage
from tests.conftest import SAMPLE_FOLDERS, SAMPLE_IMPORT
from tests.e2e.conftest import SCREENSHOTS, screenshot
from tests.factories import answer_for
from verifier.marks import MARKED_UNHELPFUL, MARKED_WRONG
from verifier.queueing import verification_create
from verifier.verifying import verification_run

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDTHS = {"desktop": 1200, "phone": 390}
ROOT = Path(__file__).resolve().parent.parent.parent
README_IMAGE = ROOT / "docs" / "images" / "answer.png"
STATUS_LABELS = {"Verified", "Inferred", "Unverified", "Outdated", "Misattributed", "Contradicted"}


def fits_the_screen(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def csp_violations(page) -> list[str]:
    """The Content-Security-Policy violations the page reports in its console, as they happen."""
    violations: list[str] = []

    def heard(message) -> None:
        if "Content Security Policy" in message.text:
            violations.append(message.text)

    page.on("console", heard)
    return violations


def log_in(page, site, role):
    user = User.objects.create_user(f"{role}-e2e", password="correct horse battery staple", is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    page.goto(f"{site}/accounts/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", "correct horse battery staple")
    page.click("form.login button")


def test_a_reader_asks_sees_the_verdict_arrive_and_a_refusal(site, browser, celery_worker):
    call_command("import_garden", *SAMPLE_IMPORT, "--no-progress")
    for name, width in WIDTHS.items():
        page = browser.new_page(viewport={"width": width, "height": 900})
        violations = csp_violations(page)
        page.goto(f"{site}/")
        page.fill("#id_question", "Where does Harrowden Viaduct carry the railway?")
        page.click("form.ask button")
        page.wait_for_selector(".answer-text a.cite", timeout=30_000)
        assert "/answers/" in page.url  # htmx pushed the answer's own address
        page.wait_for_selector(".verdict-line", timeout=90_000)
        labels = set(page.locator("ol.claims summary .status .label").all_inner_texts())
        assert labels and labels <= STATUS_LABELS
        assert (
            page.locator("#answer-text-" + page.url.rstrip("/").split("/")[-1] + " .claim .label").count() > 0
        )
        page.locator("ol.claims details summary").first.click()
        assert page.locator("ol.claims details[open] blockquote.quote").first.is_visible()
        assert fits_the_screen(page)
        screenshot(page, f"reader-answer-{name}")

        page.goto(f"{site}/")
        page.fill("#id_question", "What is the boiling point of ethanol at sea level?")
        page.click("form.ask button")
        banner = page.wait_for_selector(".banner.refused", timeout=30_000)
        assert "Retrieval refused." in banner.inner_text() and "No model was called." in banner.inner_text()
        screenshot(page, f"reader-refusal-{name}")
        assert violations == []  # htmx and the pages ran under the policy with nothing blocked
        page.close()


def first_question() -> str:
    """The first question README.md tells a newcomer to ask of the sample garden: its first quoted line."""
    found = re.search(r"^> (.+\?)$", (ROOT / "README.md").read_text(encoding="utf-8"), re.MULTILINE)
    assert found, "README.md quotes no question to ask"
    return found.group(1)


def test_the_readme_screenshot_is_the_answer_to_its_first_question(site, browser, celery_worker):
    call_command("import_garden", *SAMPLE_IMPORT, "--no-progress")
    page = browser.new_page(viewport={"width": WIDTHS["desktop"], "height": 900})
    page.goto(f"{site}/")
    page.fill("#id_question", first_question())
    page.click("form.ask button")
    page.wait_for_selector(".answer-text a.cite", timeout=30_000)
    page.wait_for_selector(".verdict-line", timeout=90_000)
    assert "grounded" in page.inner_text(".verdict-line")  # the verdict the README describes
    page.locator("ol.claims details summary").first.click()  # a claim opened: its quote, source and votes
    screenshot(page, "readme-answer")
    # The README's: the page down to the answer's end (its sources and the follow-up box are below).
    shown = page.locator(".answer-layout").first.bounding_box()
    height = shown["y"] + shown["height"] + 16
    taken = SCREENSHOTS / "readme-answer-cut.png"
    page.screenshot(
        path=str(taken), full_page=True, clip={"x": 0, "y": 0, "width": WIDTHS["desktop"], "height": height}
    )
    if os.environ.get("README_SCREENSHOT"):
        shutil.copyfile(taken, README_IMAGE)
    page.close()


def test_a_link_saved_before_passages_were_renamed_still_lands_on_its_passage(site, browser):
    call_command("import_garden", *SAMPLE_IMPORT, "--no-progress")
    passage = Passage.objects.select_related("article").filter(is_current=True, page=None).latest("pk")
    page = browser.new_page(viewport={"width": WIDTHS["desktop"], "height": 600})
    violations = csp_violations(page)
    # The anchor passages had before: answers readers saved still link there.
    page.goto(f"{site}{passage.article.get_absolute_url()}#chunk-{passage.pk}")
    page.wait_for_function(f"window.location.hash === '#passage-{passage.pk}'", timeout=10_000)
    assert page.evaluate(f"document.getElementById('passage-{passage.pk}').matches(':target')")
    # Followed again from the page itself (a link clicked, a fragment typed), not only on load.
    page.evaluate(f"window.location.hash = '#chunk-{passage.pk}'")
    page.wait_for_function(f"window.location.hash === '#passage-{passage.pk}'", timeout=10_000)
    assert violations == []
    page.close()


def flagged_answer() -> Answer:
    article_passage = Passage.objects.filter(is_current=True).first()
    assert article_passage is not None
    answer = answer_for("The line was built by the Emperor of Mars in 1066 [1].", article_passage)
    verification = verification_create(answer=answer)
    assert verification is not None
    verification_run(verification_id=verification.pk)
    return answer


def test_an_editor_resolves_a_flagged_claim_and_an_operator_watches_verify_all(site, browser, celery_worker):
    call_command("import_garden", str(SAMPLE_FOLDERS[0]), "--no-progress")
    flagged_answer()
    page = browser.new_page(viewport={"width": WIDTHS["phone"], "height": 900})
    log_in(page, site, "editor")
    page.goto(f"{site}/review/")
    card = page.locator("ol.queue li.card").first
    assert "Emperor of Mars" in card.inner_text()
    card.get_by_role("button", name="Judge right").click()
    page.wait_for_selector("text=Decision recorded.", timeout=10_000)
    assert fits_the_screen(page)
    screenshot(page, "editor-review-phone")
    page.goto(f"{site}/review/")
    assert "Emperor of Mars" not in page.inner_text("main")  # decided claims leave the queue
    page.close()

    page = browser.new_page(viewport={"width": WIDTHS["desktop"], "height": 900})
    violations = csp_violations(page)
    log_in(page, site, "operator")
    page.goto(f"{site}/operators/runs/")
    page.fill("#run-label", "from the browser")
    page.click("text=Start a run")
    page.wait_for_selector("progress", timeout=10_000)
    screenshot(page, "operator-verify-all-running")
    page.wait_for_selector("text=Unverified claim rate (headline)", timeout=180_000)
    assert page.locator("progress").get_attribute("value") == page.locator("progress").get_attribute("max")
    screenshot(page, "operator-verify-all-report")
    assert violations == []
    page.close()


def test_a_reader_asks_two_follow_ups_and_the_out_of_scope_one_is_refused(site, browser, celery_worker):
    call_command("import_garden", *SAMPLE_IMPORT, "--no-progress")
    page = browser.new_page(viewport={"width": WIDTHS["desktop"], "height": 900})
    violations = csp_violations(page)
    page.goto(f"{site}/")
    page.fill("#id_question", "How long is Cold Knap Tunnel?")
    page.click("form.ask button")
    page.wait_for_selector("#turn-1 .answer-text a.cite", timeout=30_000)

    page.fill("#next_question", "When was it built?")
    page.click("form.follow-up button")
    searched = page.wait_for_selector("#turn-2 .searched-for", timeout=30_000)
    assert "How long is Cold Knap Tunnel? When was it built?" in searched.inner_text()
    page.wait_for_selector("#turn-2 .answer-text a.cite", timeout=30_000)

    page.fill("#next_question", "And what is the capital of France?")
    page.click("form.follow-up button")
    banner = page.wait_for_selector("#turn-3 .banner.refused", timeout=30_000)
    assert "No model was called." in banner.inner_text()
    assert page.locator("ol.turns > li").count() == 3
    page.wait_for_selector("#turn-2 .verdict-line", timeout=90_000)  # each turn's verdict fills in
    page.reload()  # the address pushed is the last answer's: the whole conversation, that turn highlighted
    assert page.locator("ol.turns > li").count() == 3 and page.locator("#turn-3.highlighted").count() == 1
    screenshot(page, "reader-conversation-desktop")
    assert violations == []
    page.close()


def test_a_visitor_marks_an_answer_and_reports_a_claim_an_editor_sees_it(site, browser, celery_worker):
    call_command("import_garden", str(SAMPLE_FOLDERS[0]), "--no-progress")
    answer = flagged_answer()
    answer.question.conversation = Conversation.objects.create()
    answer.question.save()
    page = browser.new_page(viewport={"width": WIDTHS["phone"], "height": 900})
    violations = csp_violations(page)
    page.goto(f"{site}{answer.get_absolute_url()}")
    mark = page.locator(f"#answer-mark-{answer.public_id}")
    mark.get_by_role("button", name="No").click()
    page.wait_for_selector(f"text={MARKED_UNHELPFUL}", timeout=10_000)
    assert (
        page.locator(f"#answer-mark-{answer.public_id}")
        .get_by_role("button", name="No")
        .get_attribute("aria-pressed")
        == "true"
    )
    page.locator("ol.claims details summary").first.click()
    page.locator("form.claim-report input[name=note]").first.fill("Mars has no emperor.")
    page.locator("form.claim-report").first.get_by_role("button", name="This is wrong").click()
    page.wait_for_selector(f"text={MARKED_WRONG}: “Mars has no emperor.”", timeout=10_000)
    assert fits_the_screen(page)
    screenshot(page, "reader-marks-phone")
    assert violations == []
    page.close()

    page = browser.new_page(viewport={"width": WIDTHS["desktop"], "height": 900})
    log_in(page, site, "editor")
    page.goto(f"{site}/review/?reports=1")
    card = page.locator("ol.queue li.card").first
    assert "Emperor of Mars" in card.inner_text() and "Reported by a reader: “Mars has no emperor.”" in (
        card.inner_text()
    )
    screenshot(page, "editor-reader-reports")
    page.close()
