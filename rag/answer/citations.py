"""`[n]` markers: parse them, strip them, keep them with their sentence, renumber them in reading
order and turn them into `Citation`s. Whether a sentence is backed is decided in `rag.answer.trust`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from rag.search.evidence import Evidence, Sentence
from rag.text import plain
from rag.types import AnswerSentence, Citation

MARKER = re.compile(r"\[\s*(?:(?:sources?|ref)\s*)?(\d+(?:\s*[,;]\s*(?:(?:sources?)\s*)?\d+)*)\s*\]", re.I)
# Not when a word follows: "... LLMs. [1] uses X" opens the next sentence with the paper as subject.
_TRAILING = re.compile(r"([.!?])((?:\s*" + MARKER.pattern + r")++)(?!\s*(?-i:[a-z]))", re.I)


def parse_markers(text: str) -> list[int]:
    """Citation numbers in order of appearance: [1], [1, 2], [1][3], [Source 2]."""
    out: list[int] = []
    for m in MARKER.finditer(text):
        out += [int(n) for n in re.findall(r"\d+", m.group(1))]
    return out


def strip_markers(text: str) -> str:
    return re.sub(r"\s+([.,;:!?])", r"\1", MARKER.sub("", text)).strip()


def draft_preview(text: str) -> str:
    """A draft still being written, shown without markers (none is checked yet); text after an
    unclosed "[" near the end is held back, since it may be a marker in the making."""
    visible = MARKER.sub("", text)
    cut = visible.rfind("[")
    if cut > len(visible) - 14 and "]" not in visible[cut:]:
        visible = visible[:cut]
    return visible


def attach_trailing_markers(text: str) -> str:
    """'... pretraining. [1]' -> '... pretraining [1].' so a marker stays with its sentence."""
    return _TRAILING.sub(lambda m: m.group(2) + m.group(1), text)


# A marker stands for a paper, not for the source of a claim, when it follows one of these words
# or opens the sentence: "proposed by [1]", "The papers are [1] and [2]", "[1] proposes".
_NOUN_BEFORE = re.compile(
    r"(?:^|\b(?:is|are|was|were|by|from|in|see|and|or|namely|called|titled|paper|papers|work|works|"
    r"study|studies|article|source|both|including|like|while|whereas)|[:,(.!?])\s*$",
    re.I,
)


_GAP = re.compile(r"([\"'”’]?)\s*(?:by|in|from|see)?\s*", re.I)


def name_noun_markers(text: str, titles: dict[int, str]) -> str:
    """Write the paper's title before a marker used as a noun, so the sentence names the paper:
    "The work by [1] shows X" -> "The work by “Title” [1] shows X". Never leaves a blank."""
    out, last = [], 0
    for m in MARKER.finditer(text):
        numbers = [int(n) for n in re.findall(r"\d+", m.group(1))]
        if len(numbers) != 1 or numbers[0] not in titles or not _NOUN_BEFORE.search(text[last : m.start()]):
            continue
        title, before = titles[numbers[0]], text[last : m.start()]
        at = before.lower().rfind(title.lower())
        if at >= 0:
            # Already named: 'The paper "Title" by [1] shows' -> 'The paper "Title" [1] shows'.
            gap = _GAP.fullmatch(before, at + len(title))
            if gap:
                out.append(before[: gap.start()] + gap.group(1) + " ")
                last = m.start()
            continue
        out.append(before + f"“{title}” ")
        last = m.start()
    return "".join(out) + text[last:]


def renumber(
    sentences: Sequence[AnswerSentence],
    offered: dict[int, Evidence],
    passage: dict[int, tuple[float, Sentence]],
) -> list[Citation]:
    """Number the cited sources by first appearance ([1], [2], ... in reading order), rewrite the
    sentences' numbers in place, and return the citations with the passage each shows
    (`passage`: the one behind the first sentence that cites the source)."""
    order: dict[int, int] = {}
    for s in sentences:
        for n in s.citations:
            order.setdefault(n, len(order) + 1)
    citations = []
    for old, new in order.items():
        ev = offered[old]
        score, shown = passage[old]
        citations.append(
            Citation(
                new,
                ev.paper.id,
                ev.paper.display_title,
                ev.paper.url,
                ev.paper.sources,
                shown.text,
                shown.start,
                shown.end,
                round(score, 4),
            )  # fmt: skip
        )
    for s in sentences:
        s.citations = [order[n] for n in s.citations]
    return citations


def render_text(
    sentences: Sequence[AnswerSentence],
    citations: Sequence[Citation] = (),
    *,
    mark: Callable[[int], str] = lambda n: f"[{n}]",
    escape: Callable[[str], str] = lambda t: t,
) -> str:
    """The answer with its verified markers: after the title of a paper the sentence names, else
    before the sentence's final punctuation. `mark` and `escape` let a UI render links and HTML."""
    titles = {c.number: c.title for c in citations}
    out = []
    for s in sentences:
        text = escape(re.sub(r"\s{2,}", " ", plain(s.text)))
        rest = []
        for n in s.citations:
            quoted = escape(f"“{titles.get(n, '')}”")
            if len(quoted) > 2 and quoted in text:
                text = text.replace(quoted, f"{quoted} {mark(n)}", 1)
            else:
                rest.append(n)
        marks = "".join(mark(n) for n in rest)
        if marks:
            m = re.search(r"[.!?]+[\"')]*$", text)
            text = f"{text[: m.start()]} {marks}{text[m.start() :]}" if m else f"{text} {marks}"
        out.append(text)
    return " ".join(out)


def next_number(citations: Sequence[Citation]) -> int:
    """The number a newly added source takes: after the highest in use (numbers may have gaps)."""
    return max((c.number for c in citations), default=0) + 1


def compact(sentences: Sequence[AnswerSentence], citations: Sequence[Citation]) -> list[Citation]:
    """After sentences were taken out: the citations still cited, numbered again by first
    appearance, the sentences' numbers rewritten in place."""
    order: dict[int, int] = {}
    for s in sentences:
        for n in s.citations:
            order.setdefault(n, len(order) + 1)
    for s in sentences:
        s.citations = [order[n] for n in s.citations]
    by_number = {c.number: c for c in citations}
    return [dataclasses.replace(by_number[old], number=new) for old, new in order.items()]
