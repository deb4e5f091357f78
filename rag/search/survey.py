"""Survey answers: every indexed paper that fits a "which papers ...?" question, not the few the
model reads. The question's topic ("Kolmogorov-Arnold networks (KANs)") becomes phrases of stemmed
terms; a paper fits when a chunk of it holds one of them in a row, within the question's filters.
Each paper is listed with the sentence of its abstract that shows it fits.

How a topic becomes phrases, each step measured on the survey dev split:
- "X (Y)": X is the phrase; the acronym Y counts only in a chunk that also holds a word of X
  ("SAM" is also the Segment Anything Model).
- "A B or C": "A B" and "A C" ("backdoor attacks or defences").
- A word the whole index uses everywhere ("model", "learning", "data") at an end of a phrase
  goes, one at each end at most: "equivariant models" is "equivariant", "protein language
  models" is "protein language".
- A phrase that finds fewer than `RELAX_BELOW` papers loses its last word ("Koopman operator
  theory" -> "Koopman operator"), as long as a rare word stays.
- The names the indexed papers define for the topic (`forms.alias_forms`): an acronym's long
  forms, a long form's acronyms.

With a judge and the shipped decision (`decide.Decider`), every candidate is read by the
membership judge and listed by one learned decision over all its signals (`Survey.signals`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from rag import filters as flt
from rag import text as tx
from rag.index.store import Store
from rag.question import Intent
from rag.search.decide import Decider, Signals, features, names_of, shipped_decider
from rag.search.forms import Forms, alias_forms
from rag.search.membership import Judged, Membership
from rag.types import Paper

# A word in more than this share of the chunks says nothing about a topic ("model": 69 %).
UBIQUITOUS = 0.25
# A word in fewer than this share of the chunks is rare enough to carry a topic alone.
RARE = 0.01
RELAX_BELOW = 10
# An acronym counts in a chunk that also holds a word of the long form this rare.
ACRONYM_CONTEXT = 0.05
MAX_CHUNKS = 5000


@dataclass
class SurveyHit:
    """One paper that fits a survey question, with the sentence of its abstract that shows it."""

    rank: int
    paper: Paper
    sentence: str
    p: float | None = None  # the judge's p(about the topic), when a judge decided

    def to_json(self) -> dict:
        p = self.paper
        return {"rank": self.rank, "paper_id": p.id, "title": p.display_title, "url": p.url,
                "status": p.status, "area": p.extra.get("primary_area", ""), "sentence": self.sentence, "p": self.p}  # fmt: skip


def phrases(topic: str) -> tuple[list[str], list[str]]:
    """(the topic's phrases as written, its acronyms in parentheses)."""
    acronyms = [a.strip() for a in re.findall(r"\(([^)]*)\)", topic) if a.strip()]
    long = re.sub(r"\s*\([^)]*\)", "", topic).strip()
    parts = [p for p in re.split(r"\s+(?:or|and)\s+|,\s*", long) if p.strip()]
    if len(parts) == 2 and len(parts[1].split()) == 1 and len(parts[0].split()) > 1:
        parts = [parts[0], " ".join([*parts[0].split()[:-1], parts[1]])]  # "A B or C": "A B", "A C"
    return (parts or acronyms), (acronyms if parts else [])


@dataclass
class Found:
    """A survey's candidates from words: per paper, the chunks that hold a name of the topic and
    the kinds of name that found it; the papers the topic's own names found (`core`); the phrases
    searched shorter ("phrase -> shorter phrase"); the corpus's other names of the topic."""

    counts: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, set[str]] = field(default_factory=dict)
    core: set[str] = field(default_factory=set)
    relaxed: list[str] = field(default_factory=list)
    forms: Forms = field(default_factory=Forms)
    acronyms: list[str] = field(default_factory=list)

    def add(self, chunks: set[str], kind: str, core: bool = False) -> None:
        for cid in chunks:
            pid = cid.split("::")[0]
            self.counts[pid] = self.counts.get(pid, 0) + 1
            self.kinds.setdefault(pid, set()).add(kind)
            if core:
                self.core.add(pid)


@dataclass
class SurveyList:
    """A survey question's list: the papers listed, the near-misses the judge cut (papers whose
    text holds the topic's words but that it read as not about the topic), and the phrases
    searched in place of ones that found too little ("phrase -> shorter phrase")."""

    hits: list[SurveyHit]
    cut: list[SurveyHit]
    relaxed: list[str]


class Survey:
    """The papers of an index that fit a survey question (`listing`). With `membership` (the
    answer judge) and `dense` (question -> paper ids, nearest first), candidates from the topic's
    words and from dense search are each kept or cut by the judge."""

    def __init__(self, store: Store, membership: Membership | None = None,
                 dense: Callable[[str, flt.Filters], list[str]] | None = None, max_candidates: int = 300,
                 aliases: bool = True, decider: Decider | None = None):  # fmt: skip
        self.store = store
        self.keyword = store.keyword_index()
        self.membership, self.dense, self.max_candidates = (
            membership,
            dense or (lambda q, f: []),
            max_candidates,
        )
        self.aliases, self.decider = aliases, decider

    def _units(self, phrase: str, df: dict[str, int]) -> list[tuple[str, list[str]]]:
        """The phrase's words, each with its stems (a hyphenated word is one unit)."""
        units = [(w, [t for t in tx.keyword_terms(w) if df.get(t)]) for w in phrase.split()]
        return [(w, u) for w, u in units if u]

    def _find(self, units: list[tuple[str, list[str]]], filters: flt.Filters) -> set[str]:
        return set(self.keyword.chunks_with_phrase([t for _, u in units for t in u], MAX_CHUNKS, filters))

    def _chunks(self, phrase: str, filters: flt.Filters) -> tuple[set[str], set[str], str]:
        """The chunks holding the phrase as written, the chunks a shorter form of it adds, and that
        shorter form ("" when none). Only when the phrase as written finds fewer than `RELAX_BELOW`
        papers: a word the whole index uses everywhere goes from an end ("equivariant models" ->
        "equivariant"; "model editing" stays whole, it finds enough), then the last word while a
        rare one stays. (Searching the shorter form always and letting the membership judge cut
        was measured: "model merging" -> "merging" listed 116 papers, 38 of them about it.)"""
        terms = list(dict.fromkeys(tx.keyword_terms(phrase)))
        df = self.keyword.frequencies(terms)
        units = self._units(phrase, df)
        n = self.keyword.size or 1
        found = self._find(units, filters)
        few = len({c.split("::")[0] for c in found}) < RELAX_BELOW

        def ubiquitous(unit: tuple[str, list[str]]) -> bool:
            return all(df[t] > UBIQUITOUS * n for t in unit[1])

        shorter = list(units)
        if few and len(shorter) > 1 and ubiquitous(shorter[-1]):
            shorter.pop()
        if few and len(shorter) > 1 and ubiquitous(shorter[0]):
            shorter.pop(0)
        while few and len(shorter) > 1 and any(df[t] < RARE * n for _, u in shorter[:-1] for t in u):
            shorter.pop()
        if len(shorter) == len(units):
            return found, set(), ""
        wider = self._find(shorter, filters)
        extra = {c for c in wider if c.split("::")[0] not in {f.split("::")[0] for f in found}}
        return found, extra, (" ".join(w for w, _ in shorter) if extra else "")

    def _acronym_chunks(self, acronym: str, words: set[str], filters: flt.Filters) -> set[str]:
        ids = self.keyword.name_chunks(tx.name_forms(acronym), MAX_CHUNKS, filters)
        docs = self.store.chunks(ids)
        return {cid for cid, (doc, _) in docs.items() if words & set(tx.keyword_terms(doc))}

    def candidates(self, intent: Intent, filters: flt.Filters) -> Found:
        """The papers whose chunks hold a phrase of the topic or of its other names: how many chunks
        do, and which kinds of name found each (`decide.KINDS`); the phrases searched in place of the
        ones written when too few papers held those."""
        # The topic and its other names as one "X or Y or Z": one word after a longer phrase
        # shares its head ("antibody design or optimization" -> "antibody optimization").
        every, acronyms = phrases(" or ".join([intent.topic, *intent.also]))
        own_phrases, own_acronyms = phrases(intent.topic)
        own = set(own_phrases)
        forms = alias_forms(self.keyword, own_phrases + own_acronyms) if self.aliases else Forms()
        out = Found(forms=forms, acronyms=list(dict.fromkeys(acronyms + forms.acronyms)))
        for phrase in dict.fromkeys(every + forms.long):
            found, extra, instead = self._chunks(phrase, filters)
            kind = "topic" if phrase in own else "alias" if phrase in forms.long else "also"
            out.add(found, kind, core=kind != "also")
            out.add(extra, "relaxed")
            if instead:
                out.relaxed.append(f"{phrase} -> {instead}")
        terms = list({t for p in every + forms.long for t in tx.keyword_terms(p)})
        n = self.keyword.size or 1
        words = {
            t for t, d in self.keyword.frequencies(terms).items() if 0 < d <= max(ACRONYM_CONTEXT * n, 2)
        }
        for acronym in out.acronyms:
            kind = "acronym" if acronym in acronyms else "alias"
            out.add(self._acronym_chunks(acronym, words, filters), kind, core=True)
        return out

    def listing(self, intent: Intent, filters: flt.Filters | None = None) -> SurveyList:
        """Every paper fitting `intent` within `filters` (as said, unresolved) and the filters the
        question states. With a judge and a decision: by the decision (`_decided`), best p first.
        With a judge alone (the rules before it): papers whose title holds the topic first, then
        the judge's p; a candidate is kept when the judge reads it as about the topic (`keep_words`
        for papers holding the topic's own words, `keep` for those an alternative name or dense
        search found). Without a judge: every candidate, by how many of its chunks hold the topic."""
        if not intent.topic:
            return SurveyList([], [], [])
        stored = self.store.resolve(flt.combine(filters, intent.filters))
        found = self.candidates(intent, stored)
        if self.membership is not None and self.decider is not None:
            return self._decided(intent, stored, found)
        counts, relaxed, core = found.counts, found.relaxed, found.core
        stems = [tx.keyword_terms(p) for p in phrases(intent.topic)[0] + list(intent.also)]
        if self.membership is None:
            papers = list(self.store.papers(list(counts)).values())
            ranked = sorted(papers, key=lambda p: (-_in_title(p, stems), -counts[p.id], p.display_title))
            return SurveyList(
                [SurveyHit(i, p, _showing(p, stems)) for i, p in enumerate(ranked, 1)], [], relaxed
            )
        ordered = sorted(counts, key=lambda pid: (pid not in core, -counts[pid]))[: self.max_candidates]
        dense = [pid for pid in self.dense(intent.query, stored) if pid not in counts]
        ids = ordered + dense  # `dense` is already capped (survey.dense)
        papers = self.store.papers(ids)
        # With `keep_words` 0 the topic's own words list a paper whatever the judge says: it reads
        # only the others (a tenth of the pairs for a long list).
        unread = {i for i in ordered if i in core} if self.membership.keep_words <= 0 else set()
        judged = [
            Judged(papers[i], 1.0, _showing(papers[i], stems)) for i in ordered if i in unread and i in papers
        ]
        judged += self.membership.read(
            intent.topic, intent.also, [papers[i] for i in ids if i in papers and i not in unread]
        )
        # A paper that holds the topic's own words needs less of the judge than one an alternative
        # name or dense search offered: the words are evidence too.
        need = lambda j: self.membership.keep_words if j.paper.id in core else self.membership.keep  # noqa: E731
        kept = sorted((j for j in judged if j.p >= need(j)),
                      key=lambda j: (-_in_title(j.paper, stems), -j.p, j.paper.display_title))  # fmt: skip
        cut = sorted((j for j in judged if j.p < need(j) and j.paper.id in core), key=lambda j: -j.p)
        hit = lambda i, j: SurveyHit(i, j.paper, j.sentence, None if j.paper.id in unread else j.p)  # noqa: E731
        return SurveyList(
            [hit(i, j) for i, j in enumerate(kept, 1)], [hit(i, j) for i, j in enumerate(cut, 1)], relaxed
        )

    def signals(
        self, intent: Intent, stored: flt.Filters, found: Found
    ) -> list[tuple[Judged, dict[str, float]]]:
        """Every candidate (the papers the topic's names found, those holding its own names first,
        at most `max_candidates`; and dense search's) read by the membership judge, with the
        decision's features (`decide.FEATURES`)."""
        ordered = sorted(found.counts, key=lambda pid: (pid not in found.core, -found.counts[pid]))
        dense = self.dense(intent.query, stored)
        rank = {pid: i for i, pid in enumerate(dense)}
        ids = list(dict.fromkeys(ordered[: self.max_candidates] + dense))
        papers = self.store.papers(ids)
        judged = self.membership.read(intent.topic, intent.also, [papers[i] for i in ids if i in papers])
        also = phrases(" or ".join(intent.also))[0] if intent.also else []
        names = names_of(phrases(intent.topic)[0], found.forms.long, also, found.acronyms)
        out = []
        for j in judged:
            pid = j.paper.id
            kinds = found.kinds.get(pid, set()) | ({"dense"} if pid in rank else set())
            signals = Signals(kinds, j.p, j.cosine, rank.get(pid))
            x = features(j.paper, names, signals, len(found.core), intent.topic_confidence, len(dense))
            out.append((j, x))
        return out

    def _decided(self, intent: Intent, stored: flt.Filters, found: Found) -> SurveyList:
        """The list by the learned decision: a candidate is listed when the decider's p reaches its
        threshold, best p first; the papers the topic's own names found that it cut are near-misses."""
        assert self.decider is not None
        scored = [(self.decider.p(x), j) for j, x in self.signals(intent, stored, found)]
        order = lambda r: (-r[0], r[1].paper.display_title)  # noqa: E731
        kept = sorted((r for r in scored if r[0] >= self.decider.threshold), key=order)
        cut = sorted(
            (r for r in scored if r[0] < self.decider.threshold and r[1].paper.id in found.core), key=order
        )
        hit = lambda i, r: SurveyHit(i, r[1].paper, r[1].sentence, round(r[0], 3))  # noqa: E731
        return SurveyList(
            [hit(i, r) for i, r in enumerate(kept, 1)],
            [hit(i, r) for i, r in enumerate(cut, 1)],
            found.relaxed,
        )

    def find(self, intent: Intent, filters: flt.Filters | None = None) -> list[SurveyHit]:
        """The listed papers of `listing`."""
        return self.listing(intent, filters).hits


def dense_search(store: Store, embedder, papers: int) -> Callable[[str, flt.Filters], list[str]]:
    """question, filters -> the ids of the `papers` papers dense search finds nearest it."""

    def dense(question: str, within: flt.Filters) -> list[str]:
        if not papers:
            return []
        hits = store.collection.query(query_embeddings=[embedder.embed(question)],
                                      n_results=max(1, min(3 * papers, store.count())),
                                      where=flt.chroma_where(within), include=["metadatas"])  # fmt: skip
        ids = [
            (m or {}).get("paper_id") or c.split("::")[0]
            for c, m in zip(hits["ids"][0], hits["metadatas"][0])
        ]
        return list(dict.fromkeys(ids))[:papers]

    return dense


def survey_from(settings, store: Store, embedder, vectors) -> Survey:
    """The survey of `settings` (`SurveySettings`): with `judge`, the membership judge reads the
    candidates and dense search of the question adds `dense` papers."""
    if not settings.judge:
        return Survey(store, aliases=settings.aliases)
    from rag.judge.answer import about_judge

    judge = Membership(about_judge(), embedder.embed_batch, vectors, settings.keep, settings.keep_words)
    decider = shipped_decider() if settings.decide else None
    if decider is not None and settings.threshold is not None:
        decider = replace(decider, threshold=settings.threshold)
    return Survey(store, judge, dense_search(store, embedder, settings.dense), settings.candidates,
                  aliases=settings.aliases, decider=decider)  # fmt: skip


def _in_title(paper: Paper, stems: list[list[str]]) -> bool:
    title = " ".join(tx.keyword_terms(paper.title))
    return any(" ".join(s) in title for s in stems if s)


def _showing(paper: Paper, stems: list[list[str]]) -> str:
    """The abstract's sentence that shows the paper fits: the one holding most of the topic's
    stems, the earliest of those."""
    wanted = {t for s in stems for t in s}
    sentences = tx.sentences(paper.abstract) or [paper.abstract]
    return tx.plain(max(sentences, key=lambda s: len(wanted & set(tx.keyword_terms(s)))))
