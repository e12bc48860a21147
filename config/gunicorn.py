"""gunicorn settings for every way the site is served (make run, the load test, the browser tests, compose).

Threads let quick requests (verdict polls, pages) through while other requests are busy answering; each
process keeps torch to one thread, since the processes already share the machine's cores, and loads the
embedding model as it starts.
"""

from typing import Any

worker_class = "gthread"
threads = 4
timeout = 120


def post_fork(server: Any, worker: Any) -> None:
    from garden import embeddings
    from verifier.judges.local.encoding import judge_backend

    embeddings.use_one_thread()
    # Loaded before the first request, not during it: the embedding backend, and the judge's if another.
    embeddings.load()
    embeddings.load(judge_backend())
