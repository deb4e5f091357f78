"""The one home of trust: whether an answer sentence is backed by the passage it cites.

Claim checks (each a small function returning a `Check`, recorded per sentence):
  numbers     every number in the claim occurs in the cited passage
  quantities  each number measures what the passage says it measures (not another number's words)
  names       every method/model/dataset name in the claim occurs in the cited passage
  polarity    the claim does not negate what its best-matching passage sentence states, or the reverse
  direction   the claim does not reverse a direction (increases/reduces, more/less, from X to Y)
  coverage    most of the claim's content words occur in the passage (another paper's finding does not)
  similarity  the claim is about what the passage says (embedding cosine + shared content words)
  paper_fit   asked which paper, a sentence that only names one in the question's words (for one
              paper: instead of the checks above, which the name alone passes; for several: when
              it fails them) is shown as the paper's best sentence, quoted, when that sentence fits
              what the question describes and the model says the paper answers the question

Each sentence is kept or removed whole by one learned decision over these checks and how much of
it the source holds (keep.py): no check removes a sentence on its own.

Rules the answer selector reads as signals (rag/answer/select/; none refuses on its own):
  unstated_focus         "how many X" when no retrieved paper mentions X
  no_answering_sentence  no sentence of the sources answers the question by the answer judge
  restates_question      every shown sentence only repeats the question's words (says nothing new)

`citewise verify` (rag/answer/verify.py) runs the same checks against a whole abstract.

Each check and rule is a small class registered by name (base.py: `ClaimCheck.check(claim,
source) -> Check`, `Rule.refuse(answer) -> Refusal | None`); `TrustSettings.checks` and `.rules`
name the ones to run, in order, and `Trust` (trust.py) builds them (an unknown name is an
`UnknownName` error at start-up). checks.py holds the claim checks (polarity.py those of which way
a claim points: negation, direction, who outperforms whom), rules.py the abstention rules,
answers.py the checking of a whole draft (`check_answer`).
"""

from rag.answer.prompts import REFUSAL  # the sentence a refusal shows
from rag.answer.trust.answers import Confirm, Entail, check_answer
from rag.answer.trust.base import (
    CHECKS,
    REASONS,
    RULES,
    Claim,
    ClaimCheck,
    Drafted,
    Refusal,
    Rule,
    Screen,
    Source,
    UnknownName,
)
from rag.answer.trust.checks import (
    DOWN,
    UP,
    Checked,
    Stance,
    Verdict,
    check_coverage,
    check_direction,
    check_names,
    check_numbers,
    check_polarity,
    has_claim,
    polarity_terms,
    support_score,
)
from rag.answer.trust.rules import is_refusal, restates_question, unstated_focus
from rag.answer.trust.trust import PRE_GENERATION_RULES, Trust, trust_from_settings

__all__ = [
    "CHECKS", "DOWN", "PRE_GENERATION_RULES", "REASONS", "REFUSAL", "RULES", "UP", "Checked", "Claim", "ClaimCheck",
    "Confirm", "Drafted", "Entail", "Refusal", "Rule", "Screen", "Source", "Stance", "Trust", "UnknownName", "Verdict",
    "check_answer", "check_coverage", "check_direction", "check_names", "check_numbers",
    "check_polarity", "has_claim", "is_refusal", "polarity_terms", "restates_question",
    "support_score", "trust_from_settings", "unstated_focus",
]  # fmt: skip
