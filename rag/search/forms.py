"""A topic's other names from the corpus's own definitions (`rag.index.aliases`): an acronym the
question uses alone is also searched under the long forms the papers define it as ("PINNs" ->
"physics-informed neural networks"), and a long form under the acronyms they define for it
("electrocardiogram" -> "ECG"), so papers that only write one form are found by the other."""

from __future__ import annotations

from dataclasses import dataclass, field

from rag.index.aliases import form_key, is_short_form, singular

# A sense of an acronym is searched when this share of the papers that define the acronym define
# it so (and two papers at least, unless it has one sense): "SAM" is the segment anything model
# (19) and sharpness-aware minimization (14); one paper's "models by up to 1.23x (MoE)" is noise.
SENSE_SHARE = 0.15


@dataclass
class Forms:
    """What a topic is searched under beyond its own words: long forms (phrases) and acronyms
    (names, counted where the long form's words are near), each from the corpus's definitions."""

    long: list[str] = field(default_factory=list)
    acronyms: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.long or self.acronyms)


def senses(defined: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """The definitions enough papers share (`SENSE_SHARE`), most papers first."""
    total = sum(n for *_, n in defined)
    if len(defined) == 1:
        return defined
    return [d for d in defined if d[2] >= 2 and d[2] >= SENSE_SHARE * total]


def alias_forms(keyword, phrases: list[str]) -> Forms:
    """The long forms and acronyms the index's papers define for the topic's `phrases`: a phrase
    that is one acronym takes its long forms; a phrase that is a long form takes its acronyms."""
    out = Forms()
    written = {form_key(p) for p in phrases}
    for phrase in phrases:
        words = phrase.split()
        if len(words) == 1 and is_short_form(words[0]):
            for long, key, _ in senses(keyword.long_forms(words[0])):
                if key not in written and long not in out.long:
                    out.long.append(long)
            continue
        for short, _, _ in senses(keyword.short_forms(form_key(phrase))):
            if short not in out.acronyms and singular(short) not in {singular(w) for w in words}:
                out.acronyms.append(short)
    return out
