"""The question reader: does a question ask for a list of papers on a topic ("Which papers study
X?", "What work looks at X, i.e. Y?", "papers on X", "Is there work on X?"), and which of its words
name the topic and its alternatives? A MiniLM token classifier citewise trained on questions
written by people who had not read the parser (eval/judge/train_reader.py), read as int8 ONNX.

Wording rules fit the phrasings they were written for; a trained reader decides by meaning. Its
first position says list or not; each word piece says whether it is in the topic, in an
alternative or gloss of it ("such as Y", "or Y", "i.e. Y"), or neither. Status and area words stay
with the filter table (`rag.question`): they are a closed vocabulary.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag.judge.model import TOKENIZER_FILE, WEIGHTS, JudgeLoadError, Meta, verify

READER = WEIGHTS / "reader"
# Word-piece labels, then the two labels of the first position (the question's kind).
LABELS = ("O", "B-TOPIC", "I-TOPIC", "B-ALSO", "I-ALSO", "LIST", "OTHER")
SPANS = 5  # the first five labels are a word piece's


@dataclass(frozen=True)
class Reading:
    """What the reader made of a question."""

    listing: float  # p(the question asks for a list of papers on a topic)
    topic: str = ""  # the words naming the topic, as written
    also: tuple[str, ...] = ()  # alternatives and glosses of the topic, as written
    # How sure it was of its least sure word: the lowest p of any word's label (1 = every word's
    # label was certain). A question unlike its training reads low.
    confidence: float = 1.0

    @property
    def asks_for_list(self) -> bool:
        return self.listing >= 0.5


class Reader:
    """Reads questions with the shipped weights (loaded on first use, checked by sha256)."""

    def __init__(self, folder: Path = READER, threads: int = 2):
        self.folder = Path(folder)
        self.meta = Meta.read(self.folder)
        if tuple(self.meta.labels) != LABELS:
            raise JudgeLoadError(f"{folder} is not a question reader: its labels are {self.meta.labels}")
        self.threads = threads
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._session is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                path = verify(self.folder, self.meta, "python -m eval.judge.train_reader")
                options = ort.SessionOptions()
                options.intra_op_num_threads = self.threads
                options.inter_op_num_threads = 1
                tokenizer = Tokenizer.from_file(str(self.folder / TOKENIZER_FILE))
                tokenizer.enable_truncation(self.meta.max_length)
                self._tokenizer = tokenizer
                self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return self._session, self._tokenizer

    def read(self, question: str) -> Reading:
        session, tokenizer = self._load()
        enc = tokenizer.encode(question)
        feeds = {
            "input_ids": np.array([enc.ids], dtype=np.int64),
            "attention_mask": np.array([enc.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([enc.type_ids], dtype=np.int64),
        }
        logits = session.run(None, feeds)[0][0].astype(np.float64)
        kind = _softmax(logits[0, SPANS:])
        tags = logits[:, :SPANS].argmax(axis=1)
        confidence = _confidence(logits[:, :SPANS], enc.word_ids)
        spans = _spans(question, tags, enc.offsets, enc.word_ids)
        topics = [s for label, s in spans if label == "TOPIC"]
        also = [s for label, s in spans if label == "ALSO"]
        # The topic comes first; a later span the model also read as the topic names it again
        # ("X, i.e. Y"): an alternative.
        topic = topics[0] if topics else ""
        also += topics[1:]
        return Reading(
            float(kind[0]),
            topic,
            tuple(dict.fromkeys(a for a in also if a.lower() != topic.lower())),
            confidence,
        )


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def _confidence(spans: np.ndarray, word_ids) -> float:
    """The lowest p of the label of any word's first piece."""
    firsts = [i for i, w in enumerate(word_ids) if w is not None and (i == 0 or word_ids[i - 1] != w)]
    if not firsts:
        return 1.0
    rows = spans[firsts]
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return float((e.max(axis=1) / e.sum(axis=1)).min())


def _spans(question: str, tags, offsets, word_ids) -> list[tuple[str, str]]:
    """The labelled spans of the question, whole words: a word takes its first piece's label."""
    spans: list[tuple[str, int, int]] = []  # label, start, end
    last_word = None
    for i, word in enumerate(word_ids):
        if word is None:
            last_word = None
            continue
        start, end = offsets[i]
        if word == last_word:  # a continuation piece extends whatever its word is in
            if spans and spans[-1][2] >= offsets[i - 1][1]:
                spans[-1] = (spans[-1][0], spans[-1][1], end)
            continue
        last_word = word
        label = LABELS[int(tags[i])]
        if label == "O":
            continue
        kind = label[2:]
        joins = (
            spans and spans[-1][0] == kind and (label.startswith("I-") or _gap(question, spans[-1][2], start))
        )
        # A word joined to the span by a hyphen or a slash is part of it, whatever the model said
        # of it ("classifier-free guidance", "LLM/VLM agents").
        compound = spans and question[spans[-1][2] : start] in ("", "-", "/")
        if joins or compound:
            spans[-1] = (spans[-1][0], spans[-1][1], end)
        else:
            spans.append((kind, start, end))
    out = []
    for k, a, b in spans:
        text = _balanced(question, a, b)
        if any(c.isalnum() for c in text):
            out.append((k, text))
    return out


def _balanced(question: str, a: int, b: int) -> str:
    """The span's text with its parentheses closed: "LoRA (low-rank adaptation" takes the ")"
    that follows it; a stray ")" or "(" at an end goes."""
    text = question[a:b]
    if text.count("(") > text.count(")"):
        close = question.find(")", b)
        if close >= 0 and "(" not in question[b:close]:
            text = question[a : close + 1]
    text = text.strip(" ,;:?.!")
    while text and (text[0] in ")]" or (text[-1] in "([")):
        text = text[1:] if text[0] in ")]" else text[:-1]
        text = text.strip(" ,;:?.!")
    if text.count("(") > text.count(")"):  # still unclosed: the words before the "(" are the name
        text = text[: text.rfind("(")].strip(" ,;:?.!")
    # A name never ends on a joining word: "hallucination in", "theorem proving or".
    while _DANGLING.search(text):
        text = _DANGLING.sub("", text).strip(" ,;:?.!")
    return text


_DANGLING = re.compile(r"\s+(?:or|and|nor|in|of|for|to|with|by|on|from|at|via|as|the|a|an)$", re.I)


def _gap(question: str, end: int, start: int) -> bool:
    """Two spans of one label with only spaces, a hyphen, a slash or a parenthesis between them are
    one span ("event-based (neuromorphic) vision data")."""
    return question[end:start].strip() in ("", "-", "/", "(", ")")


@lru_cache(maxsize=2)
def question_reader(folder: Path = READER, threads: int = 2) -> Reader:
    """The shipped question reader, loaded once per process."""
    return Reader(folder, threads)
