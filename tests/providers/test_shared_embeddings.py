"""Source sentences are embedded once for every process: what one web process embedded, another (or the next
deployment) finds in the shared cache; with the cache away, sentences are embedded where they are needed, and
nothing fails."""

import time

import numpy as np
import pytest
from django.core.cache import cache

from providers import embeddings
from providers.embeddings import shared

SENTENCES = [
    "The hive has eleven frames.",
    "Millbridge station opened in 1847.",
    "Pears are grafted in March.",
]


class Counting:
    """`embeddings.embed`, counting the texts it is given."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.real = embeddings.embed

    def __call__(self, texts, **kwargs):
        self.texts += list(texts)
        return self.real(texts, **kwargs)


@pytest.fixture
def counted(monkeypatch):
    cache.clear()
    embeddings._cache.clear()
    monkeypatch.setattr(shared, "_away_until", 0.0)
    counting = Counting()
    monkeypatch.setattr(embeddings, "embed", counting)
    yield counting
    cache.clear()


def another_process() -> None:
    """What a sibling process sees: its own memory empty, the shared cache as it is."""
    embeddings._cache.clear()


def test_a_sentence_one_process_embedded_is_not_embedded_again_by_another(counted):
    first = embeddings.embed_cached(SENTENCES)
    another_process()
    again = embeddings.embed_cached([SENTENCES[1], "A sentence nobody embedded yet.", SENTENCES[0]])
    assert counted.texts == [*SENTENCES, "A sentence nobody embedded yet."]
    assert np.allclose(again[0], first[1]) and np.allclose(again[2], first[0])
    assert np.allclose(again[1], counted.real(["A sentence nobody embedded yet."])[0], atol=1e-6)


def test_one_backends_shared_vectors_never_serve_another(counted, settings):
    settings.EMBEDDING_BACKEND = "torch"
    embeddings.embed_cached(SENTENCES[:1])
    another_process()
    settings.EMBEDDING_BACKEND = "onnx-int8"
    embeddings.embed_cached(SENTENCES[:1])
    assert counted.texts == SENTENCES[:1] * 2


def test_with_the_cache_away_sentences_are_embedded_here_and_it_is_not_asked_again_at_once(counted, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:9/0",  # nothing listens on the discard port
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    vectors = embeddings.embed_cached(SENTENCES)
    assert np.allclose(vectors, counted.real(SENTENCES), atol=1e-6)
    another_process()
    began = time.monotonic()
    embeddings.embed_cached(SENTENCES)
    assert time.monotonic() - began < 0.5  # no second wait for a connection that just failed
    assert counted.texts == SENTENCES * 2
