from hypothesis import given, settings
from hypothesis import strategies as st

from rag.index.chunking import chunk_text
from rag.text import estimate_tokens as approx_tokens
from rag.text import sentence_spans

ABSTRACT = (
    "We study large models, e.g. transformers, at scale. Accuracy rises from 71.5% to 80.2% on "
    "ImageNet. Prior work (Smith et al. 2020) disagrees! Does it hold? Yes: in 3 of 4 settings."
)


def test_sentences_respect_abbreviations_and_decimals():
    sents = [ABSTRACT[s:e] for s, e in sentence_spans(ABSTRACT)]
    assert sents[0] == "We study large models, e.g. transformers, at scale."
    assert sents[1].startswith("Accuracy rises from 71.5% to 80.2%")
    assert len(sents) == 5


def test_chunks_cover_all_text_with_offsets_and_limits():
    text = " ".join([ABSTRACT] * 6)
    chunks = chunk_text("p", text, max_tokens=40, overlap_sentences=1)
    assert len(chunks) > 1
    for c in chunks:
        assert text[c.start : c.end] == c.text
        assert approx_tokens(c.text) <= 40 + 5
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    # consecutive chunks overlap by one sentence
    assert chunks[1].start < chunks[0].end


def test_over_long_sentence_is_split_on_words_not_truncated():
    text = " ".join(f"word{i}" for i in range(500)) + "."
    chunks = chunk_text("p", text, max_tokens=50, overlap_sentences=0)
    assert len(chunks) > 5
    assert " ".join(c.text for c in chunks) == text


def test_reserved_tokens_shrink_chunks():
    text = " ".join([ABSTRACT] * 4)
    assert len(chunk_text("p", text, max_tokens=60, reserved_tokens=30)) > len(
        chunk_text("p", text, max_tokens=60)
    )


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=600), st.integers(20, 120), st.integers(0, 2))
def test_chunking_property_offsets_and_coverage(text, limit, overlap):
    chunks = chunk_text("p", text, max_tokens=limit, overlap_sentences=overlap)
    covered = set()
    for c in chunks:
        assert text[c.start : c.end] == c.text and c.text.strip()
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
