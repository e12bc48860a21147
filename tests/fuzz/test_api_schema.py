"""Fuzz the JSON API from its own OpenAPI schema: whatever is sent, the server never answers with a 500."""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from config.wsgi import application

pytestmark = pytest.mark.slow

schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application)


@pytest.fixture(autouse=True)
def keep_the_test_connection():
    """Requests go through the real WSGI handler; like Django's test client, keep it from closing the
    connection that holds the test's transaction."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def anonymous_checks(settings):
    """Let the fuzzer's requests (which carry no login) reach the fact-check, not only its 403."""
    settings.ANONYMOUS_CAN_CHECK = True


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_request_makes_the_api_fail(case):
    response = case.call()
    assert response.status_code < 500, f"{case.method} {case.formatted_path} -> {response.status_code}"
    case.validate_response(response)
