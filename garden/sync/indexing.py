"""The passages' vector index during a large write: built once after the write, not grown a row at a time.

pgvector's HNSW index grows by a search of its graph for every row inserted, as wide as `ef_construction` (800):
on the shared 2-core machine, 5,000 passages took 33 s to insert into an indexed table and 0.4 s into one without
the index, which was then built in 2.1 s (docs/performance.md, "Where an import's time goes"). So a sync that
writes many passages, compared with those the index holds, drops the index, writes, and builds it again, once.
Meanwhile retrieval reads the passages without it: exact, and slower, never wrong. The index is built again
however the write ends, and at the start of every sync, should an earlier one have been killed before it could.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction
from pgvector.django import HnswIndex

from garden.models import Passage

log = logging.getLogger(__name__)

VECTOR_INDEX = "passage_embedding_hnsw"
# Below this many passages a sync inserts into the index as it goes: building it again costs the whole garden's
# passages (about 0.4 ms each), inserting costs each written one about 7 ms.
DEFERRED_FROM_PASSAGES = 1000
# The memory the build may take: the graph of 50,000 passages fits (PostgreSQL's default, 64 MB, does not, and a
# build that outgrows it is many times slower).
BUILD_MEMORY = "512MB"


def vector_index() -> HnswIndex:
    """The passages' vector index as the model declares it (the migrations build the same)."""
    index = next(index for index in Passage._meta.indexes if index.name == VECTOR_INDEX)
    assert isinstance(index, HnswIndex)
    return index


def vector_index_exists() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [VECTOR_INDEX])
        return bool(cursor.fetchone()[0])


def vector_index_ensure() -> None:
    """Build the index as the model declares it, if it is missing."""
    if vector_index_exists():
        return
    with transaction.atomic(), connection.schema_editor(atomic=False) as editor:
        editor.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
        # Inside a caller's transaction (a test's), the foreign keys checked at commit must be checked first:
        # PostgreSQL builds no index on a table with checks pending. Django declares them all deferred.
        editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        editor.add_index(Passage, vector_index())
        editor.execute("SET CONSTRAINTS ALL DEFERRED")
    log.info("Built the passages' vector index (%s).", VECTOR_INDEX)


def deferred(to_write: int, indexed: int) -> bool:
    """Whether writing `to_write` passages into an index of `indexed` is slower than building it again after:
    a first import, or a sync that writes about as many passages as the garden holds."""
    return to_write >= DEFERRED_FROM_PASSAGES and 2 * to_write >= indexed


@contextmanager
def vector_index_deferred(to_write: int) -> Iterator[None]:
    """Around a sync's writes of `to_write` passages: without the index while they are written, if that is
    faster (`deferred`), and with it again after, however the writes end."""
    vector_index_ensure()
    if not deferred(to_write, Passage.objects.filter(is_current=True).count()):
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {VECTOR_INDEX}")
    try:
        yield
    finally:
        vector_index_ensure()
