"""The checks the model makes, each through a callback the pipeline gives (tests give fakes):
`paper_fit`, whether a source's paper is the answer to a which-paper question, and `entailment`,
what the cited abstract says of a sentence that passed the rule checks."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rag.answer.trust.checks import Stance
from rag.answer.trust.trust import Trust
from rag.search.evidence import Evidence, Sentence, best_told, fit
from rag.types import Check

# confirm(source, question): does the source's paper answer the question (or the alternative of it
# that the paper fits)?
Confirm = Callable[[Evidence, str], "bool | None"]
# entail(claim, passage, source): what the passage (the sentence of the source's abstract that best
# matches the claim) says of the claim (the `entailment` check)
Entail = Callable[[str, str, Evidence], "Stance | None"]


def paper_answer(
    described: Sequence[tuple[str, np.ndarray, set[str]]], ev: Evidence, trust: Trust, confirm: Confirm
) -> tuple[float, Sentence, Check] | None:
    """Asked which paper, a sentence that names one in the question's own words ("The work by
    “X” shows that <the question's words>", "It is titled “X” [1]") claims that the paper is what
    the question describes. The claim checks cannot tell a paraphrase from a detail the paper does
    not give, so it is checked twice: the paper's best sentence must fit the description (cosine +
    word overlap >= `min_paper_fit`) and the model, shown the paper's evidence, must confirm it.
    The sentence shown is then that paper sentence, quoted: the restatement is never shown as a
    fact. `described`: what the question describes (`Intent.described`) and, asked for
    papers that do X or Y, each of X and Y: embedded, with their content words; the paper is
    measured against the one it fits best. Returns (fit, the sentence, the check), or None."""
    score, asked, vector, words = max(
        ((max((fit(v, w, s) for s in ev.sentences), default=0.0), q, v, w) for q, v, w in described),
        key=lambda t: t[0],
    )
    # Asked "which papers do X or Y?", a paper doing X is not "the answer" to the whole: the model
    # is asked about the alternative the paper fits.
    if score < trust.settings.min_paper_fit or confirm(ev, asked) is not True:
        return None
    sentence = best_told(vector, words, ev)
    detail = f"the model says this paper answers the question (fit {score:.2f})"
    return score, sentence, Check("paper_fit", True, detail)
