import itertools

from garden.passages import passage_spans, sentence_spans

TEXT = """## Fares

The adult return fare is £16.50, set on 1 March 2025 by Dr. A. Penrose. Children travel for £8.25 [2]. \
Dogs go free.

- Item one covers No. 7821.
- Item two is short

A last paragraph, e.g. one about the 1.5 km tunnel."""


def test_sentences_keep_abbreviations_decimals_and_citations_together():
    sentences = [span.of(TEXT) for span in sentence_spans(TEXT)]
    assert "The adult return fare is £16.50, set on 1 March 2025 by Dr. A. Penrose." in sentences
    assert "Children travel for £8.25 [2]." in sentences
    assert "- Item one covers No. 7821." in sentences
    assert "A last paragraph, e.g. one about the 1.5 km tunnel." in sentences


def test_passages_are_exact_slices_and_headings_stay_with_their_text():
    spans = passage_spans(TEXT)
    assert spans[0].of(TEXT).startswith("## Fares\n\nThe adult return fare")
    for span in spans:
        assert TEXT[span.start : span.end] == span.of(TEXT)
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))
    covered = "".join(span.of(TEXT) for span in spans)
    assert "".join(covered.split()) == "".join(TEXT.split())


def test_a_long_paragraph_is_split_at_sentence_boundaries():
    long = " ".join(f"Sentence number {i} says the viaduct has {i} arches." for i in range(60))
    spans = passage_spans(long)
    assert len(spans) > 1
    assert all(span.of(long).endswith("arches.") for span in spans)
    assert all(len(span.of(long)) <= 900 for span in spans)
