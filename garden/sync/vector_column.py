"""The passages' vector column, sized for the configured embedding model (`providers.embeddings.dimensions`).

The migrations make it `vector(384)`, MiniLM's size, and the model declares that; a served model of another size
(`EMBEDDING_BACKEND=openai`, `EMBEDDING_DIMENSIONS`) needs the column altered, which `reembed_garden` does: the
vector index dropped, the column emptied into the new size (vectors of one size cannot become another's), every
passage embedded again, then the column made NOT NULL and the index built again. Until then an import refuses to
write (`VECTOR_COLUMN_SIZE`) and a question is told the garden is another model's (`EmbedderMismatch`).
"""

from __future__ import annotations

from typing import Final

from django.db import connection, transaction

from garden.models import Passage
from garden.sync.indexing import VECTOR_INDEX, vector_index_ensure
from providers import embeddings

VECTOR_COLUMN_SIZE: Final = (
    "The passages' vectors hold {column} numbers and the configured embedder ({embedder}) makes {wanted}: run "
    "`python manage.py reembed_garden` to switch the garden over; nothing was imported."
)


def _table() -> str:
    return Passage._meta.db_table


def vector_column_dimensions() -> int:
    """The size of the vectors the column holds now (pgvector keeps it as the column's type modifier)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'embedding'",
            [_table()],
        )
        return int(cursor.fetchone()[0])


def vector_column_problem() -> str | None:
    """Why vectors of the configured embedder cannot be written now (the column is of another size), or None."""
    column, wanted = vector_column_dimensions(), embeddings.dimensions()
    if column == wanted:
        return None
    return VECTOR_COLUMN_SIZE.format(column=column, wanted=wanted, embedder=embeddings.embedder())


@transaction.atomic
def vector_column_resize(dimensions: int) -> None:
    """Make the column `vector(dimensions)`, every vector emptied (NULL until embedded again) and the index
    dropped: HNSW indexes one size only."""
    table = connection.ops.quote_name(_table())
    with connection.cursor() as cursor:
        # Inside a caller's transaction (a test's), foreign keys checked at commit must be checked first:
        # PostgreSQL alters no table with checks pending (as `vector_index_ensure` builds no index).
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"DROP INDEX IF EXISTS {VECTOR_INDEX}")
        cursor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding DROP NOT NULL")
        cursor.execute(
            f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector({int(dimensions)}) USING NULL"
        )
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")


def vector_column_finish() -> bool:
    """Once every passage has a vector again: the column NOT NULL, as the migrations made it, and the index built.
    False (nothing done) while some passage has none."""
    if Passage.objects.filter(embedding__isnull=True).exists():
        return False
    table = connection.ops.quote_name(_table())
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET NOT NULL")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    vector_index_ensure()
    return True
