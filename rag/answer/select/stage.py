"""The `select` stage: the answer's signals gathered, one decision made and carried out.

The draft is shown as its checks left it (whole sentences only), or replaced by the quote of the
sentence that answers from the paper the question is about, or refused with the nearest sentence
named. Without a trained selector (before the first training run) the draft is shown and the
signals are still recorded: that is how the training data is gathered (eval/selector/).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rag.answer.answered import Quote, add_quotes
from rag.answer.citations import render_text, strip_markers
from rag.answer.select import signals as sg
from rag.answer.select.selector import SAID, Decision, Outcome, Selector
from rag.answer.trust import Refusal
from rag.answer.trust.rules import declines

# rag.answer.stages' Work and Context (that module imports this one: no import back).
Work = Context = Any


@dataclass
class Selection:
    """The selector bound to one answer: the signals read before generation, and whether the
    model's verdict is asked only where it can change the decision (`cascade`)."""

    selector: Selector | None
    before: dict[str, float] = field(default_factory=dict)  # question, retrieval and screen features
    cascade: bool = True
    judged: dict[tuple[str, str], float] = field(default_factory=dict)  # the answer judge's p per pair

    def answering(self, ctx: Context):
        """The answer judge, each pair scored once (the cascade and the decision read the same claims)."""
        if ctx.answering is None:
            return None

        def scores(pairs):
            new = [p for p in dict.fromkeys(pairs) if p not in self.judged]
            if new:
                self.judged.update(zip(new, (float(p) for p in ctx.answering(new))))
            return [self.judged[p] for p in pairs]

        return scores

    def features(self, work: Work, ctx: Context) -> dict[str, float]:
        assert work.checked is not None, "select runs after check"
        drafted = sg.draft_features(
            ctx.trust, ctx.intent, work.draft, work.checked, ctx.evidence, self.answering(ctx)
        )
        # Skipped by the cascade, the verdict could not change the decision whatever it said: any
        # one verdict stands for all of them (the log-odds are linear in the verdict shares).
        stances = ["supported"] if work.verdict_skipped else work.stances or []
        return {
            **self.before,
            **sg.evidence_features(ctx.intent, ctx.evidence),
            **drafted.features,
            **sg.verdict_features(stances),
            "verdict_asked": float(work.stances is not None or work.verdict_skipped),
        }

    def verdict_matters(self, work: Work, ctx: Context) -> bool:
        """Whether the model's verdict can change the decision (always, without the cascade)."""
        if not self.cascade or self.selector is None:
            return True
        x = self.features(work, ctx) | {"verdict_asked": 1.0}
        return self.selector.verdict_matters(x, sg.VERDICT_SIDE)


def nearest(ctx: Context) -> sg.Best:
    """The sentence a quote or a refusal names: the best of the question's paper."""
    return sg.best_sentence(sg.about_paper(ctx.intent, ctx.evidence))


class Select:
    """One decision over every signal (rag/answer/select/selector.py)."""

    name = "select"

    def __call__(self, work: Work, ctx: Context) -> None:
        if ctx.selection is None:  # an answer judged apart from a pipeline (tests, eval variants)
            if not any(s.claim for s in work.sentences):
                work.refusal = Refusal("nothing_kept")
                work.note(
                    self.name, "refused", "", "no selector bound, and no sentence of the draft was kept"
                )
                return
            work.note(self.name, "skipped", "", "no selector bound to this answer")
            return
        started = time.perf_counter()
        x = ctx.selection.features(work, ctx)
        best = nearest(ctx)
        selector = ctx.selection.selector
        shown = [s for s in work.sentences if s.claim]
        quote = _quote_text(best)
        work.selected = {"features": x, "draft": render_text(work.sentences, work.citations) if shown else "",
                         "quote": quote, "quote_paper": best.ev.paper.id if best.ev else ""}  # fmt: skip
        if selector is None:
            work.note(self.name, "draft", "", "no trained selector: the checked draft is shown")
            return
        decision = selector.decide(x, can_quote=best.sentence is not None)
        work.selected["seconds"] = time.perf_counter() - started  # the signals and the decision
        if decision.outcome is Outcome.DRAFT and not shown:  # nothing of the draft passed its checks
            decision.outcome = Outcome.QUOTE if best.sentence is not None else Outcome.REFUSE
        declined = declines(work.draft)
        if declined:  # the model itself said the sources lack it: shown as what it is, a refusal
            decision.outcome = Outcome.REFUSE
            decision.why = [SAID["declined"], *decision.why]
        # Every sentence left is one its source does not confirm (the model's verdict): nothing of
        # it is an answer the user can trust, so it is shown as what it is, a refusal.
        unconfirmed = decision.outcome is Outcome.DRAFT and bool(shown) and all(s.doubted for s in shown)
        if unconfirmed:
            decision.outcome = Outcome.REFUSE
            decision.why = [SAID["unconfirmed"], *decision.why]
        work.selected["decision"] = decision.to_json()
        code = "draft_declined" if declined else "draft_unconfirmed" if unconfirmed else "selected_refusal"
        self.carry_out(work, ctx, decision, best, code)

    def carry_out(
        self, work: Work, ctx: Context, decision: Decision, best: sg.Best, code: str = "selected_refusal"
    ) -> None:
        why = "; ".join(decision.why)
        probs = (f"p(the sources answer) {decision.p_answers:.2f} (threshold {decision.threshold:.2f}), "
                 f"p(draft answers) {decision.p_draft:.2f}, p(quote answers) {decision.p_quote:.2f}")  # fmt: skip
        if decision.outcome is Outcome.DRAFT:
            work.note(self.name, "draft", "", f"{probs}: {why}")
            return
        if decision.outcome is Outcome.QUOTE and best.sentence is not None and best.ev is not None:
            quote = Quote(best.ev, best.sentence, f"{best.ev.short_title} answers ({best.p:.2f})")
            work.sentences, work.citations = add_quotes([quote], [], [])
            checked = work.checked
            assert checked is not None
            checked.sentences, checked.citations = work.sentences, work.citations
            checked.supported = [best.sentence.text]
            checked.text = render_text(work.sentences, work.citations)
            work.note(self.name, "quote", work.sentences[0].text, f"{probs}: {why}")
            return
        named = (
            f"The nearest, from {best.ev.short_title}, is “{strip_markers(best.sentence.text)}” ({best.p:.2f})."
            if best.sentence is not None and best.ev is not None
            else ""
        )
        work.refusal = Refusal(code, named)
        work.note(self.name, "refused", "", f"{probs}: {why}")


def _quote_text(best: sg.Best) -> str:
    if best.sentence is None or best.ev is None:
        return ""
    return f"“{best.ev.paper.display_title}”: “{best.sentence.text.rstrip('.')}”."
