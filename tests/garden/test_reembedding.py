"""Switching EMBEDDING_BACKEND: each passage records what embedded it, and the next import embeds again what another
backend made, reusing none of its vectors, in batches a re-run resumes."""

import numpy as np
import pytest
from django.core.management import call_command

from garden.models import Article, ArticleRevision, Passage
from garden.services import embedding_input
from garden.sync import garden_import, reembedding
from garden.sync.embedding import encode
from providers import embeddings
from providers.embeddings import EmbeddingBackend
from tests.factories import garden_write

pytestmark = pytest.mark.django_db

SIDING = """---
title: "Quarry siding"
---
The quarry siding at km 9.4 was laid in 1912 and is 210 m long.

It was relaid by volunteers in 2019, with oak sleepers from the estate.
"""
SIGNAL_BOX = """---
title: "Test signal box"
---
The test signal box has 18 levers and controls the quarry siding.

Its frame came from Millbridge in 1958.
"""
INT8 = f"onnx-int8/v{embeddings.onnx.EXPORT_VERSION}"


@pytest.fixture
def garden(tmp_path, settings):
    """Two notes imported under torch, into a garden holding nothing else."""
    Article.objects.all().delete()
    settings.EMBEDDING_BACKEND = "torch"
    folder = garden_write(tmp_path / "g", {"quarry-siding.md": SIDING, "test-signal-box.md": SIGNAL_BOX})
    garden_import([folder])
    return folder


def _int8_vectors(passages):
    inputs = [embedding_input(c.revision.title, c.text) for c in passages]
    return embeddings.embed(inputs, backend=EmbeddingBackend.ONNX_INT8)


def test_passages_record_the_backend_that_embedded_them(garden):
    assert set(Passage.objects.values_list("embedded_by", flat=True)) == {"torch"}
    assert embeddings.embedder(EmbeddingBackend.ONNX_INT8) == INT8


def test_after_a_switch_the_next_import_embeds_unchanged_notes_again(garden, settings, capsys):
    revisions = ArticleRevision.objects.count()
    count = Passage.objects.count()
    settings.EMBEDDING_BACKEND = "onnx-int8"

    call_command("import_garden", str(garden), "--no-progress")

    out = capsys.readouterr().out
    assert f"Embedded {count} passages of unchanged notes again" in out
    assert INT8 in out
    passages = list(Passage.objects.select_related("revision").order_by("pk"))
    assert {c.embedded_by for c in passages} == {INT8}
    assert np.allclose(np.asarray([c.embedding for c in passages]), _int8_vectors(passages), atol=1e-5)
    assert ArticleRevision.objects.count() == revisions  # no note changed, so no new revision

    call_command("import_garden", str(garden), "--no-progress")
    assert "again" not in capsys.readouterr().out


def test_an_edit_after_a_switch_reuses_no_vector_of_the_other_backend(garden, settings):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    garden_write(garden, {"quarry-siding.md": SIDING + "\nA catch point guards its exit.\n"})

    report = garden_import([garden])

    edited = list(
        Passage.objects.filter(is_current=True, article__slug="quarry-siding").select_related("revision")
    )
    assert report.revised == 1
    assert report.embedded == len(edited)  # its unchanged passages too: their vectors were torch's
    assert (
        report.reembedded == Passage.objects.filter(is_current=True, article__slug="test-signal-box").count()
    )
    current = list(Passage.objects.filter(is_current=True).select_related("revision").order_by("pk"))
    assert {c.embedded_by for c in current} == {INT8}
    assert np.allclose(np.asarray([c.embedding for c in current]), _int8_vectors(current), atol=1e-5)


def test_an_interrupted_re_embedding_keeps_its_batches_and_a_re_run_resumes(garden, settings, monkeypatch):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    monkeypatch.setattr(reembedding, "BATCH_PASSAGES", 1)
    calls = []

    def failing_second_time(texts, *args, **kwargs):
        calls.append(texts)
        if len(calls) == 2:
            raise RuntimeError("the machine ran out of memory")
        return encode(texts, *args, **kwargs)

    monkeypatch.setattr(reembedding, "encode", failing_second_time)
    with pytest.raises(RuntimeError):
        garden_import([garden])
    assert Passage.objects.filter(embedded_by=INT8).count() == 1

    total = Passage.objects.count()
    report = garden_import([garden])
    assert report.reembedded == total - 1
    assert set(Passage.objects.values_list("embedded_by", flat=True)) == {INT8}
