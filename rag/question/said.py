"""Filters said in words: a decision status, a primary area, a venue and year, however a reader
says them ("Which orals ...", "rejected submissions on X", "papers on X that were withdrawn",
"Which RL papers use X?", "in the learning theory track", "at ICLR 2025"). One table each, the
same table docs/survey.md prints and tests/test_said.py walks row by row.

These are a closed vocabulary (the index's own status values and 21 areas), so a table, not a
model, reads them; the topic around them is the question reader's (`rag.question.reader`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A reader's word for a status -> the index's stored status values. In OpenReview's data a
# rejected paper keeps the venue string "Submitted to ...", stored as "submitted"; a desk-rejected
# one is stored as "rejected".
STATUS_FORMS: dict[str, tuple[str, ...]] = {
    "accepted": ("oral", "spotlight", "poster"),
    "oral": ("oral",),
    "spotlight": ("spotlight",),
    "poster": ("poster",),
    "rejected": ("submitted",),
    "withdrawn": ("withdrawn",),
    "desk-rejected": ("rejected",),
}
# A stored status in a reader's words (the list's header, the map's boxes).
_SHOWN = {"submitted": "rejected", "rejected": "desk-rejected"}


def shown_status(stored: str) -> str:
    """A stored status value as a reader says it ("submitted" -> "rejected")."""
    return _SHOWN.get(stored, stored)


# The words of each status, as a reader writes them (regex alternatives, longest first).
_STATUS_WORDS = {
    "desk-rejected": r"desk[- ]?rejected|desk[- ]?rejections?",
    "accepted": r"accepted|acceptances?",
    "oral": r"orals?|oral[- ]presentations?",
    "spotlight": r"spotlights?",
    "poster": r"posters?",
    "rejected": r"rejected|rejections?|rejects",
    "withdrawn": r"withdrawn|withdrew|withdrawals?",
}
_NOUN = r"(?:papers?|works?|submissions?|stud(?:y|ies)|articles?|ones|research)"
_ANY_STATUS = "|".join(_STATUS_WORDS.values())
_STATUS_WORD = re.compile(rf"\b(?:{_ANY_STATUS})\b", re.I)
# A status word said as one: before a word for papers ("oral papers", "rejected ICLR 2025
# submissions") or as the noun itself before what they are about ("orals about X").
_STATUS_BEFORE = re.compile(
    rf"\b(?:{_ANY_STATUS})(?=(?:-track)?(?:\s+(?:iclr(?:\s+20\d\d)?|track|\w+-track))?\s+{_NOUN}\b)"
    rf"|\b(?:orals|spotlights|posters|rejects|withdrawals)\b",
    re.I,
)
# Said after the papers, only in a question for a list ("papers on X that were withdrawn",
# "submissions that got rejected", "accepted as a poster", "X papers (oral)", "... at ICLR, accepted only",
# "... that were rejected or withdrawn").
_STATUS_AFTER = re.compile(
    rf"\b(?:(?:were|was|got|been|are|is|be|get)\s+)?accepted\s+as\s+(?:an?\s+)?(?:{_ANY_STATUS})\b"
    rf"|\b(?:were|was|got|been|are|is|be|get)\s+(?:{_ANY_STATUS})\b"
    rf"|\b(?:{_ANY_STATUS})(?=\s*(?:$|[?.!,;:)]|\s+(?:only|ones)\b))"
    rf"|\b(?:{_ANY_STATUS})(?=\s*(?:or|and|/)\s*(?:{_ANY_STATUS})\b)",  # "rejected or withdrawn"
    re.I,
)


# Every stored status: "not accepted" is all of them but the accepted ones.
_EVERY_STATUS = tuple(dict.fromkeys(v for values in STATUS_FORMS.values() for v in values))
# A status word negated just before it: "not accepted", "weren't accepted", "never accepted".
_NEGATED = re.compile(r"(?:\bnot|\bnever|n't)\s+(?:(?:been|be|get|got|yet)\s+)?$", re.I)


def _status_of(words: str) -> tuple[str, ...]:
    """The stored statuses a matched phrase names (its last status word decides: "accepted as a
    poster" is a poster)."""
    found = _STATUS_WORD.findall(words)
    word = found[-1] if found else ""
    for name, pattern in _STATUS_WORDS.items():
        if re.fullmatch(pattern, word, re.I):
            return STATUS_FORMS[name]
    return ()


def _statuses(found: list[re.Match[str]], negations: list[re.Match[str] | None]) -> tuple[str, ...]:
    """The statuses the matched phrases name, less the ones said negated ("not accepted, i.e.
    rejected or withdrawn"; "accepted, not withdrawn"); only negated ones: every other status."""
    named: list[str] = []
    negated: set[str] = set()
    for m, negation in zip(found, negations):
        statuses = _status_of(m.group(0))
        if negation:
            negated |= set(statuses)
        else:
            named += statuses
    return tuple(v for v in (named or (_EVERY_STATUS if negated else ())) if v not in negated)


# A reader's names for each primary area: (what the index's area value begins with or holds,
# the names that say it). The long value is matched by `filters.resolve` as a substring.
AREA_FORMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reinforcement learning", ("reinforcement learning", "rl")),
    ("learning theory", ("learning theory", "theory", "theoretical")),
    ("optimization", ("optimization", "optimisation")),
    ("generative models", ("generative models", "generative modeling", "generative modelling", "generative")),
    ("applications to computer vision", ("computer vision", "vision", "cv", "applications to computer vision")),
    ("alignment, fairness, safety", ("alignment", "fairness", "safety", "privacy", "safety and alignment",
                                     "safety & alignment", "alignment and safety", "societal considerations")),
    ("datasets and benchmarks", ("datasets and benchmarks", "datasets & benchmarks", "benchmarks", "datasets", "d&b")),
    ("interpretability and explainable ai", ("interpretability", "explainable ai", "explainability", "xai")),
    ("learning on graphs", ("graph learning", "learning on graphs", "graphs", "geometric deep learning")),
    ("learning on time series", ("time series", "time-series", "dynamical systems")),
    ("applications to robotics", ("robotics", "applications to robotics", "autonomy", "planning")),
    ("probabilistic methods", ("probabilistic methods", "probabilistic", "bayesian methods", "bayesian")),
    ("applications to neuroscience", ("neuroscience", "cognitive science", "neuroscience & cognitive science")),
    ("causal reasoning", ("causal reasoning", "causality", "causal")),
    ("neurosymbolic", ("neurosymbolic", "neuro-symbolic", "hybrid ai")),
    ("infrastructure, software libraries", ("infrastructure", "systems", "hardware", "software libraries", "ml systems")),
    ("transfer learning, meta learning", ("transfer learning", "meta learning", "meta-learning", "lifelong learning",
                                          "transfer, meta and lifelong learning")),
    ("unsupervised, self-supervised", ("representation learning", "self-supervised learning", "self-supervised",
                                       "unsupervised learning")),
    ("foundation or frontier models", ("foundation models", "frontier models", "foundation or frontier models")),
    ("applications to physical sciences", ("physical sciences", "physics", "chemistry", "biology", "science",
                                           "sciences", "ai for science")),
    ("other topics in machine learning", ("other topics",)),
)  # fmt: skip
_AREA_NAMES = sorted({n for _, names in AREA_FORMS for n in names}, key=len, reverse=True)
_AREA_ALT = "|".join(re.escape(n) for n in _AREA_NAMES)
# Said as an area: "in the X area/track", "from the X track", "X-track papers", "X area papers".
_AREA_SAID = re.compile(
    rf"\b(?:in|from|within|under|of)\s+(?:the\s+)?(?P<a>{_AREA_ALT})(?:\s+(?:primary\s+)?(?:area|track|category))\b"
    rf"|\b(?:in|from|within)\s+the\s+(?:primary\s+)?(?:area|track|category)\s+(?:of\s+)?[\"“']?(?P<b>{_AREA_ALT})\b"
    rf"|\b(?P<c>{_AREA_ALT})(?:\s+[a-z]+){{0,2}}?[- ](?:area|track)\b",
    re.I,
)
# An official area named after "in" ("Which papers in applications to computer vision, audio, ...
# use Mamba?"): its first words are enough; an area only when the topic is not those words.
_OFFICIAL = "|".join(re.escape(v) for v, _ in AREA_FORMS if " " in v)
_AREA_IN = re.compile(rf"\b(?:in|within|from)\s+(?:the\s+)?(?P<e>{_OFFICIAL})", re.I)
# Said before a word for papers ("Which learning theory papers study bandits?"): an area only when
# the question names a topic besides it.
_AREA_BEFORE_NOUN = re.compile(rf"\b(?P<d>{_AREA_ALT})\s+(?:{_NOUN})\b", re.I)
_VENUE = re.compile(
    r"\b(?P<venue>ICLR|NeurIPS|ICML|ACL|EMNLP|CVPR|AAAI|COLT|AISTATS|TMLR)[\s']*(?P<year>(?:19|20)\d\d)\b",
    re.I,
)


@dataclass(frozen=True)
class Said:
    """The filters a question states, and the question with their words taken out."""

    filters: dict[str, tuple[str, ...]]
    rest: str  # the question without the status words ("Which oral papers ..." -> "Which papers ...")
    words: tuple[str, ...] = ()  # the words that stated them, as written


def area_value(name: str) -> str:
    """The stored area a reader's name for it points at ("RL" -> "reinforcement learning")."""
    low = name.lower().strip()
    return next(value for value, names in AREA_FORMS if low in names or low == value)


def said(question: str, topic: str = "", listing: bool = False) -> Said:
    """The status, area and venue filters `question` states. `topic` (the question reader's) keeps
    an area word that is the topic itself from becoming a filter ("Which papers study RL?");
    a status said after the papers counts only in a question for a list (`listing`), where "...
    that were withdrawn" cannot be about one paper's fate."""
    filters: dict[str, tuple[str, ...]] = {}
    words: list[str] = []
    found = _apart(
        [*_STATUS_BEFORE.finditer(question), *(_STATUS_AFTER.finditer(question) if listing else [])]
    )
    negations = [_NEGATED.search(question[: m.start()]) for m in found]
    words += [m.group(0) for m in found]
    statuses = _statuses(found, negations)
    if statuses:
        filters["status"] = tuple(dict.fromkeys(statuses))
    area = _AREA_SAID.search(question)
    name = next((v for v in area.groupdict().values() if v), "") if area else ""
    official = _AREA_IN.search(question) if not name and listing else None
    if official and not _overlaps(official.group("e"), topic):
        name = official.group("e")
    if not name and listing:
        before = _AREA_BEFORE_NOUN.search(question)
        if before and topic and not _overlaps(before.group("d"), topic):
            name = before.group("d")
    if name:
        filters["area"] = (area_value(name),)
        words.append(name)
    venue = _VENUE.search(question)
    if venue:
        filters["venue"] = (f"{venue.group('venue').lower()} {venue.group('year')}",)
        words.append(venue.group(0))
    rest = question
    for m, negation in sorted(zip(found, negations), key=lambda pair: -pair[0].start()):
        rest = (
            rest[: negation.start() if negation else m.start()]
            + (
                "papers"
                if m.group(0).lower().endswith("s")
                and m.re is _STATUS_BEFORE
                and not _NOUN_AFTER.match(question, m.end())
                else ""
            )
            + rest[m.end() :]
        )
    return Said(filters, re.sub(r"\s{2,}", " ", rest).strip(), tuple(words))


def _apart(matches: list[re.Match[str]]) -> list[re.Match[str]]:
    """The matches that do not overlap, the longest of those starting first."""
    kept: list[re.Match[str]] = []
    for m in sorted(matches, key=lambda m: (m.start(), -len(m.group(0)))):
        if not kept or m.start() >= kept[-1].end():
            kept.append(m)
    return kept


_NOUN_AFTER = re.compile(rf"\s+(?:\w+\s+)?{_NOUN}\b", re.I)


def _overlaps(name: str, topic: str) -> bool:
    """The area name is (part of) the topic: "RL" in "offline RL", "graphs" in "graphs"."""
    if not topic:
        return False
    a = set(re.findall(r"\w+", name.lower()))
    return bool(a) and a <= set(re.findall(r"\w+", topic.lower()))
