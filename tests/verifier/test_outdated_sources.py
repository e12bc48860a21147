"""What the judges read of a note's history (issue 31, point 4): the answer's cited passages and a bounded number
of earlier wordings of them, readable ones only, however often the note was edited."""

import re

import pytest

from claimcheck.claims import split_claims
from claimcheck.judges.claude import TOOL_NAME
from claimcheck.judges.local import judge_claims
from claimcheck.terms import ClaimStatus
from garden.models import Article, Passage
from garden.passages import passage_spans
from garden.services import NewRevision, embedding_input, revisions_write
from providers import embeddings
from tests.factories import answer_for
from tests.fakes.messages_api import reply_tool
from verifier.models import Verification
from verifier.queueing import verification_create
from verifier.sources import answer_sources
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

EDITS = 300
TITLE = "Ashby tunnel"
FIRST_LENGTH = "The Ashby tunnel is 1,100 metres long and opened in 1889."
LENGTH = "The Ashby tunnel is 1,200 metres long and opened in 1889."
OUTDATED_CLAIM = "The Ashby tunnel is 1,100 metres long [1]."


def body(edit: int) -> str:
    """The note at its `edit`-th version: its length was corrected once, its signals passage edited each time."""
    length = FIRST_LENGTH if edit == 1 else LENGTH
    return f"# {TITLE}\n\n{length}\n\n## Signals\n\nThe signal box at the north portal was repainted in shade {edit}.\n"


def history_write(article: Article, bodies: list[str], shows: dict[int, list[str]] | None = None) -> None:
    """The versions of `article`, oldest first, each written as an import writes it (the texts embedded once);
    the `i`-th holds, all of it, words of the notes at `shows[i]`."""
    spans = [[(s.start, s.end) for s in passage_spans(text)] for text in bodies]
    texts = sorted({text[a:b] for text, found in zip(bodies, spans, strict=True) for a, b in found})
    vectors = dict(zip(texts, embeddings.embed([embedding_input(TITLE, t) for t in texts]), strict=True))
    for i, (text, found) in enumerate(zip(bodies, spans, strict=True)):
        revisions_write(
            [
                NewRevision(
                    article=article,
                    title=TITLE,
                    body=text,
                    spans=found,
                    vectors=[vectors[text[a:b]] for a, b in found],
                    borrowed=[(0, len(text), place) for place in (shows or {}).get(i, [])],
                )
            ]
        )


@pytest.fixture
def edited() -> Passage:
    """A note edited 300 times, and its current passage on the tunnel's length."""
    article = Article.objects.create(slug="ashby-tunnel", title=TITLE)
    history_write(article, [body(edit) for edit in range(1, EDITS + 1)])
    assert article.revisions.count() == EDITS
    return article.passages.get(is_current=True, text__contains="metres long")


def test_a_note_edited_300_times_gives_the_judges_its_cited_passage_and_a_few_earlier_ones(edited, settings):
    answer = answer_for(OUTDATED_CLAIM, edited)

    sources, passages = answer_sources(answer)

    assert len(sources) == 1 + settings.VERIFIER_EARLIER_PASSAGES
    assert [s.superseded for s in sources] == [False] + [True] * settings.VERIFIER_EARLIER_PASSAGES
    assert len({s.text for s in sources}) == len(sources)  # each earlier wording once
    assert FIRST_LENGTH in sources[1].text  # the earlier wording of the cited passage is the nearest
    assert set(passages) == {s.index for s in sources}
    [vote] = judge_claims(split_claims(answer.text), sources)
    assert vote.status == ClaimStatus.OUTDATED and "1,100" in vote.quote

    settings.VERIFIER_EARLIER_PASSAGES = 2
    assert len(answer_sources(answer)[0]) == 3


def test_claude_is_sent_the_same_few_sources_however_long_the_history(edited, claude, settings):
    settings.VERIFIER_MODE = "claude"
    verdict = {
        "claim_number": 1,
        "status": "outdated",
        "quote": "1,100 metres long",
        "source_number": 2,
        "confidence": 0.9,
        "flags": [],
    }
    claude.set_default(reply_tool(TOOL_NAME, {"verdicts": [verdict], "answers_question": True}))
    verification = verification_create(answer=answer_for(OUTDATED_CLAIM, edited))
    assert verification is not None

    verification_run(verification_id=verification.pk)

    assert claude.request_count >= 1
    for request in claude.requests:
        sent = str(request["body"]["messages"])
        assert len(re.findall(r'<source number="\d+"', sent)) == 1 + settings.VERIFIER_EARLIER_PASSAGES
        assert sent.count('superseded="true"') == settings.VERIFIER_EARLIER_PASSAGES
    assert Verification.objects.get(pk=verification.pk).claims.get().status == ClaimStatus.OUTDATED


SECRET = "Quillmartin"
BLOCK = f"Band {SECRET} gets a raise of eleven percent."


def test_an_earlier_version_that_held_a_withheld_page_s_block_never_comes_back_as_a_quote():
    """A Logseq page once held a block of another page, private since: the judges never read that version."""
    private = Article.objects.create(
        slug="pay", title="Pay", path="pages/Pay", withheld_at="2026-01-01T00:00:00Z"
    )
    article = Article.objects.create(slug="ashby-tunnel", title=TITLE)
    older = f"# {TITLE}\n\n{LENGTH}\n\n## Staff\n\n{BLOCK}\n"
    history_write(article, [body(1), older, body(2)], shows={1: [private.path]})
    cited = article.passages.get(is_current=True, text__contains="metres long")
    answer = answer_for(f"{BLOCK} [1]", cited)

    sources, _ = answer_sources(answer)

    assert not any(SECRET in s.text for s in sources)
    assert any(FIRST_LENGTH in s.text for s in sources[1:])  # the earlier wordings a reader may see are given
    votes = judge_claims(split_claims(answer.text), sources)
    assert not any(SECRET in (vote.quote or "") for vote in votes)
