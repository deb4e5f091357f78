"""Acronyms the corpus defines: every "long form (SHORT)" of the indexed abstracts (Schwartz & Hearst,
"A simple algorithm for identifying abbreviation definitions in biomedical text", PSB 2003), and
the reverse "SHORT (long form)". The keyword index keeps them per chunk (`KeywordIndex`), so the
table follows every ingest by difference, and a survey searches a topic under all its names:
"PINNs" finds the papers that write "physics-informed neural networks", and the long form finds the
papers that only write "PINN" after another paper defined it.

Schwartz-Hearst, as written here: the short form is the parenthesised text up to its first ";" or
",", one or two words, at most 12 characters, starting with a letter or digit and holding a capital
(so "(ours)", "(i)" and "(e.g. ...)" are no short forms). The long form is found by matching the
short form's characters from its end, right to left, in the words before the parenthesis (at most
min(|S| + 5, 2|S|) words); the short form's first character must start a word. A plural short form
("LLMs") matches without its "s", and is kept under its singular.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from rag import text as tx

MAX_SHORT = 12
_WORD = re.compile(r"\S+")
# Words that end a long form's window on their left: a definition never reaches across them.
_STOP_LEFT = re.compile(r"[.;:!?]$")


@dataclass(frozen=True)
class Alias:
    """One definition: the short form (singular), the long form as written, and its key (the
    long form's stems: "Physics-Informed Neural Networks" and "physics-informed neural network"
    are one key)."""

    short: str
    long: str

    @property
    def key(self) -> str:
        return form_key(self.long)


def form_key(text: str) -> str:
    """The stems a long form is looked up by (case, hyphens, plurals aside)."""
    return " ".join(tx.keyword_terms(text))


def singular(short: str) -> str:
    """ "LLMs" -> "LLM", "NeRFs" -> "NeRF"; "GANs'" too; "MoS" stays (its s is a word's)."""
    short = short.rstrip("'’")
    if len(short) > 2 and short.endswith("s") and any(c.isupper() for c in short[:-1]):
        return short[:-1] if short[-2].isupper() or short[-2].isdigit() or "-" in short else short
    return short


def is_short_form(text: str) -> bool:
    """Could `text` be an acronym: one or two words (a hyphen joins), at most `MAX_SHORT`
    characters, a letter or digit first, a capital somewhere, not a number or a year."""
    if not text or len(text) > MAX_SHORT or len(text.split()) > 2:
        return False
    if not text[0].isalnum() or not any(c.isupper() for c in text):
        return False
    return not re.fullmatch(r"[\d.,%\s-]+", text)


def _parenthesised(sentence: str) -> Iterator[tuple[int, int, int]]:
    """(open, close, depth) of each balanced parenthesis pair, nested ones too."""
    stack: list[int] = []
    for i, c in enumerate(sentence):
        if c == "(":
            stack.append(i)
        elif c == ")" and stack:
            start = stack.pop()
            yield start, i, len(stack)


def _inner(text: str) -> str:
    """The parenthesised text a short form can be: up to its first ";" or "," and before any
    nested parenthesis ("PINNs; Raissi et al." -> "PINNs", "NeRF (see below)" -> "NeRF")."""
    return re.split(r"[;,(]|\s+-\s+", text, maxsplit=1)[0].strip()


def best_long_form(short: str, words: list[str]) -> str:
    """The shortest run of the last `words` whose characters hold `short`'s in order, matched
    from the right (Schwartz-Hearst); "" when none does."""
    target = singular(short)
    s = [c.lower() for c in target if c.isalnum()]
    if not s:
        return ""
    text = " ".join(words)
    low = text.lower()
    li = len(low) - 1
    for si in range(len(s) - 1, -1, -1):
        c = s[si]
        while li >= 0 and (
            low[li] != c or (si == 0 and li > 0 and low[li - 1].isalnum())  # the first starts a word
        ):
            li -= 1
        if li < 0:
            return ""
        li -= 1
    start = low.rfind(" ", 0, li + 2) + 1  # the word holding the first character's match
    long = text[start:].strip(" -")
    if len(long) <= len(target) or long.lower() == target.lower():
        return ""
    return long


def _window(before: str, short: str) -> list[str]:
    """The words a long form may take, nearest the parenthesis last: at most min(|S| + 5, 2|S|),
    never across a clause's end or another parenthesis."""
    n = min(len(short) + 5, 2 * len(short))
    words = _WORD.findall(before)[-n:]
    for i in range(len(words) - 1, -1, -1):
        if ")" in words[i] or "(" in words[i] or (i < len(words) - 1 and _STOP_LEFT.search(words[i])):
            return words[i + 1 :]
    return words


def extract(text: str) -> list[Alias]:
    """Every acronym definition of `text`, in order, once each."""
    found: list[Alias] = []
    for sentence in tx.sentences(text) or [text]:
        for start, end, _ in sorted(_parenthesised(sentence)):
            alias = _definition(sentence, start, end)
            if alias and alias not in found:
                found.append(alias)
    return found


def _definition(sentence: str, start: int, end: int) -> Alias | None:
    inner = _inner(sentence[start + 1 : end])
    before = sentence[:start].rstrip()
    if is_short_form(inner):
        words = _window(before, inner)
        long = best_long_form(inner, words)
        return Alias(singular(inner), _trim(long)) if long else None
    # "SHORT (long form)": the word before the parenthesis is the acronym.
    last = _WORD.findall(before)[-1:] if before else []
    if last and is_short_form(last[0].strip(",:")) and len(inner.split()) >= 2:
        short = last[0].strip(",:")
        words = _WORD.findall(inner)
        long = best_long_form(short, words)
        # The whole parenthesis must be the long form (not "LLMs (which are large ...)").
        if long and len(long.split()) >= len(words) - 1:
            return Alias(singular(short), _trim(long))
    return None


def _trim(long: str) -> str:
    return long.strip(" ,:;\"'“”‘’").replace("\n", " ")
