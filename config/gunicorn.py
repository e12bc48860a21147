"""gunicorn settings for every way the site is served (make run, the load test, the browser tests, compose).

Threads let quick requests (verdict polls, pages) through while other requests are busy answering; each
process keeps torch to one thread, since the processes already share the machine's cores. The master loads Django,
the models (the embedding model, the judge's, the SDKs of the models the site calls) and the URLconf before it
forks the web processes: each starts with them in memory, shared copy-on-write, opens its own ONNX Runtime
sessions, and its first readers wait for none of it. Two web processes took 14 s of CPU to start and 1,060 MB
(proportional set size) when each loaded its own, 5.5 s and 760 MB so. A code change needs a restart, not a HUP.
"""

from typing import Any

worker_class = "gthread"
# Eight: with a slow Claude, four threads a process stay free of it (WEB_CLAUDE_SLOTS is 4), and readers who need no
# Claude kept the figures they get when no one asks Claude; with 4 threads and 2 slots their p95 went from about
# 0.2 s to 1.1 s (docs/performance.md, "Claude calls and web threads"). A thread waiting on Claude waits on a
# socket, not a core.
threads = 8
timeout = 120
preload_app = True


def when_ready(server: Any) -> None:
    """In the master, the application loaded, before the first web process is forked."""
    from importlib import import_module

    from django.conf import settings
    from django.db import connections

    from verifier.start_up import models_load

    models_load(onnx_sessions=False)
    # The URLconf, with the views and the API's schemas: on a first request it took over a second, and under a
    # burst of readers at start-up every process's first requests waited for it.
    import_module(settings.ROOT_URLCONF)
    connections.close_all()  # a connection opened here would be shared by every process forked after


def post_fork(server: Any, worker: Any) -> None:
    from verifier.start_up import models_load

    models_load()  # one torch thread here too, and ONNX Runtime's sessions: the rest came loaded from the master


def post_worker_init(worker: Any) -> None:
    worker.log.info("Worker ready (pid: %s)", worker.pid)
