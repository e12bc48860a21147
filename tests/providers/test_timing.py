"""Where a request's time goes: phases are timed exclusive of the phases nested in them, and an ask's
response says, in its Server-Timing header, how long each part of the flow took."""

import pytest

from providers.timing import parse_header, phase, recording


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr("providers.timing.time.perf_counter", fake)
    return fake


def test_a_nested_phase_counts_only_to_itself(clock):
    with recording() as timings:
        with phase("retrieval"):
            clock.now += 0.010
            with phase("embedding"):
                clock.now += 0.030
            clock.now += 0.005
        with phase("embedding"):
            clock.now += 0.002
        clock.now += 0.001
    assert timings.phases == pytest.approx({"retrieval": 15.0, "embedding": 32.0})
    assert timings.total_ms == pytest.approx(48.0)
    assert parse_header(timings.header()) == pytest.approx(
        {"retrieval": 15.0, "embedding": 32.0, "other": 1.0, "total": 48.0}
    )


def test_a_phase_outside_a_recording_records_nothing(clock):
    with phase("embedding"):
        clock.now += 1.0
    with recording() as timings:
        pass
    assert timings.phases == {}


@pytest.mark.django_db
def test_an_ask_says_where_its_time_went(client):
    response = client.post(
        "/api/ask", {"question": "When did Ashcombe station reopen?"}, content_type="application/json"
    )
    phases = parse_header(response["Server-Timing"])
    assert {"preflight", "embedding", "retrieval", "synthesis", "database", "total"} <= set(phases)
    assert all(ms >= 0 for ms in phases.values())
    assert sum(ms for name, ms in phases.items() if name != "total") == pytest.approx(
        phases["total"], abs=0.5
    )
    assert phases["embedding"] > 0 and phases["database"] > 0


@pytest.mark.django_db
def test_a_refusal_embeds_and_searches_but_synthesises_nothing(client):
    response = client.post(
        "/api/ask", {"question": "How do I bake sourdough bread at home?"}, content_type="application/json"
    )
    assert response.json()["refused"] is True
    phases = parse_header(response["Server-Timing"])
    assert "synthesis" not in phases and phases["retrieval"] > 0
