"""The embedding backends: ONNX gives torch's vectors (fp32) or close ones (int8), questions still find their
articles under int8, and the export is made once and reused."""

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import onnx as onnx_format
import pytest

from garden.answering.retrieval import retrieve
from garden.golden import golden_load
from garden.models import Article, Passage
from garden.services import embedding_input
from garden.sync.reembedding import passages_reembed
from providers import embeddings
from providers.embeddings import EmbeddingBackend, onnx

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def passage_texts(django_db_setup, django_db_blocker):
    # django_db_setup first: the sample garden's passages are there even when this module runs first.
    with django_db_blocker.unblock():
        rows = Passage.objects.filter(is_current=True).select_related("revision").order_by("id")[:96]
        return [embedding_input(c.revision.title, c.text) for c in rows] + [
            "bees",
            "What is a queen excluder?",
        ]


@pytest.fixture(scope="module")
def torch_vectors(passage_texts):
    return embeddings.embed(passage_texts, backend=EmbeddingBackend.TORCH)


def test_onnx_fp32_gives_the_torch_vectors(passage_texts, torch_vectors):
    vectors = embeddings.embed(passage_texts, backend=EmbeddingBackend.ONNX)
    assert vectors.shape == (len(passage_texts), embeddings.DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert (vectors * torch_vectors).sum(1).min() >= 0.999


def test_onnx_int8_vectors_stay_close_to_torch(passage_texts, torch_vectors):
    vectors = embeddings.embed(passage_texts, backend=EmbeddingBackend.ONNX_INT8)
    cosines = (vectors * torch_vectors).sum(1)
    assert cosines.min() >= 0.97
    assert cosines.mean() >= 0.99


def test_the_order_of_texts_does_not_change_their_vectors(passage_texts):
    forward = embeddings.embed(passage_texts[:10], backend=EmbeddingBackend.ONNX, batch_size=4)
    backward = embeddings.embed(passage_texts[9::-1], backend=EmbeddingBackend.ONNX, batch_size=4)
    assert np.allclose(forward, backward[::-1], atol=1e-5)


def test_an_int8_vector_does_not_depend_on_the_texts_embedded_beside_it(passage_texts):
    together = embeddings.embed(passage_texts[:16], backend=EmbeddingBackend.ONNX_INT8)
    alone = np.stack(
        [embeddings.embed([text], backend=EmbeddingBackend.ONNX_INT8)[0] for text in passage_texts[:16]]
    )
    assert np.allclose(together, alone, atol=1e-6)


def test_the_configured_backend_is_the_one_used(settings, passage_texts):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    assert embeddings.active_backend() is EmbeddingBackend.ONNX_INT8
    assert np.allclose(
        embeddings.embed_one(passage_texts[0]),
        embeddings.embed([passage_texts[0]], backend=EmbeddingBackend.ONNX_INT8)[0],
        atol=1e-6,
    )


def test_an_unknown_backend_is_refused_with_the_choices(settings):
    settings.EMBEDDING_BACKEND = "tensorflow"
    with pytest.raises(ValueError, match=r"EMBEDDING_BACKEND is 'tensorflow'.*torch, onnx, onnx-int8"):
        embeddings.active_backend()


def test_the_cached_vectors_of_one_backend_are_not_served_for_another(settings):
    text = "A sentence embedded under two backends."
    settings.EMBEDDING_BACKEND = "torch"
    under_torch = embeddings.embed_cached([text])[0]
    settings.EMBEDDING_BACKEND = "onnx-int8"
    under_int8 = embeddings.embed_cached([text])[0]
    assert not np.array_equal(under_torch, under_int8)
    assert np.allclose(under_int8, embeddings.embed([text], backend=EmbeddingBackend.ONNX_INT8)[0])


def test_questions_still_find_their_articles_on_a_garden_embedded_with_int8(settings):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    passages_reembed()
    single_facts = [q for q in golden_load() if q.category == "single_fact"]
    slugs_by_id = dict(Article.objects.values_list("id", "slug"))
    found = 0
    for question in single_facts:
        slugs = {slugs_by_id[a.article_id] for a in retrieve(question.question).articles[:5]}
        found += bool(slugs & set(question.expected_articles))
    assert found == len(single_facts)
    assert retrieve("Which football club won the 1998 World Cup final?").empty


def _torch_attention() -> str:
    transformer: Any = embeddings.model()[0].auto_model
    return str(transformer.config._attn_implementation)


def test_the_export_is_made_once_even_when_two_start_together_and_then_reused(tmp_path):
    folder = onnx.cache_folder(tmp_path, embeddings.model_path())
    attention = _torch_attention()
    loads = []

    def load_torch():
        loads.append(1)
        return embeddings.model()

    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: onnx.export(folder, load_torch), range(2))
    assert first == second and loads == [1]
    assert first.fp32.exists() and first.int8.exists()
    written = first.fp32.stat().st_mtime_ns, first.int8.stat().st_mtime_ns
    again = onnx.export(folder, load_torch)
    assert again == first and loads == [1]
    assert (again.fp32.stat().st_mtime_ns, again.int8.stat().st_mtime_ns) == written
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    # The export traces through another attention; the process's own torch model is left as it was.
    assert _torch_attention() == attention
    text = ["The cache serves a working model."]
    assert np.allclose(
        onnx.session(again.int8, 1).hidden_states(embeddings.tokenize(text)),
        embeddings.onnx_session(EmbeddingBackend.ONNX_INT8).hidden_states(embeddings.tokenize(text)),
        atol=1e-5,
    )


def test_a_failed_export_says_why_and_what_to_do(tmp_path):
    def broken():
        raise RuntimeError("no weights here")

    with pytest.raises(onnx.ExportError, match=r"no weights here.*EMBEDDING_BACKEND=torch"):
        onnx.export(tmp_path / "export", broken)
    assert not list((tmp_path / "export").glob("*.onnx"))


def test_each_layers_attention_is_fused_in_both_exports():
    # Traced through PyTorch's default attention, the optimizer fuses none, and int8 runs about 1.3x slower.
    for backend, fused in [(EmbeddingBackend.ONNX, "Attention"), (EmbeddingBackend.ONNX_INT8, "QAttention")]:
        graph = onnx_format.load(str(embeddings.onnx_session(backend).path)).graph
        assert sum(node.op_type == fused for node in graph.node) == 6


def test_batches_padded_by_the_onnx_path_are_what_the_tokenizer_makes():
    texts = ["A short one.", "A rather longer text about the railway's carriage fleet and its sheds.", "X"]
    padded = embeddings.padded(embeddings.tokenize_unpadded(texts))
    expected = embeddings.tokenize(texts, padding=True)
    for name in onnx.INPUT_NAMES:
        assert np.array_equal(padded[name], expected[name])


def test_the_transformer_loaded_alone_reads_as_the_torch_models_own():
    # The judge's torch transformer is loaded without sentence-transformers when the torch backend is not in use:
    # its hidden states, which the judge's features were fitted on, are the very same.
    import torch

    texts = [
        "The viaduct has twelve arches.",
        "Ashcombe signal box is maintained by the volunteers of the team.",
    ]
    encoded = {name: torch.from_numpy(ids) for name, ids in embeddings.tokenize(texts, padding=True).items()}
    own_transformer: Any = embeddings.model()[0].auto_model
    with torch.inference_mode():
        alone = embeddings.transformer_load()(**encoded).last_hidden_state
        own = own_transformer(**encoded).last_hidden_state
    assert torch.equal(alone, own)
