"""Read an answer and its verdict; mark an answer helpful or not, report a claim wrong.

Whoever may ask may read and mark the answers they may see: an answer is addressed by its public id, which is
not guessable, and one drawn on a note the caller may no longer read is withheld from them. A mark is kept as
its reader's own (their account, or a visitor's browser session) and counted against the rate limits under a
scope of its own; a report also against its address's allowance for the day.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.http import HttpRequest

from dashboard.actions.asking import admit_asking
from dashboard.actions.callers import Caller, caller_reader
from dashboard.actions.refusals import Outcome, Refused
from dashboard.permissions import request_marker
from dashboard.ratelimit import MARK_RATE_LIMITED, REPORTS_DAY_SPENT, rate_limited, reports_limited
from garden import selectors
from garden.models import Answer
from verifier.marks import answer_mark_record, claim_report_record
from verifier.models import Claim, ClaimReport
from verifier.review import ReviewError

ANSWER_NOT_FOUND = "No answer with this id."
CLAIM_NOT_FOUND = "This answer has no claim with this id."
MARK_NEEDS_READER = (
    "A mark is kept as its reader's own: call with a personal token (or the site's session cookie) to mark."
)
NO_SESSION = (
    "Your browser sent no session cookie, so this mark could not be kept as yours. Nothing was recorded."
)

AnswerId = str | uuid.UUID


def answer_read(caller: Caller, answer_id: AnswerId) -> Answer:
    """The answer at `answer_id`, loaded with its sources as the caller may see them. Refused: forbidden, not
    found (unknown, or not an id), withheld."""
    admit_asking(caller, counted=False)
    public_id = _public_id(answer_id)
    reader = caller_reader(caller)
    answer = selectors.answer_get(public_id, reader) if public_id else None
    if answer is None:
        raise Refused(Outcome.NOT_FOUND, ANSWER_NOT_FOUND)
    if (why := selectors.answer_hidden_reason(answer, reader)) is not None:
        raise Refused(Outcome.WITHHELD, why, address=answer.get_absolute_url())
    return answer


def verdict_read(caller: Caller, answer_id: AnswerId) -> Answer:
    """The answer whose verdict the caller asks for, loaded without its sources (one query to tell whether it
    may be seen). Refused as `answer_read`."""
    admit_asking(caller, counted=False)
    public_id = _public_id(answer_id)
    answer = Answer.objects.filter(public_id=public_id).first() if public_id else None
    if answer is None:
        raise Refused(Outcome.NOT_FOUND, ANSWER_NOT_FOUND)
    if (why := selectors.verdict_hidden_reason(answer, caller_reader(caller))) is not None:
        raise Refused(Outcome.WITHHELD, why, address=answer.get_absolute_url())
    return answer


def answer_mark(
    caller: HttpRequest, answer_id: AnswerId, *, helpful: bool, start_session: bool = False
) -> Answer:
    """Keep the caller's mark on the answer (a second replaces the first); the answer marked. `start_session`: a
    page's visitor without a session is given one, so the mark can be theirs alone. Refused: as `answer_read`,
    then limited, then forbidden (no reader to keep it as)."""
    answer = answer_read(caller, answer_id)
    marker = _marker(caller, start_session)
    answer_mark_record(answer=answer, marker=marker, user=caller.user, helpful=helpful)
    return answer


def claim_report(
    caller: HttpRequest, answer_id: AnswerId, claim_id: int, *, note: str = "", start_session: bool = False
) -> ClaimReport:
    """Keep the caller's report that a claim of the answer is wrong (a second replaces the first); the claim
    joins the editors' review queue. Refused: as `answer_mark`, not found (no such claim in the answer), limited
    (the address's reports for the day), invalid (a note over its limit)."""
    answer = answer_read(caller, answer_id)
    claim = Claim.objects.filter(pk=claim_id, is_claim=True, verification__answer=answer).first()
    if claim is None:
        raise Refused(Outcome.NOT_FOUND, CLAIM_NOT_FOUND)
    marker = _marker(caller, start_session)
    if (wait := reports_limited(caller)) is not None:
        spent = REPORTS_DAY_SPENT.format(limit=settings.REPORTS_PER_ADDRESS_PER_DAY)
        raise Refused(Outcome.LIMITED, spent, retry_after=wait)
    try:
        return claim_report_record(claim=claim, marker=marker, user=caller.user, note=note)
    except ReviewError as error:
        raise Refused(Outcome.INVALID, error.message) from None


def _marker(caller: HttpRequest, start_session: bool) -> str:
    """Count a mark against the caller's limit, then who keeps it: their account, or their browser session."""
    if (wait := rate_limited(caller, "mark")) is not None:
        raise Refused(Outcome.LIMITED, MARK_RATE_LIMITED, retry_after=wait)
    marker = request_marker(caller, start_session=start_session)
    if marker is None:
        raise Refused(Outcome.FORBIDDEN, NO_SESSION if start_session else MARK_NEEDS_READER)
    return marker


def _public_id(answer_id: AnswerId) -> uuid.UUID | None:
    """The answer id given, or None for anything else (an old numeric id is not found, not malformed)."""
    if isinstance(answer_id, uuid.UUID):
        return answer_id
    try:
        return uuid.UUID(answer_id)
    except ValueError:
        return None
