"""Settings refuse to start when they are wrong: production without a SECRET_KEY or with DEBUG on, and an enumerated setting that names none of its choices."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parent.parent


def run_check(**env: str) -> subprocess.CompletedProcess[str]:
    # A production environment: none of the development or test switches the suite may have set.
    unset = {"SECRET_KEY", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    environment = {k: v for k, v in os.environ.items() if k not in unset}
    environment.update(DJANGO_SETTINGS_MODULE="config.settings.production", **env)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_refuses_to_start_without_a_secret_key():
    result = run_check()
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_production_refuses_to_start_with_debug_on():
    result = run_check(SECRET_KEY="x" * 60 + "-production-secret-key-value", DEBUG="true")
    assert result.returncode != 0 and "DEBUG must be off" in result.stderr


def test_production_settings_pass_the_deployment_checks():
    result = run_check(SECRET_KEY="a-long-random-production-secret-key-0123456789-abcdefghijklmnop")
    assert result.returncode == 0, result.stderr + result.stdout


def test_a_mistyped_choice_stops_the_site_at_start_with_the_setting_and_its_choices():
    # The WSGI application is what gunicorn loads: the error comes before any request is served.
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    for name, value, choices in (
        ("VERIFIER_MODE", "cascde", "local, claude, cascade"),
        ("EMBEDDING_BACKEND", "onnx_int8", "onnx-int8, onnx, torch, openai"),
        ("JUDGE_EMBEDDING_BACKEND", "pytorch", "onnx-int8, onnx, torch"),
        ("LOG_LEVEL", "verbose", "DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ("ANSWER_PROVIDER", "ollama", "claude, openai, local"),
    ):
        result = subprocess.run(
            [sys.executable, "-c", "import config.wsgi"],
            cwd=BASE_DIR,
            env={**environment, name: value},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode != 0
        assert f"{name}='{value}' is not one of: {choices}." in result.stderr


def test_a_served_model_named_by_halves_stops_the_site_at_start_saying_what_is_missing():
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "ANSWER_PROVIDER": "openai",
    }
    for extra, said in (
        ({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}, "set OPENAI_ANSWER_MODEL"),
        (
            {"OPENAI_ANSWER_MODEL": "llama3.1:8b", "OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""},
            "set OPENAI_BASE_URL",
        ),
        (
            {
                "OPENAI_ANSWER_MODEL": "llama3.1:8b",
                "OPENAI_BASE_URL": "http://x/v1",
                "OPENAI_PRICES": "gpt=1",
            },
            "'gpt=1' is not MODEL=INPUT/OUTPUT",
        ),
        (
            {"ANSWER_PROVIDER": "claude", "EMBEDDING_BACKEND": "openai", "OPENAI_BASE_URL": "http://x/v1"},
            "set OPENAI_EMBEDDING_MODEL",
        ),
        (
            {
                "ANSWER_PROVIDER": "claude",
                "EMBEDDING_BACKEND": "openai",
                "OPENAI_EMBEDDING_MODEL": "nomic-embed-text",
                "OPENAI_BASE_URL": "",
                "OPENAI_API_KEY": "",
            },
            "set OPENAI_BASE_URL",
        ),
    ):
        result = subprocess.run(
            [sys.executable, "-c", "import config.wsgi"],
            cwd=BASE_DIR,
            env={**environment, "OPENAI_ANSWER_MODEL": "", **extra},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode != 0 and said in result.stderr, result.stderr[-500:]


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"RERANK_MODEL": ""}, "set RERANK_MODEL"),
        ({"RERANK_CANDIDATES": "1"}, "RERANK_CANDIDATES must be 2 or more"),
        ({"RERANK_TIMEOUT_SECONDS": "0"}, "RERANK_TIMEOUT_SECONDS positive"),
    ],
)
def test_a_reranker_set_by_halves_stops_the_site_at_start_saying_what_is_wrong(
    extra: dict[str, str], said: str
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import config.wsgi"],
        cwd=BASE_DIR,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "RERANK_URL": "http://127.0.0.1:7997/rerank",
            "RERANK_MODEL": "bge-reranker-v2-m3",
            **extra,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and said in result.stderr, result.stderr[-500:]


def test_the_settings_choices_are_the_code_s_own():
    from django.conf import settings

    from claimcheck.terms import JudgeMode
    from providers.embeddings import EmbeddingBackend

    assert set(settings.VERIFIER_MODES) == set(JudgeMode)
    assert set(settings.EMBEDDING_BACKENDS) == {backend.value for backend in EmbeddingBackend}
