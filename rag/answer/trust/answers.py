"""A whole draft checked: split into sentences, each sentence checked against the sources it cites
(or moved to one under which the sentence decision keeps it), the rest removed whole with reasons."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag import text as tx
from rag.answer.citations import (  # noqa: I001
    attach_trailing_markers,
    name_noun_markers,
    parse_markers,
    render_text,
    renumber,
    strip_markers,
)
from rag.answer.trust.checks import Checked, Stance, Verdict, has_claim
from rag.answer.trust.model_checks import Confirm, Entail, paper_answer
from rag.answer.trust.trust import Trust
from rag.question import Intent
from rag.search.evidence import Evidence, Sentence
from rag.types import AnswerSentence, Check, Paper


def _quote(ev: Evidence, sentence: Sentence) -> str:
    return f"“{ev.paper.display_title}”: “{sentence.text.rstrip('.')}”."


@dataclass
class _Piece:
    """A sentence of the draft, ready to check: its text with markers, without them, the claim
    (named titles taken out), the sources it names by title, and its vector."""

    text: str
    sentence: str
    claim: str
    named: list[int]
    vector: np.ndarray


class _DraftCheck:
    """The state of checking one draft: what is shown, what is removed, the passage each cited
    source shows, and the heading the current lines sit under."""

    def __init__(
        self, evidence: Sequence[Evidence], embedder, trust: Trust, intent: Intent, confirm, entail=None
    ):
        self.offered = {ev.number: ev for ev in evidence}
        self.titles = {n: ev.paper.title for n, ev in self.offered.items() if ev.paper.title}
        self.short = short_names(evidence)
        self.embedder, self.trust, self.intent, self.confirm = embedder, trust, intent, confirm
        self.asked = intent.words if intent.asks_for_paper else frozenset()
        self.one_paper = bool(self.asked) and not intent.asks_for_papers
        self.can_confirm = confirm is not None and "paper_fit" in trust.checks
        self.entail = entail if "entailment" in trust.checks else None
        self.meta = tx.naming_stems()
        self.invented = 0
        self.shown: list[AnswerSentence] = []
        self.removed: list[AnswerSentence] = []
        self.passage: dict[int, tuple[float, Sentence]] = {}  # the passage each cited source shows
        self.supported: list[str] = []
        self.rescued: set[int] = set()
        # "The two steps of LoLCATs are:": the lines under a heading are LoLCATs', so their source
        # must name LoLCATs; a heading none of whose lines stays goes too. Where it sits in `shown`,
        # how many sentences had been removed when it came, and the names it gives.
        self.heading: tuple[int, int] | None = None
        self.subject: list[str] = []

    def prepared(self, texts: Sequence[str]) -> list[_Piece]:
        plain = [strip_markers(t) for t in texts]
        # A paper named by its title, or by the short name its title gives ("Judge Decoding"), is
        # backed by that paper; the rest of the sentence is checked.
        named = [[n for n in self.offered if self.names(n, p)] for p in plain]
        claims = [
            tx.without_titles(
                p, [t for n in ns for t in (self.titles.get(n, ""), *self.short.get(n, ())) if t]
            )
            for p, ns in zip(plain, named)
        ]
        vectors = np.asarray(self.embedder.embed_batch(claims), dtype=np.float32) if claims else []
        return [_Piece(*row) for row in zip(texts, plain, claims, named, vectors)]

    def names(self, n: int, sentence: str) -> bool:
        """Does `sentence` name offered paper `n`, by its title or its own short name?"""
        return names_paper(self.offered[n].paper, self.short.get(n, ()), sentence)

    @functools.cached_property
    def described(self) -> list[tuple[str, np.ndarray, set[str]]]:
        """What the question describes, embedded once, for whichever paper needs it."""
        texts = list(self.intent.described)
        vectors = np.asarray(self.embedder.embed_batch(texts), dtype=np.float32)
        return [(q, v, tx.content_words(t)) for q, v, t in zip(self.intent.variants, vectors, texts)]

    def by_paper(self, n: int) -> bool:
        """Show the named paper's quoted sentence instead, if it fits and the model confirms it."""
        if n in self.rescued:  # the paper is already shown with its quote
            return True
        paper = paper_answer(self.described, self.offered[n], self.trust, self.confirm)
        if paper is None:
            return False
        score, quoted, check = paper
        self.passage[n] = (score, quoted)
        self.rescued.add(n)
        self.shown.append(AnswerSentence(_quote(self.offered[n], quoted), [n], True, score, False, [check]))
        self.supported.append(quoted.text)
        return True

    def own_names(self, claim: str) -> list[str]:
        """The names of `claim` that tell the offered papers apart (not in every one of them)."""
        offered = self.offered.values()
        return [n for n in sorted(tx.names(claim)) if not all(tx.name_in(n, ev.paper.text) for ev in offered)]

    def close_heading(self) -> None:
        if self.heading and len(self.shown) == self.heading[0] + 1 and len(self.removed) > self.heading[1]:
            del self.shown[self.heading[0]]
        self.heading, self.subject = None, []

    def follow_heading(self, piece: _Piece) -> None:
        """A heading opens; a line naming another paper (by its title, or as the question names
        it) is not under the open one."""
        heading = piece.sentence.endswith(":")
        if heading or piece.named or (tx.names(piece.claim) & self.intent.names) - set(self.subject):
            self.close_heading()
        if heading:
            self.heading, self.subject = (len(self.shown), len(self.removed)), self.own_names(piece.claim)

    def no_claim(self, piece: _Piece) -> None:
        """ "Yes.", "The papers are:", "The paper is “Title” [1].": shown; a title is the answer."""
        named = piece.named
        if named and self.one_paper and self.can_confirm and self.by_paper(named[0]):
            return  # "It can be found in “Title” [1].": shown as the paper's quoted sentence
        if named:
            for n in named:  # a title alone rests on the paper's sentence that fits the question best
                best = max(self.offered[n].sentences, key=lambda s: s.rank)
                self.passage.setdefault(n, (1.0, best))
            self.shown.append(AnswerSentence(piece.sentence, named, True, 1.0, False, [Check("names", True)]))
            self.supported.append(piece.claim)
        else:
            self.shown.append(AnswerSentence(piece.sentence, [], False, 0.0, claim=False))

    def verdicts(self, piece: _Piece) -> dict[int, Verdict]:
        """The claim against each source it may cite: a sentence that names a paper by its title
        must be backed by that paper, and may use the question's words."""
        candidates = {n: self.offered[n] for n in piece.named} or self.offered
        given = self.asked if piece.named else frozenset()
        return {
            n: self.trust.verify(
                piece.claim,
                piece.vector,
                ev,
                given=given,
                asked=self.intent.words,
                subject=self.subject,
                question=self.intent.question,
            )
            for n, ev in candidates.items()
        }

    def keep(self, piece: _Piece, cited: list[int], verdicts: dict[int, Verdict]) -> bool:
        """Show the sentence under the cited sources that back it, or else under the offered one
        that backs it best (small models misplace markers); False when none does."""
        good = [n for n in cited if n in verdicts and verdicts[n].passed]
        if piece.named:  # a sentence about named papers cites each of them that backs it
            good = [n for n in piece.named if verdicts[n].passed]
        attributed = bool(good) and not set(good) <= set(cited)
        if not good:
            passing = [n for n in verdicts if verdicts[n].passed]
            if not passing:
                return False
            good, attributed = [max(passing, key=lambda n: verdicts[n].score)], True
        for n in good:
            v = verdicts[n]
            # A source shows the passage behind the first sentence that cites it, which is usually
            # the answer itself; the best-backed one is often a side remark copied word for word.
            if v.best is not None and n not in self.passage:
                self.passage[n] = (v.score, v.best)
        score = max(verdicts[n].score for n in good)
        checks = list(verdicts[good[0]].checks)
        best, passage = verdicts[good[0]].best, verdicts[good[0]].passage
        # A sentence naming several papers ("The papers that use X are “A” and “B”") is a claim
        # about all of them: one paper's passage cannot support it, and it would read as contradicted.
        judged = self.entail and passage and len(piece.named) < 2
        said = self.entail(piece.claim, passage, self.offered[good[0]]) if judged else None
        if said is not None:
            where = self.offered[good[0]].short_title
            quote = f": “{best.text}”" if best is not None else ""
            if said is Stance.CONTRADICTED:
                failed = Check("entailment", False, f"{where} says otherwise{quote}")
                self.removed.append(
                    AnswerSentence(piece.sentence, [], False, score, False, [*checks, failed])
                )
                return True  # handled: removed with the reason
            detail = "" if said is Stance.SUPPORTED else f"{where} does not address it"
            checks.append(Check("entailment", said is Stance.SUPPORTED, detail))
        self.shown.append(AnswerSentence(piece.sentence, good, True, score, attributed, checks))
        self.supported.append(piece.claim)
        return True

    def remove(self, piece: _Piece, cited: list[int], verdicts: dict[int, Verdict]) -> None:
        """Removed, with the checks against the source the model cited, or the closest one."""
        checked_cited = [n for n in cited if n in verdicts]
        blame = (
            checked_cited[0]
            if checked_cited
            else max(verdicts, key=lambda n: verdicts[n].score, default=None)
        )
        checks = []
        if blame is not None:
            where = self.offered[blame].short_title
            v = verdicts[blame]
            decided = [Check("decision", False, v.decision.why)] if v.decision and not v.decision.keep else []
            checks = [
                Check(c.name, c.passed, c.detail.replace("the source", where)) for c in decided + v.checks
            ]
        score = verdicts[blame].score if blame else 0.0
        self.removed.append(AnswerSentence(piece.sentence, [], False, score, False, checks))

    def one(self, piece: _Piece) -> None:
        """Check one sentence: shown under a source that backs it, or removed whole."""
        cited = list(dict.fromkeys(parse_markers(piece.text)))
        self.invented += sum(1 for n in cited if n not in self.offered)
        cited = [n for n in cited if n in self.offered]
        if not piece.sentence:
            return
        self.follow_heading(piece)
        if not has_claim(piece.claim) or piece.sentence.endswith(":"):
            return self.no_claim(piece)
        answer = (piece.named or cited)[:1]
        # The sentence says nothing but which paper it is, in the question's words.
        restates = (
            bool(self.asked and answer)
            and self.can_confirm
            and not tx.content_words(piece.claim) - self.asked - self.meta
        )
        if restates and self.one_paper:
            # Asked for one paper, "The work by “X” shows that <the question's words>" claims that X
            # is what the question describes, which no passage sentence states in those words; a
            # near miss ("evaluates X on speech") would pass the checks on the name alone.
            if not self.by_paper(answer[0]):
                failed = Check(
                    "paper_fit",
                    False,
                    f"{self.offered[answer[0]].short_title} is not confirmed as the answer",
                )
                self.removed.append(AnswerSentence(piece.sentence, [], False, 0.0, False, [failed]))
            return
        # Several papers asked for: "The papers that do X or Y are [1] and [3]." says nothing but
        # which papers; each is shown as its sentence that fits, when the model confirms it.
        if restates and [n for n in piece.named or cited if self.by_paper(n)]:
            return
        verdicts = self.verdicts(piece)
        if self.keep(piece, cited, verdicts):
            return
        self.remove(piece, cited, verdicts)


def short_names(evidence: Sequence[Evidence]) -> dict[int, tuple[str, ...]]:
    """The short names each offered source's paper goes by (`paper_names`), by source number."""
    names = paper_names([ev.paper for ev in evidence])
    return {ev.number: names[ev.paper.id] for ev in evidence}


def paper_names(papers: Sequence[Paper]) -> dict[str, tuple[str, ...]]:
    """The short names each paper goes by: its title's head before a colon ("Judge Decoding:
    Faster ...") and the name it coins (`text.coined_name`), each only when no other of the papers'
    text holds it (then it tells them apart)."""
    out: dict[str, tuple[str, ...]] = {}
    for paper in papers:
        head = re.match(r"\s*([^:]{6,60}):", paper.title or "")
        names = [head.group(1).strip()] if head and len(head.group(1).split()) <= 5 else []
        coined = tx.coined_name(paper.title or "", paper.abstract)
        names += [coined] if len(coined) >= 4 else []
        others = " ".join(o.text.lower() for o in papers if o.id != paper.id)
        out[paper.id] = tuple(dict.fromkeys(n for n in names if n.lower() not in others))
    return out


def names_paper(paper: Paper, short: Sequence[str], sentence: str) -> bool:
    """Does `sentence` name `paper`, by its title or one of its short names?"""
    if paper.title and paper.title.lower() in sentence.lower():
        return True
    return any(re.search(rf"(?<!\w){re.escape(s)}(?!\w)", sentence) for s in short)


def check_answer(
    draft: str,
    evidence: Sequence[Evidence],
    embedder,
    trust: Trust,
    intent: Intent,
    confirm: Confirm | None = None,
    entail: Entail | None = None,
) -> Checked:
    """Check every sentence of `draft` against the sources it cites. A sentence the sentence
    decision (keep.py) does not keep under its cited source is given to another offered source
    under which it is kept (small models misplace markers); failing that, it is removed whole and
    listed with the decision's reason and its failed checks.

    Asked for a paper, a sentence that names one by its title ("“BirdSet: ...” introduces a
    benchmark for classifying bird sounds") says that paper is what the question describes, in
    the question's words: those words count as covered, and the similarity check decides whether
    the paper is about what the question asks. A sentence that only names a paper in the
    question's words says nothing the checks can test but the name: asked for one paper, it is
    put to `confirm` (the model: is this paper the answer to the question?) instead; asked for
    several, when it fails the checks. See `model_checks.paper_answer`."""
    state = _DraftCheck(evidence, embedder, trust, intent, confirm, entail)
    lines = [name_noun_markers(attach_trailing_markers(line), state.titles) for line in draft.splitlines()]
    for piece in state.prepared([s for line in lines for s in tx.sentences(line)]):
        state.one(piece)
    state.close_heading()
    citations = renumber(state.shown, state.offered, state.passage)
    text = render_text(state.shown, citations)
    return Checked(text, state.shown, state.removed, citations, state.invented, state.supported)
