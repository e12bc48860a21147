"""What a server loads before it serves: the embedding model, the judge's, and the SDKs of the models it calls.

gunicorn's master loads them before it forks its web processes (config/gunicorn.py), a Celery worker's main process
before it forks its pool (verifier/tasks.py): every process forked after starts with them in memory, shared
copy-on-write, and no first request or verification waits for them (Django's own start-up loads none of them: most
processes never call a model).
"""

from __future__ import annotations

from providers import chat, embeddings
from verifier.claude_adapter import configured_chat_models
from verifier.encoder import judge_load


def models_load(*, onnx_sessions: bool = True) -> None:
    """Load them all, on one thread first: no thread pool then exists for a forked child to inherit half-made.
    Without `onnx_sessions`, all but ONNX Runtime's sessions, which each process forked after opens by calling this
    again (see `providers.embeddings.load`); what was loaded before the fork is not loaded twice."""
    embeddings.use_one_thread()
    embeddings.load(onnx_sessions=onnx_sessions)
    judge_load(onnx_sessions=onnx_sessions)
    for config in configured_chat_models():
        chat.load(config)
