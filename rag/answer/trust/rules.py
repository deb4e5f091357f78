"""The rules the answer selector reads as signals (each a named class, `Rule`, the settings choose;
none refuses on its own), and how a model's decline is recognized."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag import text as tx
from rag.answer.citations import strip_markers
from rag.answer.trust.base import Drafted, Refusal, Rule, Screen
from rag.answer.trust.checks import Checked
from rag.question import Intent

# ---- refusal detection

# Phrases by which a model declines, at the start of an answer.
_REFUSAL_START = re.compile(
    r"^\W*(the indexed papers do not answer|(the )?(provided )?(papers|abstracts) do not "
    r"(state|say|mention|specify|provide|answer)|(the )?(provided |given )?sources? (do|does) not "
    r"(contain|answer|mention|provide|say|specify|state)|(i )?(cannot|can't|can not) (answer|determine|find)|"
    r"there is no (information|mention)|(this|that) (information )?is not (mentioned|stated|provided|specified)|"
    r"not (mentioned|stated|specified|provided) in the (provided )?sources)",
    re.I,
)
# Phrases that decline anywhere in the first sentence ("The license is not explicitly stated.").
_DECLINE = re.compile(
    r"\bnot (explicitly |directly |specifically )?(stated|mentioned|specified|provided|given|reported|"
    r"described|discussed)\b|\b(do|does|did) not (explicitly )?(provide|mention|state|specify|contain|report|"
    r"include|say|give)\b|\bno (information|details?|mention|data) (about|on|regarding|is|are)\b|"
    r"\b(unable|not possible) to (answer|determine|find|tell)\b",
    re.I,
)


# A sentence anywhere in a draft that says the sources lack what was asked: the sources named as
# the subject or the place ("... are not explicitly stated in the given sources", "The abstract does
# not mention ..."), or a passive "not stated" that ends the sentence ("Which ones is not stated.").
# "The method does not include a reward model" says something of the method, and is no decline.
_SOURCES = r"(the )?(given |provided |above |indexed |cited )?(sources?|abstracts?|papers?|texts?|passages?)"
_LACK = r"(stated|mentioned|specified|provided|given|reported|named|listed|described|detailed|disclosed)"
_SAYS_SOURCES_LACK = re.compile(
    rf"\bnot (explicitly |directly |specifically |clearly )?{_LACK}( \w+)? (in|by) {_SOURCES}\b|"
    rf"\b{_SOURCES} (do|does|did) not (explicitly |directly |specifically |clearly )?(state|mention|specify|"
    rf"provide|give|report|say|name|list|include|detail|disclose|contain)\b|"
    rf"\b(is|are|was|were) not (explicitly |directly |specifically |clearly )?{_LACK}( here)?\W*$",
    re.I,
)


def declines(text: str) -> bool:
    """The model declined somewhere in its draft: its opening refuses, or any sentence says the
    sources do not state what was asked (a draft that answers and then says so is no answer)."""
    if _REFUSAL_START.search(text.strip()):
        return True
    return any(_SAYS_SOURCES_LACK.search(strip_markers(s).strip()) for s in tx.sentences(text.strip()))


def is_refusal(text: str) -> bool:
    """The model declined: a refusal opening, or a "not stated" phrase in its first sentence."""
    text = text.strip()
    if _REFUSAL_START.search(text):
        return True
    first = tx.sentences(text)[:1]
    return bool(_DECLINE.search(first[0] if first else text))


# ---- the rules by name (`TrustSettings.rules`)


class UnstatedFocus(
    Rule, name="unstated_focus", reason="the sources never mention what the question counts", before=True
):
    def refuse(self, answer: Screen) -> Refusal | None:
        missing = unstated_focus(answer.intent, answer.texts)
        return Refusal(self.name, f"({' '.join(missing)!r})") if missing else None


class NoAnsweringSentence(
    Rule, name="no_answering_sentence", reason="no sentence of the sources answers the question", before=True
):
    """The answer judge finds no sentence of the sources likely to answer (a question about a
    detail the abstracts do not give): refused before the model writes, with the nearest sentence
    shown. Lists of papers are not judged (a paper on the topic answers them), nor questions in
    several parts: the judge was trained on one-part questions, and a sentence answering one part
    scores low against the whole (on dev, 4 of the 5 answerable items it refused were two-part)."""

    def refuse(self, answer: Screen) -> Refusal | None:
        best, intent = answer.answering, answer.intent
        if best is None or intent.asks_for_papers or len(intent.parts) > 1:
            return None
        if best[0] >= self.settings.answer_refuse:
            return None
        p, sentence, title = best
        return Refusal(self.name, f"The nearest, from “{title}”, is “{sentence}” ({p:.2f}).")


class RestatesQuestion(Rule, name="restates_question", reason="the answer only repeats the question"):
    def refuse(self, answer: Drafted) -> Refusal | None:
        return Refusal(self.name) if restates_question(answer.intent, answer.checked) else None


def unstated_focus(intent: Intent, texts: Sequence[str]) -> list[str]:
    """For "how many X" / "how much X": the words of X that no text contains. A question that asks
    for a paper counts nothing (`Intent.counts` is empty): its "how many X" describes the paper."""
    stated: set[str] = set().union(*(tx.content_words(t) for t in texts))
    return [w for w in intent.counts if not tx.content_words(w) <= stated]


def _shown_claims(intent: Intent, checked: Checked) -> list[str]:
    """The shown claims as the rules read them: without markers, and without the cited papers'
    titles unless the question asks for a paper (a title is then the answer; otherwise it only
    repeats where the claim comes from: "The datasets used are “<title>” [1]." names no dataset)."""
    claims = [strip_markers(s.text) for s in checked.sentences if s.claim]
    if intent.asks_for_paper:
        return claims
    titles = [cited.title for cited in checked.citations]
    return [tx.without_titles(c, titles) for c in claims]


def restates_question(intent: Intent, checked: Checked) -> bool:
    """Every shown sentence says only what the question said ("What temperature is used in X?"
    -> "The temperature is used in X [1]."): no content word beyond the question's. A paper's
    title counts as new only when the question asks for a paper (`_shown_claims`). A yes/no
    question may be answered in its own words."""
    claims = _shown_claims(intent, checked)
    if intent.yes_no or not claims:
        return False
    asked = intent.words | tx.meta_stems()
    return all(not tx.content_words(c) - asked and not _new_terms(intent, c) for c in claims)


def _new_terms(intent: Intent, claim: str) -> list[str]:
    """Terms made of stop words only ("where-then-what"), quoted or hyphenated, that the question
    does not have: a name with no content word, new although `content_words` cannot see it. A
    term with content words ("fine-tuned") is judged by its content words."""
    asked = intent.question.lower()
    terms = re.findall(r"[\"“]([^\"”]{2,60})[\"”]|\b(\w+(?:-\w+)+)\b", claim)
    return [t for pair in terms for t in pair if t and not tx.content_words(t) and t.lower() not in asked]
