"""The bench's real-looking notes: docstrings made notes, titled by their subject."""

from bench.notes import NOTE_MAX_CHARS, _prose, _subject


def test_a_note_is_titled_by_the_object_it_documents():
    assert _subject("select_related") == "Select related"
    assert _subject("QuerySet") == "Query set"
    assert _subject("_private_helper_") == "Private helper"


def test_a_notes_passage_is_the_docstrings_prose_without_its_reference_sections():
    docstring = """Matrix or vector norm.

    This function is able to return one of eight different matrix norms.

    Explanation
    ===========

    It reads like a note.

    Parameters
    ----------
    x : array_like
        Input array.
    """
    assert _prose(docstring) == (
        "Matrix or vector norm. This function is able to return one of eight different matrix norms. "
        "It reads like a note."
    )
    long = _prose("A sentence of prose. " * 200)
    assert len(long) <= NOTE_MAX_CHARS and long.endswith("prose.")
