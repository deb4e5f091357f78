"""Complete a checked answer: every part of the question answered, the paper named.

Small models answer the first part of a two-part question and drop the second ("how many hours
and classes" gets the hours), give one number of a comparison, or write "[1]" where a paper's name
belongs. After the checks, each part of the question that no shown sentence covers gets the
evidence sentence that covers it best, quoted with its citation (extractive, so always faithful),
and a which-paper question gets the cited paper's title when the answer names none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from rag import text as tx
from rag.answer.citations import next_number
from rag.index.embedding import Embedder
from rag.question import Intent, Kind, Wanted
from rag.question.clauses import noun
from rag.search.evidence import Evidence, Sentence, best_told, fit, told
from rag.types import AnswerSentence, Check, Citation

MAX_COMPLETIONS = 2

_WH_PHRASE = re.compile(r"^\s*(?:how (?:many|much)|which|what)\s+((?:[\w-]+\s*){1,3})", re.I)


def _focus(part: str, parts: Sequence[str]) -> set[str]:
    """What this part asks for: the noun after "how many"/"which"/"what" ("how many classes does
    ..." -> classes), else its words that the other parts do not share (the common subject)."""
    m = _WH_PHRASE.match(part)
    if m and tx.content_words(noun(m.group(1))):
        return tx.content_words(noun(m.group(1)))
    others = set().union(*(tx.content_words(p) for p in parts if p != part)) if len(parts) > 1 else set()
    return tx.content_words(part) - others


def lacks_wanted(intent: Intent, answer: str) -> bool:
    """The answer lacks the kind of thing the question asks for: asked for an amount, it states no
    number or formula beyond those the question states ("How big do the models get?" answered
    about compute; "O(n) measurements" is an amount)."""
    return intent.wants is Wanted.NUMBER and not tx.amounts(answer) - tx.amounts(intent.question)


def missing_parts(intent: Intent, answer: str) -> list[tuple[str, set[str]]]:
    """(part, its focus words) for each part the answer leaves out: its focus words are not
    mentioned, or, for a comparison, the answer states fewer than two numbers."""
    parts = intent.parts
    if len(parts) < 2:
        return []
    said = tx.content_words(answer)
    # One thing against another wants both numbers; two named things asked the same (`subjects`)
    # want each part's answer.
    comparison = intent.kind is Kind.COMPARISON and not intent.subjects
    out = []
    for part in parts:
        focus = _focus(part, parts)
        if comparison and part == parts[-1]:
            # Numbers the question states ("AlpacaEval-2", "at 0.55 bits") answer nothing.
            if len(tx.numbers(answer, words=False) - tx.numbers(intent.question, words=False)) < 2:
                out.append((part, focus | {NUMBERS}))
        elif focus and len(focus & said) < max(1, len(focus) // 2):
            out.append((part, focus))
    return out


NUMBERS = "<numbers>"  # focus marker: the part wants numbers the answer does not state yet


def complete(
    intent: Intent,
    sentences: list[AnswerSentence],
    citations: list[Citation],
    evidence: Sequence[Evidence],
    embedder: Embedder | None = None,
) -> tuple[list[AnswerSentence], list[Citation]]:
    """Add quoted evidence for the parts the answer misses, and the title for a which-paper
    question whose answer names no paper; asked for several papers, each paper the answer cites
    or an alternative of the question points to is named with what it does (`embedder` matches
    the alternatives to the sources). Returns new sentences and citations."""
    sentences, citations = list(sentences), list(citations)
    if intent.asks_for_papers:
        sentences, citations = _describe_papers(intent, sentences, citations, evidence, embedder)
    answer = " ".join(s.text for s in sentences)
    by_paper = {c.paper_id: c.number for c in citations}
    added = 0
    for _part, focus in missing_parts(intent, answer):
        if added == MAX_COMPLETIONS:
            break
        best = _best_sentence(focus, evidence, answer, intent.words)
        if best is None:
            continue
        ev, text = best
        number = by_paper.get(ev.paper.id)
        if number is None:
            number = next_number(citations)
            sentence = next(s for s in ev.sentences if s.text == text)
            citations.append(Citation(number, ev.paper.id, ev.paper.display_title, ev.paper.url,
                                      ev.paper.sources, text, sentence.start, sentence.end, 1.0))  # fmt: skip
            by_paper[ev.paper.id] = number
        quoted = f"“{text.rstrip('.')}”."
        sentences.append(AnswerSentence(quoted, [number], True, 1.0, False, [Check("quoted", True)]))
        answer += " " + text
        added += 1
    if intent.asks_for_paper and citations and not _names_a_paper(answer, citations):
        first = citations[0]
        sentences.insert(0, AnswerSentence(f"The paper is “{first.title}”.", [first.number], True, 1.0,
                                           False, [Check("names", True)]))  # fmt: skip
    if intent.kind is Kind.WHICH_PAPER and citations:
        sentences += _coined_sentence(citations[0], evidence, " ".join(s.text for s in sentences))
    return sentences, citations


def _coined_sentence(cited: Citation, evidence: Sequence[Evidence], answer: str) -> list[AnswerSentence]:
    """Asked which paper, the name the paper gives what it introduces, when the answer leaves it
    out: a reader asking "Which paper introduces a Similarity Telescope?" wants "Spotscape" too."""
    paper = next((ev.paper for ev in evidence if ev.paper.id == cited.paper_id), None)
    name = tx.coined_name(paper.title, paper.abstract) if paper else ""
    if not name or tx.name_in(name, answer) or name.lower() in answer.lower():
        return []
    return [
        AnswerSentence(f"It introduces {name}.", [cited.number], True, 1.0, False, [Check("names", True)])
    ]


MAX_DESCRIBED = 3


def _describe_papers(
    intent: Intent,
    sentences: list[AnswerSentence],
    citations: list[Citation],
    evidence: Sequence[Evidence],
    embedder: Embedder | None,
) -> tuple[list[AnswerSentence], list[Citation]]:
    """Each paper of a several-papers answer named with a sentence of its own: the papers it cites
    or names by title, then the source that best matches each alternative of the question. A paper
    the answer only names, or cites under a sentence that repeats the question, gets its best
    sentence quoted."""
    by_id = {ev.paper.id: ev for ev in evidence}
    targets: dict[str, Sentence | None] = {c.paper_id: None for c in citations if c.paper_id in by_id}
    said = " ".join(s.text for s in sentences).lower()
    # A paper the answer names by its title is one of its answers, cited or not.
    targets |= {pid: None for pid, ev in by_id.items() if ev.paper.title and ev.paper.title.lower() in said}
    alts = list(intent.alternatives)
    if alts and embedder is not None and evidence:
        for alt, vec in zip(alts, embedder.embed_batch(alts)):
            v, words = np.asarray(vec, dtype=np.float32), tx.content_words(alt)

            score, ev = max(
                ((fit(v, words, s), ev) for ev in evidence for s in ev.sentences), key=lambda t: t[0]
            )
            if score >= ALTERNATIVE_MIN and targets.get(ev.paper.id) is None:
                targets[ev.paper.id] = best_told(v, words, ev)
    for pid, sentence in _naming_sources(intent, evidence).items():
        if targets.get(pid) is None:
            targets[pid] = sentence
    asked = intent.words | tx.meta_stems()
    titles = [t for ev in evidence for t in (ev.paper.title, ev.paper.display_title) if t]
    by_paper = {c.paper_id: c.number for c in citations}
    added = 0
    for pid, sentence in targets.items():
        if added == MAX_DESCRIBED:
            break
        ev, number = by_id[pid], by_paper.get(pid)
        # Described but never named ("The papers are: “We optimize proofs …” [1]") still leaves
        # the reader without the paper's name, which is what was asked for.
        if number is not None and _described(number, sentences, titles, asked, ev.paper.title or None):
            continue
        sentence = sentence or max(ev.sentences, key=lambda s: s.score + told(s))
        if number is None:
            number = next_number(citations)
            citations.append(Citation(number, pid, ev.paper.display_title, ev.paper.url, ev.paper.sources,
                                      sentence.text, sentence.start, sentence.end, 1.0))  # fmt: skip
            by_paper[pid] = number
        text = f"“{ev.paper.display_title}”: “{sentence.text.rstrip('.')}”."
        sentences.append(AnswerSentence(text, [number], True, 1.0, False, [Check("quoted", True)]))
        added += 1
    if added:
        sentences = _drop_bare_lists(sentences, citations, titles, asked)
    return sentences, citations


def _drop_bare_lists(
    sentences: list[AnswerSentence], citations: Sequence[Citation], titles: Sequence[str], asked: set[str]
) -> list[AnswerSentence]:
    """ "The papers are “A” [1] and “B” [2]." says nothing once A and B have their own sentence; it
    goes only if each paper it cites stays both described and named without it (it may be the one
    sentence that names a paper the model described by a bare quote)."""
    title_of = {c.number: c.title or None for c in citations}
    kept = list(sentences)
    for s in sentences:
        if not s.citations or _says_more(s, titles, asked):
            continue
        rest = [t for t in kept if t is not s]
        if all(_described(n, rest, titles, asked, title_of.get(n)) for n in s.citations):
            kept = rest
    return kept


def _naming_sources(intent: Intent, evidence: Sequence[Evidence]) -> dict[str, Sentence]:
    """Asked which papers use a named thing ("Which papers test on Mistral?"), each source whose
    abstract names everything the question names, with its best sentence among those naming most
    of it: every such paper is an answer, whether or not the model cited it. Only when the names
    are what the question is about, one verb aside ("use", "test on"): in "Which papers make LLM
    inference cheaper?" LLM is a setting, and most sources name it."""
    wanted = sorted(intent.names)
    rest = tx.content_words(intent.described[0]) - tx.content_words(" ".join(wanted))
    if not wanted or len(rest - tx.meta_stems()) > 1:
        return {}

    def named(s: Sentence) -> int:
        return sum(tx.name_in(n, s.text) for n in wanted)

    return {
        ev.paper.id: max(ev.sentences, key=lambda s: (named(s), s.score + told(s)))
        for ev in evidence
        if tx.shared_names(intent.names, [ev.paper.abstract])
    }


# The least match (cosine + word overlap) of a source sentence to an alternative of the question
# for that source to be named as a paper the alternative describes: alternatives a source is about
# score well above it, alternatives no source is about ("protein folding", "medieval poetry") well
# below.
ALTERNATIVE_MIN = 0.5


def _says_more(sentence: AnswerSentence, titles: Sequence[str], asked: set[str]) -> bool:
    """The sentence claims something beyond the question and the papers' titles."""
    plain = sentence.text
    for title in titles:
        plain = re.sub(re.escape(title), " ", plain, flags=re.I)
    return sentence.claim and bool(tx.content_words(plain) - asked)


def _described(
    number: int,
    sentences: Sequence[AnswerSentence],
    titles: Sequence[str],
    asked: set[str],
    title: str | None = None,
) -> bool:
    """Some shown sentence citing `number` says something beyond the question and the titles;
    given its paper's `title`, the answer also names that paper somewhere."""
    if title is not None and not _names(title, " ".join(s.text for s in sentences)):
        return False
    return any(number in s.citations and _says_more(s, titles, asked) for s in sentences)


def _names(title: str, answer: str) -> bool:
    """The answer contains the title, or the name the title starts with ("RRM: ...")."""
    head = re.split(r"[:—–]| - ", title, maxsplit=1)[0].strip()
    return title.lower() in answer.lower() or (len(head) < len(title) and tx.name_in(head, answer))


def _names_a_paper(answer: str, citations: Sequence[Citation]) -> bool:
    """The answer contains a cited paper's title, or the name its title starts with."""
    return any(_names(c.title, answer) for c in citations)


def _best_sentence(
    focus: set[str], evidence: Sequence[Evidence], answer: str, asked: set[str]
) -> tuple[Evidence, str] | None:
    """The shown evidence sentence that best covers the part: most focus words (numbers the
    answer lacks count as one when the part wants numbers), then most question words, then
    relevance; never one the answer already says."""
    said, stated = tx.content_words(answer), tx.numbers(answer, words=False)
    best, best_key = None, (0, 0, 0.0)
    for ev in evidence:
        for i in ev.chosen or range(len(ev.sentences)):
            text = ev.sentences[i].text
            words = tx.content_words(text)
            # Only what the answer does not say yet counts: a new focus word or a new number.
            hits = len((words & focus) - said) + (
                NUMBERS in focus and bool(tx.numbers(text, words=False) - stated)
            )
            key = (hits, len(words & asked), ev.sentences[i].score)
            if hits and key > best_key:
                best, best_key = (ev, text), key
    return best
