"""gunicorn settings for every way the site is served (make run, the load test, the browser tests, compose).

Threads let quick requests (verdict polls, pages) through while other requests are busy answering; each
process keeps torch to one thread, since the processes already share the machine's cores, and loads the
embedding model, its models' SDKs and the URLconf as it starts, so its first readers do not wait for them.
"""

from typing import Any

worker_class = "gthread"
# Eight: with a slow Claude, four threads a process stay free of it (WEB_CLAUDE_SLOTS is 4), and readers who need no
# Claude kept the figures they get when no one asks Claude; with 4 threads and 2 slots their p95 went from about
# 0.2 s to 1.1 s (docs/performance.md, "Claude calls and web threads"). A thread waiting on Claude waits on a
# socket, not a core.
threads = 8
timeout = 120


def post_fork(server: Any, worker: Any) -> None:
    from providers import chat, embeddings
    from verifier.claude_adapter import configured_chat_models
    from verifier.encoder import judge_backend

    embeddings.use_one_thread()
    # Loaded before the first request, not during it: the embedding backend, and the judge's if another; the SDKs
    # of the models it calls (Django's start-up imports none: most processes never call a model).
    embeddings.load()
    embeddings.load(judge_backend())
    for config in configured_chat_models():
        chat.load(config)


def post_worker_init(worker: Any) -> None:
    from importlib import import_module

    from django.conf import settings

    # The URLconf, with the views and the API's schemas, is imported now: on a first request it took over a second,
    # and under a burst of readers at start-up every process's first requests waited for it.
    import_module(settings.ROOT_URLCONF)
