"""Secrets (the Anthropic API key, SECRET_KEY) never reach a page, a log line or an error report, even when the
Claude API echoes the key back in its error messages."""

import io
import logging
from typing import cast

import pytest
from django.contrib.auth.models import User
from django.views.debug import ExceptionReporter, get_exception_reporter_class

from config.celery import scrub_worker_logs
from config.scrubbing import REPLACEMENT, scrub
from garden.models import Answer
from tests.fakes.messages_api import FakeMessagesAPI, reply_text, status
from verifier.models import Verification
from verifier.verifying import verification_run

pytestmark = pytest.mark.django_db

SECRET_KEY = "groundwork-test-secret-key-3c9f0e51b7a24d68"
NOISY_LOGGERS = ["anthropic", "httpx", "httpcore", "django", "garden", "verifier", "dashboard"]


def assert_no_secret(text: str, key: str, where: str) -> None:
    assert key not in text, f"the API key appears in {where}"
    assert SECRET_KEY not in text, f"SECRET_KEY appears in {where}"


@pytest.fixture
def leaky_claude(claude: FakeMessagesAPI, settings: pytest.FixtureRequest) -> FakeMessagesAPI:
    """Claude configured, answering every call with an error that quotes the caller's API key back."""
    settings.SECRET_KEY = SECRET_KEY  # type: ignore[attr-defined]
    key = settings.ANTHROPIC_API_KEY  # type: ignore[attr-defined]
    message = f"invalid x-api-key: {key} (Authorization: Bearer {key})"
    claude.set_default(
        status(401, {"type": "error", "error": {"type": "authentication_error", "message": message}})
    )
    return claude


def test_an_api_echoing_the_key_leaves_no_secret_in_pages_or_logs(
    client, leaky_claude, settings, caplog, django_capture_on_commit_callbacks
):
    key = settings.ANTHROPIC_API_KEY
    for name in [None, *NOISY_LOGGERS]:
        caplog.set_level(logging.DEBUG, logger=name)
    leaky_claude.enqueue(
        reply_text("Ashcombe station reopened on 3 May 1981 [2].")
    )  # the one call that works
    # Signed in: an anonymous visitor's answers are written and judged without Claude (no allowance by default).
    operator = User.objects.create_superuser("operator", password="pw-not-used")
    client.force_login(operator)
    with django_capture_on_commit_callbacks(execute=False):  # the judge runs here, not in a worker
        asked = client.post(
            "/api/ask", {"question": "When did Ashcombe station reopen?"}, content_type="application/json"
        )
        failed = client.post("/api/ask", {"question": "What gauge is the railway?"}, "application/json")
    assert asked.status_code == 200 and failed.status_code == 200 and failed.json()["error"]
    answer_id, failed_id = asked.json()["answer_id"], failed.json()["answer_id"]
    verification_run(verification_id=Verification.objects.get(answer__public_id=answer_id).pk)
    verification = Verification.objects.get(answer__public_id=answer_id)
    assert verification.judge_errors and verification.disclosure  # the failures were recorded, redacted
    checked = client.post("/api/check", {"text": "Ashcombe station reopened in 1990."}, "application/json")
    assert checked.status_code == 200 and checked.json()["disclosure"]
    assert leaky_claude.request_count >= 4  # two answers, the verification's juror and the check's juror
    pages = [
        "/",
        f"/answers/{answer_id}/",
        f"/answers/{failed_id}/",
        f"/api/answers/{answer_id}",
        f"/api/answers/{answer_id}/verdict",
        "/operators/logs/",
        "/review/",
        f"/admin/garden/answer/{Answer.objects.get(public_id=answer_id).pk}/change/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert_no_secret(response.content.decode(), key, url)
    partial = client.get(f"/answers/{answer_id}/verdict/", headers={"HX-Request": "true"})
    assert_no_secret(partial.content.decode(), key, "the live verdict")
    for response in (asked, failed, checked):
        assert_no_secret(response.content.decode(), key, "the JSON API")

    assert "authentication" in caplog.text.lower()  # the failures were logged...
    assert_no_secret(caplog.text, key, "the logs")  # ...without the key


def test_a_crash_gives_a_plain_500_and_an_error_report_without_secrets(
    client, leaky_claude, settings, caplog, monkeypatch
):
    key = settings.ANTHROPIC_API_KEY

    def crash(*args: object, **kwargs: object) -> None:
        api_key = key  # a secret in a local variable of the failing frame
        raise RuntimeError(f"unexpected failure near the Claude client ({len(api_key)} characters)")

    monkeypatch.setattr("dashboard.actions.asking.ask", crash)
    client.raise_request_exception = False
    response = client.post("/api/ask", {"question": "When did Ashcombe station reopen?"}, "application/json")
    assert response.status_code == 500
    assert_no_secret(response.content.decode(), key, "the 500 page")

    [record] = [r for r in caplog.records if r.name == "django.request" and r.exc_info]
    assert record.exc_info is not None
    assert_no_secret(caplog.text, key, "the logged traceback")
    # What the admins' error e-mail would carry (built as AdminEmailHandler builds it): the traceback with each
    # frame's variables, and the settings.
    request = record.request
    # django-stubs types the function as returning an instance; it returns the class.
    reporter_class = cast(type[ExceptionReporter], get_exception_reporter_class(request))
    exc_type, exc_value, traceback = record.exc_info
    reporter = reporter_class(request, exc_type, exc_value, traceback, is_email=True)
    report = reporter.get_traceback_text()
    assert "ANTHROPIC_API_KEY" in report and "RuntimeError" in report
    assert_no_secret(report, key, "the error report")
    assert_no_secret(reporter.get_traceback_html(), key, "the HTML error report")


def test_the_workers_own_log_handlers_drop_secrets_and_keep_their_format(settings):
    settings.ANTHROPIC_API_KEY = "sk-ant-worker-log-test-key-0000"
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("[%(levelname)s/worker] %(message)s"))
    logger = logging.getLogger("tests.worker-log")
    logger.addHandler(handler)
    try:
        scrub_worker_logs(logger=logger)  # what Celery's after_setup_logger signal calls
        logger.warning("calling Claude with %s", settings.ANTHROPIC_API_KEY)
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue() == f"[WARNING/worker] calling Claude with {REPLACEMENT}\n"


def test_a_served_model_s_key_is_scrubbed_like_anthropic_s(settings):
    settings.OPENAI_API_KEY = "sk-proj-served-log-test-key-0000"
    assert scrub(f"calling the served model with key={settings.OPENAI_API_KEY}") == (
        f"calling the served model with key={REPLACEMENT}"
    )
