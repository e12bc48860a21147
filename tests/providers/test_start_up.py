"""The model SDKs are imported by the servers that call a model, as they start, and by no other start-up: every
command, web process and worker imports Django's models, and the two SDKs took 1.5 s of CPU of each start."""

import json
import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]

# A process as a server starts one: Django, the URLconf with every view and the API, the Celery tasks; then what
# its start-up loads for the models the settings configure (config/gunicorn.py, verifier/tasks.py).
START_UP = """
import json, sys
import django
django.setup()
from importlib import import_module
from django.conf import settings
import_module(settings.ROOT_URLCONF)
import verifier.tasks
sdks = lambda: sorted(name for name in ("anthropic", "openai") if name in sys.modules)
started = sdks()
from providers import chat
from verifier.claude_adapter import configured_chat_models
for config in configured_chat_models():
    chat.load(config)
loaded = sdks()
from providers import embeddings
embeddings.load(embeddings.EmbeddingBackend.OPENAI)  # as a server starts with EMBEDDING_BACKEND=openai
print(json.dumps({"started": started, "loaded": loaded, "served_embedder": sdks()}))
"""


def imported(**env: str) -> dict[str, list[str]]:
    """The SDKs imported by a start-up with the test settings (no model configured, unless `env` names one)."""
    base = {key: value for key, value in os.environ.items() if key != "GROUNDWORK_TEST_FAKE_CLAUDE_URL"}
    done = subprocess.run(
        [sys.executable, "-c", START_UP],
        cwd=BASE_DIR,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings.test", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_no_start_up_imports_a_model_sdk_and_a_server_loads_the_one_it_calls():
    bare = imported()
    assert bare["started"] == bare["loaded"] == []
    assert "openai" in bare["served_embedder"]  # a served embedding model's SDK, loaded with the backend
    # With Claude configured (a key, and the fake's address): a server's start-up loads its SDK, before any request.
    with_claude = imported(GROUNDWORK_TEST_FAKE_CLAUDE_URL="http://127.0.0.1:9")
    assert with_claude["started"] == []
    assert "anthropic" in with_claude["loaded"]
