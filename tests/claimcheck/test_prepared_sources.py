"""The local judge keeps recently prepared sources; a call that brings more sources than it keeps, or two
threads filling it at once, still get every source they asked for, in order."""

import threading

import pytest

from claimcheck.judges.local import sources
from claimcheck.judges.local.sources import forget_prepared_sources, prepare_sources

TEXTS = [
    f"Hive number {n} stands by the {n}th apple tree of the orchard. It holds {n + 8} frames."
    for n in range(12)
]


@pytest.fixture
def small_cache(monkeypatch):
    monkeypatch.setattr(sources, "_PREPARED_CACHE_SIZE", 4)
    forget_prepared_sources()
    yield
    forget_prepared_sources()


def test_one_call_with_more_sources_than_the_cache_keeps(small_cache):
    prepared = prepare_sources(TEXTS)
    assert [p.text for p in prepared] == TEXTS
    assert len(sources._prepared_cache) == 4
    again = prepare_sources([TEXTS[0], TEXTS[-1], TEXTS[0]])  # one evicted, one kept, one asked twice
    assert [p.text for p in again] == [TEXTS[0], TEXTS[-1], TEXTS[0]]


def test_two_threads_sharing_the_cache(small_cache):
    errors: list[BaseException] = []
    results: dict[int, list[str]] = {}

    def judge(worker: int) -> None:
        try:
            for round_ in range(5):
                asked = TEXTS[worker * 3 + round_ % 3 :] + TEXTS[: worker + round_]
                results[worker * 10 + round_] = [p.text for p in prepare_sources(asked)]
                assert results[worker * 10 + round_] == asked
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=judge, args=(worker,)) for worker in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    assert len(results) == 10
