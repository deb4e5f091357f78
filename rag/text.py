"""The one home of text handling: sentences, words, stems, numbers, names and token estimates.

Everything that splits, normalizes or counts text goes through here, so the chunker, the evidence
selector, the claim checks and the evaluation agree on what a sentence, a word or a number is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

# ---- sentences

# A sentence ends at . ! ? followed by space and an upper-case letter, digit or quote/bracket,
# unless the text before the stop is an abbreviation ("e.g.", "No. 3", "Tab. 2", "w.r.t. the").
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|Figs|Eq|Eqs|Sec|Tab|No|Nos|approx|resp|incl|al|Dr|Mr|Ms|"
    r"Prof|St|vol|pp|w\.r\.t|a\.k\.a|[A-Z])|\bw\.r\.t)\.$"
)
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of the sentences of `text`, whitespace excluded."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        candidate = text[start : m.start()].rstrip()
        if _ABBREV.search(candidate):
            continue
        if candidate.strip():
            spans.append((start, start + len(candidate)))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


# ---- words

STOP_WORDS = frozenset(
    "a an the of in on for to and or is are was were be been being by with as at from that this these "
    "those it its we our us their they them which what how does do did who whom whose when where why "
    "than then into onto can could may might must shall should will would using use used uses based "
    "paper papers study studies work works show shows shown also such via each both either other more "
    "most much many some any all only very so if but not no nor about over under between while there "
    "here has have had having i you he she his her my your one ones s up".split()
)
# Words that refer to the sources rather than to research content.
META_WORDS = frozenset(
    "according source sources abstract abstracts author authors text propose proposes proposed "
    "introduce introduces introduced present presents presented approach method methods".split()
)
_WORD = re.compile(r"[a-z0-9][a-z0-9\-]*[a-z0-9]|[a-z0-9]")


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer

    return Stemmer.Stemmer("english")


def stem(word: str) -> str:
    return _stemmer().stemWord(word)


@lru_cache(maxsize=1)
def meta_stems() -> frozenset[str]:
    """Stems of META_WORDS: words about the sources, not claims of research content."""
    return frozenset(stem(w) for w in META_WORDS)


# Words by which a sentence points at a paper ("It can be found in the source titled ...").
NAMING_WORDS = frozenset(
    "titled entitled called named found find finds described describes discussed discusses available "
    "see paper papers work works study studies yes".split()
)


def naming_stems() -> frozenset[str]:
    """Stems of META_WORDS and NAMING_WORDS: what a sentence that only names a paper may contain."""
    return meta_stems() | frozenset(stem(w) for w in NAMING_WORDS)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (hyphenated compounds split into their parts), in order."""
    out: list[str] = []
    for token in _WORD.findall(normalize(text)):
        out.extend(p for p in token.split("-") if p)
    return out


def content_words(text: str) -> set[str]:
    """Stems of the words that carry meaning (stop words removed)."""
    return {stem(w) for w in words(text) if w not in STOP_WORDS}


def keyword_terms(text: str) -> list[str]:
    """The terms the keyword index counts: stems of the content words, in order, repeats kept
    (term frequency is what BM25 weighs)."""
    return _stemmer().stemWords([w for w in words(text) if w not in STOP_WORDS])


def overlap(query_words: set[str], text: str) -> float:
    """Share of the query's content words that occur in `text`."""
    if not query_words:
        return 0.0
    return len(query_words & content_words(text)) / len(query_words)


def gives_title(query_words: set[str], title: str) -> bool:
    """The query holds every content word of the title (at least two): it names the paper by its
    title, the strongest sign of which paper is meant."""
    title_words = content_words(title)
    return len(title_words) >= 2 and title_words <= query_words


# ---- LaTeX and markdown of abstracts, as plain text

_SYMBOLS = {
    "%": "%", "times": "×", "approx": "≈", "sim": "~", "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥",
    "pm": "±", "cdot": "·", "infty": "∞", "rightarrow": "→", "to": "→", "uparrow": "↑",
    "downarrow": "↓", "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε",
    "lambda": "λ", "mu": "μ", "sigma": "σ", "theta": "θ", "Omega": "Ω", "ell": "ℓ",
}  # fmt: skip
_COMMAND = re.compile(r"\\([A-Za-z]+|%)(?:\s*\{([^{}]*)\})?")
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(?=\S)(.+?)(?<=\S)\1")


def plain(text: str) -> str:
    """Text as a reader should see it: LaTeX and markdown of an abstract or a draft rendered as
    plain characters ("**70.84\\%**" -> "70.84%", "$\\textbf{GameOpt}$" -> "GameOpt",
    "$\\approx 0.63n$" -> "≈ 0.63n")."""
    text = _COMMAND.sub(
        lambda m: _SYMBOLS.get(m.group(1), m.group(1)) if m.group(2) is None else m.group(2), text
    )
    text = _EMPHASIS.sub(r"\2", text)
    text = re.sub(r"\$(?=\S)([^$]{1,80}?)(?<=\S)\$(?!\d)", r"\1", text)
    return re.sub(r"(?<=\w)\{([^{}]*)\}", r"\1", text)


# ---- normalization, numbers and names

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def strip_control(text: str) -> str:
    """Control characters become spaces (they break terminals, JSON and tokenizers)."""
    return _CONTROL.sub(" ", text)


def normalize(text: str) -> str:
    """`plain`, NFKC, lower case, unified dashes, `×` -> `x`, thousands separators removed:
    "6,800" == "6800", "1.53×" == "1.53x", "84.15\\%" == "84.15%"."""
    text = unicodedata.normalize("NFKC", plain(text)).lower()
    text = text.replace("×", "x").replace("$", "")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    return re.sub(r"[‐‑‒–—]", "-", text)


_NUMBER = re.compile(r"(?<![a-z0-9.])\d+(?:\.\d+)?")
NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20",
    "hundred": "100", "thousand": "1000", "twice": "2", "double": "2", "half": "0.5",
}  # fmt: skip


def _canonical(number: str) -> str:
    if "." in number:
        number = number.rstrip("0").rstrip(".")
    return number.lstrip("0") or "0"


# A number with its scale ("349K", "7.5 million"): also the same amount written out ("349,000").
_SCALED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(K|M|B|thousand|million|billion)\b")
_SCALE = {"K": 1e3, "thousand": 1e3, "M": 1e6, "million": 1e6, "B": 1e9, "billion": 1e9}


def scaled(text: str) -> dict[str, str]:
    """Each number of `text` written with a scale, and the same amount written out:
    "349K" -> {"349": "349000"}, "1.2 billion" -> {"1.2": "1200000000"}."""
    norm = re.sub(r"(?<=\d),(?=\d{3}\b)", "", plain(text))
    out = {}
    for m in _SCALED.finditer(norm):
        value = float(m.group(1)) * _SCALE[m.group(2)]
        out[_canonical(m.group(1))] = _canonical(f"{value:.6f}")
    return out


def numbers(text: str, *, words: bool = True) -> set[str]:
    """The numbers stated in `text`, canonical ("6,800" -> "6800", "84.150" -> "84.15"), a scaled
    number also written out ("349K" -> "349" and "349000"), and with `words` number words too
    ("three" -> "3"; too ambiguous to count as a claim: "either one"). Digits glued to letters
    before them ("Llama3", "CIFAR10") belong to names."""
    norm = normalize(text)
    found = {_canonical(n) for n in _NUMBER.findall(norm)} | set(scaled(text).values())
    if words:
        found |= {NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", norm) if w in NUMBER_WORDS}
    return found


# An amount given as a formula rather than a numeral: "$m = O(n)$", "O(n log n)", "$\\sqrt{d}$".
_FORMULA = re.compile(r"\$[^$]+\$|(?<![A-Za-z])[OΘΩ]\([^()]*(?:\([^()]*\)[^()]*)*\)")


# A name with digits after letters ("Time-300B", "LLaMa2-7B", "GPT-4"): no amount.
_DIGIT_NAME = re.compile(r"(?<![\w-])[A-Za-z][\w]*[-.]?\d[\w.-]*")


def amounts(text: str) -> set[str]:
    """What `text` states as an amount: its numbers (`numbers`) and its formulas, each as written;
    the digits of a name ("Time-300B") are no amount, "300B time points" is one."""
    return numbers(_DIGIT_NAME.sub(" ", text)) | {f.replace(" ", "") for f in _FORMULA.findall(text)}


# What a number measures is said right after it ("a 3.0% improvement on MMLU"), up to the end of
# its clause.
QUANTITY_WORDS = 4
_CLAUSE_END = re.compile(r"[,;:()]|\b(?:and|while|whereas|but|than|versus|vs)\b")


_COUNTED = re.compile(
    _NUMBER.pattern + r"|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty)\b"
)


def quantities(text: str) -> list[tuple[str, set[str], str]]:
    """(number, the content stems of the words right after it, those words) for each number `text`
    states in digits or as a word from two on: "a 1.1% gain on Commonsense and a 3.0% improvement
    on MMLU" -> [("1.1", {gain, commonsens}, "gain on commonsense"), ("3", {improv, mmlu}, ...)]."""
    norm = normalize(text)
    out = []
    for m in _COUNTED.finditer(norm):
        # A number joined to a word by a hyphen names something ("top-1", "two-phase", "GPT-4"):
        # it measures nothing, and the words after it are not its quantity.
        if re.search(r"[a-z]-$", norm[: m.start()]) or re.match(r"-[a-z]", norm[m.end() :]):
            continue
        number = NUMBER_WORDS.get(m.group(0)) or _canonical(m.group(0))
        after = " ".join(
            words(_CLAUSE_END.split(norm[m.end() : m.end() + 80], maxsplit=1)[0])[:QUANTITY_WORDS]
        )
        out.append((number, content_words(after), after))
    return out


_NAME = re.compile(
    r"(?<![\w-])(?<!\d,)[A-Za-z0-9][\w]*(?:[-.:/][\w]+)*"
)  # "25,000-hour" holds no name "000-hour"
_ACRONYM = re.compile(r"^[A-Z]{2,}s?$")
_PROPER = re.compile(r"[A-Z][a-z]{2,}|[A-Z][a-z]+(?:-[A-Za-z0-9]+)+")


def is_name(token: str) -> bool:
    """Method, model, dataset or benchmark names: an upper-case letter after the first character
    (MoEE, LoRA, GPT-4o, Time-MoE, MILP-Evolve), or letters mixed with digits (Llama-3, 405B,
    BDD100K). Plain capitalized words and plain numbers are not names."""
    if len(token) < 2 or token.replace(".", "").isdigit():
        return False
    has_alpha = any(c.isalpha() for c in token)
    if has_alpha and any(c.isdigit() for c in token):
        return not re.fullmatch(r"\d+(?:\.\d+)?(?:x|s|k|m|b|th|st|nd|rd|d|%)?", token.lower()) or bool(
            re.fullmatch(r"\d+[A-Z]+", token)
        )
    return any(c.isupper() for c in token[1:])


def names(text: str) -> set[str]:
    """Name tokens of `text` (see `is_name`), and capitalized words inside a sentence (proper
    nouns: "Waymo", "Mistral"), as written, trailing punctuation removed."""
    found = set()
    for sentence in sentences(text):
        for i, m in enumerate(_NAME.finditer(sentence)):
            token = m.group(0).rstrip(".:/-")
            proper = i > 0 and _PROPER.fullmatch(token) and sentence[m.start() - 2 : m.start()] != ": "
            if is_name(token) or proper:
                found.add(token)
    return found


def name_tokens(text: str) -> set[str]:
    """Every token of `text` that `names` could return for some sentence: names, and capitalized
    words wherever they stand (a proper noun may open a sentence here and sit inside one in a
    question). What the keyword index stores to look names up exactly."""
    found = set()
    for m in _NAME.finditer(text):
        token = m.group(0).rstrip(".:/-")
        if is_name(token) or (_PROPER.fullmatch(token) and token.lower() not in STOP_WORDS):
            found.add(token)
    return found


def name_forms(name: str) -> list[str]:
    """The ways one name is written as a token: itself, its plural, and an acronym's singular
    ("LLM", "LLMs"): looked up together, so a name is as rare as all its forms."""
    return list(dict.fromkeys([name, name + "s", _singular(name)]))


def _singular(name: str) -> str:
    """An acronym's singular ("LLMs" -> "LLM"); any other name as it is."""
    return name[:-1] if _ACRONYM.match(name) and name.endswith("s") else name


_CAMEL = re.compile(r"[a-z][A-Z]")
_LOWER_WORD = re.compile(r"(?<![A-Za-z0-9])[a-z]+(?![A-Za-z0-9])")


def name_in(name: str, text: str) -> bool:
    """Whether `name` occurs in `text` as a whole token or token run, ignoring case, hyphens and
    spacing; an acronym also matches the words it abbreviates ("LLMs" ~ "large language models").
    A coined name with a capital inside ("LaW", "MoE") is not the lower-case word it spells: the
    Time-MoE abstract's "scaling law" does not name LaW."""
    if _CAMEL.search(name):
        coined = {part.lower() for part in re.findall(r"[A-Za-z0-9]+", name) if part != part.lower()}

        def mask(m: re.Match) -> str:  # " 0q0 ": no name matches it, so its neighbours stay apart
            word = m.group()
            return " 0q0 " if word in coined or word.removesuffix("s") in coined else word

        text = _LOWER_WORD.sub(mask, text)
    spaced = " " + re.sub(r"[^a-z0-9]+", " ", normalize(text)) + " "
    tokens = spaced.split()
    variants = {name, _singular(name)}
    for variant in variants:
        key = re.sub(r"[^a-z0-9]+", " ", normalize(variant)).strip()
        if not key:
            continue
        if f" {key} " in spaced or f" {key}s " in spaced:
            return True
        joined = key.replace(" ", "")
        width = key.count(" ") + 1
        for n in range(1, width + 3):
            if any("".join(tokens[i : i + n]) in (joined, joined + "s") for i in range(len(tokens) - n + 1)):
                return True
        if _ACRONYM.match(variant) and _abbreviates(variant.rstrip("s").lower(), tokens):
            return True
    return False


def shared_names(asked: Iterable[str], texts: Sequence[str]) -> list[str]:
    """The question's names `asked` (methods, models, datasets, proper nouns) when `texts` name
    every one of them, else none. A short question about an acronym embeds poorly ("Which papers use DPO?" is
    0.12 from its best passage, under any threshold that refuses recipes and football), yet sources
    that name all it asks about put it on topic: the claim checks decide the rest. A capitalized
    word ("World") counts only as written, so "real-world" does not name it."""
    wanted = sorted(asked)

    def named(name: str) -> bool:
        if is_name(name):
            return any(name_in(name, t) for t in texts)
        as_written = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        return any(as_written.search(t) for t in texts)

    return wanted if wanted and all(map(named, wanted)) else []


def _abbreviates(acronym: str, tokens: list[str]) -> bool:
    n = len(acronym)
    return any("".join(t[0] for t in tokens[i : i + n]) == acronym for i in range(len(tokens) - n + 1))


# ---- sentences that state a contribution

_CONTRIBUTION = re.compile(
    r"\b(we|this (?:paper|work)|our (?:work|method|approach))\s+(?:\w+ly\s+)?(propose|present|introduce|develop|"
    r"design|build|release|curate)s?\b",
    re.I,
)


def states_contribution(sentence: str) -> bool:
    """The sentence says what the paper itself contributes ("We present TEAL, ...")."""
    return bool(_CONTRIBUTION.search(sentence))


# A paper's own name for what it contributes: "We propose GameOpt, ...", "we propose a novel
# framework, Spotscape, ...", "... termed PromptTrack", "... Offline RL (ReDOR)", or the head of a
# title ("KV-Dict: ..."). Capital-only acronyms (CBO, GP, TD) are as often the field's terms.
_COINS = re.compile(r"\b(?:propose|present|introduce|develop|design)s?\b", re.I)
_CALLED = re.compile(r"\b(?:termed|called|named|dubbed|coined)\s+(\S+)")
_MIXED_ACRONYM = re.compile(r"\(([A-Za-z][\w-]*[a-z][\w-]*)\)")
COINED_WITHIN = 12  # words after the verb: a name further on is not what it introduces


def _coined(token: str) -> bool:
    token = token.strip(",.;:()")
    if re.fullmatch(r"[A-Z]{1,4}s?", token):
        return False
    return is_name(token) or bool(re.fullmatch(r"[A-Z][a-z]{3,}", token))


def without_titles(sentence: str, titles: Sequence[str]) -> str:
    """The sentence without the paper titles it names (in any quotes, or none)."""
    for title in titles:
        sentence = re.sub(r"[\"“”'‘’]?" + re.escape(title) + r"[\"“”'‘’]?", " ", sentence, flags=re.I)
    return re.sub(r"\s+", " ", sentence).strip()


def coined_name(title: str, abstract: str) -> str:
    """What the paper calls its method, model or dataset ("GameOpt"); "" when it names none."""
    head = re.match(r"\s*([^:]{2,40}):", title)
    if head and len(head.group(1).split()) <= 3 and any(map(is_name, head.group(1).split())):
        return head.group(1).strip()
    for sentence in sentences(plain(abstract)):
        verb = _COINS.search(sentence)
        if not verb or not states_contribution(sentence):
            continue
        rest = " ".join(sentence[verb.end() :].split()[:COINED_WITHIN])
        called, acronym = _CALLED.search(rest), _MIXED_ACRONYM.search(rest)
        candidates = [called.group(1) if called else "", acronym.group(0) if acronym else ""]
        candidates += [
            rest.split()[0] if rest else "",
            rest.split(",", 1)[1].split()[0] if "," in rest[:-1] else "",
        ]
        for token in candidates:
            if token and _coined(token) and (token is not candidates[1] or is_name(token.strip("()"))):
                return token.strip(",.;:()")
    return ""


# ---- blanks

# Where a name or marker was removed and nothing took its place: "The work by  claims", "are  and
# [1]", "by .", empty quotes or brackets.
_EMPTY_SLOT = re.compile(r"\S\s{2,}\S|\b(?:by|are|is|was|and|from|in|of)\s+[.,;:]|“\s*”|\(\s*\)")


def has_empty_slot(text: str) -> bool:
    return bool(_EMPTY_SLOT.search(text))


# ---- tokens


def estimate_tokens(text: str) -> int:
    """LLM or word-piece tokens when no tokenizer is at hand: 1.3 per word or punctuation mark.
    On the 53 seed abstracts it counts 16,315 against MiniLM's 14,109 and Qwen2.5's 13,235 (16 % and
    23 % high): a budget counted with it stays within the model's window."""
    return int(len(re.findall(r"\w+|[^\w\s]", text)) * 1.3) + 1
