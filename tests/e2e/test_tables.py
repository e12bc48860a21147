"""Every table editors and operators read, measured in a real browser at a laptop's and a phone's width: no
heading and no figure broken across lines, no word broken inside, and no page wider than the screen (a wide
table scrolls inside its own region, which a keyboard can reach and a screen reader names)."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from claimcheck.terms import ClaimStatus, JurorRole, Severity
from evaluation.models import RunStatus, VerifyRun
from garden.models import Answer, RetrievedArticle, Sync
from tests.conftest import SAMPLE_FOLDERS
from tests.e2e.conftest import screenshot
from tests.factories import verification_with_claims
from verifier.models import Claim, CriticFinding, JudgeParameters, Verification, Vote
from verifier.tokens import token_create, token_revoke

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
PASSWORD = "correct horse battery staple"
LONG_QUESTION = (
    "Which engineer drew up the plans for the Harrowden Viaduct, and how many arches did the finished "
    "structure carry across the valley when it opened?"
)
LONG_LABEL = "after the retrieval change (k=8, reranking on)"

# Each rendered cell of the page's tables, described by the problems a reader would see; and the page's width.
MEASURE = """() => {
  for (const details of document.querySelectorAll("main details")) details.open = true;
  const problems = [];
  // A figure is a cell of digits, signs and units: "12.5%", "$0.0012 + $0.0034", "1200 ms", "+3.2 pp", "✓ 8/100".
  const isFigure = (text) => /\\d/.test(text) && !/\\p{L}/u.test(text.replace(/\\b(ms|pp|s)\\b/g, ""));
  const breaksAfter = /[-\\/\\u2010-\\u2014]/;
  for (const cell of document.querySelectorAll("main table th, main table td")) {
    if (!cell.getClientRects().length) continue;  // not rendered, as a header row a phone's layout hides
    const text = cell.innerText.replace(/\\s+/g, " ").trim();
    if (!text) continue;
    const chars = [];
    let afterSpace = true;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      for (let i = 0; i < node.length; i++) {
        if (/\\s/.test(node.data[i])) { afterSpace = true; continue; }
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = range.getBoundingClientRect();
        if (!box.width && !box.height) continue;
        chars.push({ch: node.data[i], top: box.top, bottom: box.bottom, afterSpace});
        afterSpace = false;
      }
    }
    let lines = chars.length ? 1 : 0;
    for (let i = 1; i < chars.length; i++) {
      const [before, here] = [chars[i - 1], chars[i]];
      if (here.top < before.bottom - 1) continue;  // the same line
      lines += 1;
      if (!here.afterSpace && !breaksAfter.test(before.ch)) {
        problems.push(`broken inside a word ("${before.ch}|${here.ch}"): ${text}`);
      }
    }
    if (cell.tagName === "TH" && lines > 1) problems.push(`heading on ${lines} lines: ${text}`);
    else if (isFigure(text) && lines > 1) problems.push(`figure on ${lines} lines: ${text}`);
  }
  for (const region of document.querySelectorAll("main *")) {
    const overflow = getComputedStyle(region).overflowX;
    if (!["auto", "scroll"].includes(overflow) || region.scrollWidth <= region.clientWidth) continue;
    const labelledBy = region.getAttribute("aria-labelledby");
    const name = region.getAttribute("aria-label") || (labelledBy && document.getElementById(labelledBy)?.textContent);
    if (region.tabIndex !== 0 || !name || !name.trim()) {
      problems.push(`a region scrolls sideways that a keyboard cannot reach or that has no name: ${region.outerHTML.slice(0, 80)}`);
    }
  }
  const width = document.documentElement.scrollWidth;
  if (width > window.innerWidth) problems.push(`the page is ${width} px wide on a ${window.innerWidth} px screen`);
  return problems;
}"""


def user_for(role: str) -> User:
    user = User.objects.create_user(f"{role}-tables", password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    return user


def tables_filled(operator: User, editor: User) -> dict[str, str]:
    """Rows for every table, with long values where real ones get long; returns the pages' addresses."""
    for user in (operator, editor):
        token_create(user_id=user.pk, name="laptop")
        revoked, _ = token_create(user_id=user.pk, name="Claude Desktop on the team's shared build machine")
        token_revoke(user_id=user.pk, token_id=revoked.pk)
    call_command("import_garden", str(SAMPLE_FOLDERS[0]), "--no-progress")
    verification = verification_with_claims(2)
    answer = verification.answer
    answer.question.text = LONG_QUESTION
    answer.question.save()
    Answer.objects.filter(pk=answer.pk).update(
        input_tokens=6_120, output_tokens=412, cost_usd=Decimal("0.024516"), latency_ms=4_210
    )
    Verification.objects.filter(pk=verification.pk).update(
        delta_score=0.8765,
        input_tokens=9_480,
        output_tokens=1_316,
        cost_usd=Decimal("0.048180"),
        latency_ms=11_840,
        judges=3,
        local_only=True,
    )
    CriticFinding.objects.create(
        verification=verification, critic_name="citation_coverage", severity=Severity.WARN, passed=False
    )
    CriticFinding.objects.create(
        verification=verification, critic_name="numbers_match", severity=Severity.BLOCK, passed=False
    )
    flagged = Claim.objects.get(verification=verification, ordinal=1)
    flagged.status = ClaimStatus.CONTRADICTED
    flagged.flags = ["date_mismatch", "entity_swap"]
    flagged.save()
    Vote.objects.create(
        claim=flagged,
        judge="claude-sonnet-4-5-20250929",
        role=JurorRole.TIEBREAKER,
        status=ClaimStatus.CONTRADICTED,
        confidence=0.8125,
        flags=["date_mismatch", "entity_swap"],
    )
    retrieval = answer.question.retrieval
    for rank, passage in enumerate(answer.sources.select_related("passage__article"), start=1):
        RetrievedArticle.objects.create(
            retrieval=retrieval,
            article=passage.passage.article,
            rank=rank,
            score=0.87654,
            vector_score=0.8,
            text_score=0.7,
        )

    Sync.objects.create(
        folders=[str(SAMPLE_FOLDERS[0])],
        counts={"created": 6, "revised": 0, "retired": 0, "withheld": 0},
        failures=[
            [
                "engineering/structures/viaducts-and-bridges-of-the-harrowden-line.md",
                "front matter is not YAML: mapping values are not allowed here (line 3, column 12)",
            ]
        ],
    )
    latest = JudgeParameters.objects.order_by("-version").first()
    version = latest.version + 1 if latest else 1
    JudgeParameters.objects.create(
        version=version,
        source="retrained",
        status="kept",
        created_by=operator,
        report={
            "reason": "Kept: it agrees with editors more often without losing accuracy on SummEdits.",
            "held_out_reviews": 124,
            "agreement_before": 0.7258,
            "agreement_after": 0.8145,
            "lodo_with_reviews": {"mean_balanced_accuracy": 0.7312},
            "lodo_baseline": 0.7288,
            "lodo_floor": 0.7,
        },
    )
    JudgeParameters.objects.create(
        version=version + 1,
        source="retrained",
        status="refused",
        created_by=operator,
        report={"reason": "Refused: leave-one-domain-out accuracy fell below the floor (0.6931 < 0.7)."},
    )

    runs = [
        VerifyRun.objects.create(
            label=label, status=RunStatus.DONE, mode="local", started_by=operator, report=report_for(shift)
        )
        for label, shift in (("baseline", 0.0), (LONG_LABEL, 0.0125))
    ]
    return {
        "logs": "/operators/logs/",
        "runs": "/operators/runs/",
        "run": f"/operators/runs/{runs[1].pk}/",
        "compare": f"/operators/runs/compare/?first={runs[0].pk}&second={runs[1].pk}",
        "review": "/review/",
        "answer": answer.get_absolute_url(),
        "tokens": "/accounts/tokens/",
    }


def figures(shift: float, questions: int) -> dict[str, object]:
    return {
        "questions": questions,
        "claims": questions * 3,
        "verified_claim_rate": 0.8123 + shift,
        "answered_rate": 0.9167 - shift,
        "unverified_claim_rate": 0.1234 - shift,
        "contradicted_claim_rate": 0.0123,
        "refusal_rate": 0.0833,
        "status_counts": {"verified": questions * 2, "unverified": questions},
    }


def report_for(shift: float) -> dict[str, object]:
    """A stored Verify-all report (`RunReport.as_dict`) with three categories and one unverified claim."""
    return {
        **figures(shift, 1200),
        "out_of_scope_refused": 1.0,
        "in_scope_refused": 0.0417 + shift,
        "in_scope_answered": 0.9583 - shift,
        "refusal_gate": {
            "vector_threshold": 0.4125,
            "text_threshold": 0.6,
            "calibrated_at": "2026-11-30T09:00:00+00:00",
            "notes": 1234,
        },
        "errors": 0,
        "seconds": 1234.5,
        "per_category": {
            "single_fact": figures(shift, 600),
            "multi_hop_reasoning": figures(shift, 400),
            "out_of_scope": figures(shift, 200),
        },
        "unverified_claims": [
            {
                "code": "q017",
                "category": "multi_hop_reasoning",
                "question": LONG_QUESTION,
                "answer_id": None,
                "answer_url": "",
                "answer": "The viaduct has 21 arches [1].",
                "claim": "The viaduct has 21 arches.",
                "flags": [],
            }
        ],
        "judges": [{"judge": "local", "role": "juror", "claims": 3600}],
    }


def test_every_table_reads_at_a_glance_on_a_laptop_and_a_phone(site, browser):
    operator, editor = user_for("operator"), user_for("editor")
    pages = tables_filled(operator, editor)
    visits = {operator: list(pages), editor: ["review", "answer", "tokens"]}
    problems: list[str] = []
    for user, names in visits.items():
        role = user.groups.get().name
        for size, viewport in VIEWPORTS.items():
            context = browser.new_context(viewport=viewport)
            page = context.new_page()
            page.goto(
                f"{site}/accounts/login/", timeout=180_000
            )  # the site's processes load their models first
            page.fill("#id_username", user.username)
            page.fill("#id_password", PASSWORD)
            page.click("form.login button")
            page.wait_for_selector("form.logout")
            for name in names:
                page.goto(f"{site}{pages[name]}")
                assert page.locator("main table, main ol.queue li.card").count() > 0, (
                    f"{name}: nothing to measure"
                )
                found = page.evaluate(MEASURE)
                problems += [f"{role} {name} at {viewport['width']}x{viewport['height']}: {p}" for p in found]
                screenshot(page, f"tables-{role}-{name}-{size}")
            context.close()
    assert not problems, "\n".join(problems)
