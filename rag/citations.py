"""Parse `[n]` markers, drop numbers that were never offered, and check every answer sentence
against the sources: small models often omit or misplace markers, and the user must still see
correct citations, and see which sentences nothing supports."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from rag.chunking import sentence_spans
from rag.embedding import Embedder
from rag.evidence import Evidence, Sentence, content_words
from rag.types import AnswerSentence, Citation

MARKER = re.compile(r"\[\s*(?:(?:sources?|ref)\s*)?(\d+(?:\s*[,;]\s*(?:(?:sources?)\s*)?\d+)*)\s*\]", re.I)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def numbers(text: str) -> set[str]:
    """Numbers as digit strings ("6,800" == "6800"; "50%" and "50\\%" both give "50")."""
    return {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(text)}


def parse_markers(text: str) -> list[int]:
    """Citation numbers in order of appearance: [1], [1, 2], [1][3], [Source 2]."""
    out: list[int] = []
    for m in MARKER.finditer(text):
        out += [int(n) for n in re.findall(r"\d+", m.group(1))]
    return out


def strip_markers(text: str) -> str:
    return re.sub(r"\s+([.,;:!?])", r"\1", MARKER.sub("", text)).strip()


def support(sentence: str, vector: np.ndarray, ev_sentence: Sentence, source_text: str) -> float:
    """How well one source sentence backs an answer sentence: cosine similarity blended with
    the share of the answer's content words it contains; numbers the source never states
    halve the score (a wrong number is the commonest small-model error)."""
    cos = float(vector @ ev_sentence.vector)
    words = content_words(sentence)
    lexical = len(words & content_words(ev_sentence.text)) / len(words) if words else 0.0
    score = 0.6 * cos + 0.4 * lexical
    stated = numbers(sentence)
    if stated and not stated <= numbers(source_text):
        score *= 0.5
    return score


@dataclass
class Checked:
    text: str
    sentences: list[AnswerSentence]
    citations: list[Citation]
    invented: int


def _best(sentence: str, vector: np.ndarray, ev: Evidence) -> tuple[float, Sentence]:
    """Best-supporting sentence of a source. Only sentences shown to the model count."""
    shown = [ev.sentences[i] for i in ev.chosen] or ev.sentences
    source_text = " ".join(s.text for s in shown)
    scored = [(support(sentence, vector, s, source_text), s) for s in shown]
    return max(scored, key=lambda t: t[0])


_TRAILING = re.compile(r"([.!?])((?:\s*" + MARKER.pattern + r")+)", re.I)


def attach_trailing_markers(text: str) -> str:
    """'... pretraining. [1]' -> '... pretraining [1].' so a marker stays with its sentence."""
    return _TRAILING.sub(lambda m: m.group(2) + m.group(1), text)


def check_citations(
    answer: str, evidence: list[Evidence], embedder: Embedder, *, threshold: float = 0.45
) -> Checked:
    """Verify and repair the citations of `answer` against the sources it was given."""
    offered = {ev.number: ev for ev in evidence}
    answer = attach_trailing_markers(answer)
    spans = sentence_spans(answer)
    raw = [answer[s:e] for s, e in spans]
    clean = [strip_markers(t) for t in raw]
    vectors = np.asarray(embedder.embed_batch(clean), dtype=np.float32) if clean else []
    invented = 0
    sentences: list[AnswerSentence] = []
    best_passage: dict[int, tuple[float, Sentence]] = {}
    for text, plain, vec in zip(raw, clean, vectors):
        cited = list(dict.fromkeys(parse_markers(text)))
        invented += sum(1 for n in cited if n not in offered)
        cited = [n for n in cited if n in offered]
        if len(content_words(plain)) < 3:  # "Yes.", headings: nothing to verify
            sentences.append(AnswerSentence(plain, cited, True, 1.0))
            continue
        scores = {n: _best(plain, vec, ev) for n, ev in offered.items()}
        good = [n for n in cited if scores[n][0] >= threshold]
        attributed = False
        if not good and scores:
            top = max(scores, key=lambda n: scores[n][0])
            if scores[top][0] >= threshold:
                good, attributed = [top], True
        for n in good:
            if n not in best_passage or scores[n][0] > best_passage[n][0]:
                best_passage[n] = scores[n]
        final = good or cited
        score = max((scores[n][0] for n in final), default=0.0) if scores else 0.0
        sentences.append(AnswerSentence(plain, final, bool(good), round(score, 4), attributed))

    # Renumber by first appearance so the reader sees [1], [2], ... in order.
    renumber: dict[int, int] = {}
    for s in sentences:
        for n in s.citations:
            renumber.setdefault(n, len(renumber) + 1)
    citations = []
    for old, new in renumber.items():
        ev = offered[old]
        score, passage = best_passage.get(old) or _best(" ".join(s.text for s in sentences), vectors[0], ev)
        citations.append(
            Citation(
                new,
                ev.paper.id,
                ev.paper.display_title,
                ev.paper.url,
                ev.paper.sources,
                passage.text,
                passage.start,
                passage.end,
                round(score, 4),
            )
        )
    for s in sentences:
        s.citations = [renumber[n] for n in s.citations]
    return Checked(render_text(sentences), sentences, citations, invented)


def render_text(sentences: list[AnswerSentence]) -> str:
    """The answer with its verified markers placed before each sentence's final punctuation."""
    out = []
    for s in sentences:
        marks = "".join(f"[{n}]" for n in s.citations)
        text = s.text
        if marks:
            m = re.search(r"[.!?]+[\"')]*$", text)
            text = f"{text[: m.start()]} {marks}{text[m.start() :]}" if m else f"{text} {marks}"
        out.append(text)
    return " ".join(out)
