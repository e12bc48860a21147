"""Shared fixtures: the real PostgreSQL (pytest-django's test database) and Redis; the sample garden."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import redis
import yaml
from django.conf import settings
from django.core.management import call_command

from garden.golden import DEFAULT_FILE
from providers import embeddings

if TYPE_CHECKING:
    from tests.fakes.chat_completions import FakeChatAPI
    from tests.fakes.messages_api import FakeMessagesAPI
    from tests.fakes.rerank_api import FakeRerankAPI

pytest_plugins = [
    "tests.fakes.messages_api",
    "tests.fakes.chat_completions",
    "tests.fakes.rerank_api",
    "tests.fakes.embeddings_api",
    "tests.celery_worker",
]

BASE_DIR = Path(__file__).resolve().parent.parent
SAMPLE_FOLDERS = [BASE_DIR / "garden" / "sample" / "earlier", BASE_DIR / "garden" / "sample" / "articles"]
# The sample garden as `make run` imports it: earlier/ is an older copy of six of its notes (their history).
SAMPLE_IMPORT = ["--history", str(SAMPLE_FOLDERS[0]), str(SAMPLE_FOLDERS[1])]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """After pytest-django's order (the tests that empty the database after those that read the sample garden),
    the slow tests first within each part, so the longest do not all come last (the bench's smoke run has no
    database mark, which put it at the very end). `--dist load` still hands each process a run of consecutive
    tests at the start, so a slow test can begin minutes in."""
    from tests.celery_worker import transactional  # (after pytest_plugins has loaded it, so it is rewritten)

    items.sort(key=lambda item: (transactional(item), item.get_closest_marker("slow") is None))


@pytest.fixture(scope="session", autouse=True)
def one_thread_a_test_process() -> None:
    """Test processes dealt tests in parallel (`make test`: one a core) keep torch and ONNX Runtime to one
    thread, as the web processes and Celery workers do. With two threads in each of two processes on two cores, a
    thread waiting for its sibling spins while the other process holds the other core: the judge's features of
    300 benchmark items took 2.9x the CPU time and 2.1x as long (docs/performance.md#the-test-suite)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        embeddings.use_one_thread()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: pytest.FixtureRequest) -> Iterator[None]:
    """The test database holds the sample garden, imported once per run through the real import command; the
    test queue starts empty (Redis keeps its data between runs, and a new test database reuses ids)."""
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    with django_db_blocker.unblock():  # type: ignore[attr-defined]
        call_command("import_garden", *SAMPLE_IMPORT, "--no-progress", verbosity=0)
    yield


@pytest.fixture
def claude(settings: pytest.FixtureRequest, fake_messages_api: FakeMessagesAPI) -> FakeMessagesAPI:
    """Claude configured (a key is set), pointed at the local fake Messages API, with fast timeouts."""
    settings.ANTHROPIC_API_KEY = "sk-ant-test-not-a-real-key-0000"  # type: ignore[attr-defined]
    settings.ANTHROPIC_BASE_URL = fake_messages_api.base_url  # type: ignore[attr-defined]
    settings.CLAUDE_TIMEOUT_SECONDS = 2.0  # type: ignore[attr-defined]
    settings.CLAUDE_MAX_RETRIES = 2  # type: ignore[attr-defined]
    return fake_messages_api


SERVED_MODEL = "fake-llama-3.1-8b"


@pytest.fixture
def served(settings: pytest.FixtureRequest, fake_chat_api: FakeChatAPI) -> FakeChatAPI:
    """Answers written by a model served over the OpenAI API (`ANSWER_PROVIDER=openai`), the local fake chat
    completions API, with no key (as a local server wants none) and fast timeouts."""
    settings.ANSWER_PROVIDER = "openai"  # type: ignore[attr-defined]
    settings.OPENAI_BASE_URL = fake_chat_api.base_url  # type: ignore[attr-defined]
    settings.OPENAI_API_KEY = ""  # type: ignore[attr-defined]
    settings.OPENAI_ANSWER_MODEL = SERVED_MODEL  # type: ignore[attr-defined]
    settings.OPENAI_CONDENSE_MODEL = SERVED_MODEL  # type: ignore[attr-defined]
    settings.OPENAI_TIMEOUT_SECONDS = 2.0  # type: ignore[attr-defined]
    settings.OPENAI_MAX_RETRIES = 1  # type: ignore[attr-defined]
    return fake_chat_api


RERANK_MODEL = "fake-bge-reranker-v2-m3"


@pytest.fixture
def reranker(settings: pytest.FixtureRequest, fake_rerank_api: FakeRerankAPI) -> FakeRerankAPI:
    """A served re-ranker configured (`RERANK_URL`), the local fake one, with a fast timeout."""
    settings.RERANK_URL = fake_rerank_api.url  # type: ignore[attr-defined]
    settings.RERANK_MODEL = RERANK_MODEL  # type: ignore[attr-defined]
    settings.RERANK_TIMEOUT_SECONDS = 2.0  # type: ignore[attr-defined]
    return fake_rerank_api


@pytest.fixture
def small_golden(tmp_path):
    """Four questions of the real golden set: three in scope, one out of scope."""
    entries = yaml.safe_load(DEFAULT_FILE.read_text())
    chosen = [e for e in entries if e["category"] == "single_fact"][:2]
    chosen += [e for e in entries if e["category"] == "outdated"][:1]
    chosen += [e for e in entries if e["category"] == "out_of_scope"][:1]
    path = tmp_path / "golden.yaml"
    path.write_text(yaml.safe_dump(chosen))
    return path


@pytest.fixture
def answered_golden(tmp_path):
    """Three questions whose answers are known to state their expected fact or not: the tunnel's length as the
    golden set gives it, the same question expecting a length the garden never gives, and an out-of-scope one."""
    entries = {e["id"]: e for e in yaml.safe_load(DEFAULT_FILE.read_text())}
    chosen = [entries["g002"], {**entries["g002"], "id": "w002", "answer": "502 m"}, entries["g050"]]
    path = tmp_path / "golden.yaml"
    path.write_text(yaml.safe_dump(chosen))
    return path
