"""What happens to a draft after the model wrote it: an ordered list of named stages, each a small
class with one job, each appending what it did to the answer's trace (stage, sentence, decision,
reason), so "why was this sentence removed?" has an answer.

  clean     drop echoed markup, author attributions, list enumerators and sentences that only
            point at the sources (`clean.clean_draft`)
  check     every sentence against the source it cites, kept or removed whole by one learned
            decision over its checks (`trust.keep`): shown under a source that supports it (another
            offered one when the model misplaced its marker), or removed with the reason in words
            (`trust.check_answer`)
  verdict   the model, after the answer's cached prompt, judges each checked sentence against the
            source it cites: a contradicted one is marked with the source's sentence (or removed,
            `trust.on_contradiction`), an unstated one marked; each verdict is in the trace (`audit`);
            asked only where it can change the selector's decision
  select    one decision over every signal (rag/answer/select/): show the checked draft, quote
            the sentence of the question's paper that answers, or refuse naming the nearest
            sentence
  complete  quote the evidence for each part of the question the answer leaves out, and name the
            paper a which-paper answer does not (`complete.complete`)
  render    the shown text with its markers renumbered in reading order

`clean`, `verdict` and `complete` can be switched off by name (settings `answer_stages`, eval
`--ablation`); `check`, `select` and `render` make the answer and always run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag import text as tx
from rag.answer import audit as au
from rag.answer.answered import Answering
from rag.answer.citations import compact, render_text, strip_markers
from rag.answer.clean import clean_draft
from rag.answer.complete import complete
from rag.answer.prompts import REFUSAL
from rag.answer.select.stage import Select, Selection
from rag.answer.trust import Checked, Confirm, Entail, Refusal, Stance, Trust, check_answer
from rag.index.embedding import Embedder
from rag.question import Intent
from rag.search.evidence import Evidence
from rag.types import AnswerSentence, Check, Citation, Step

STAGES = ("clean", "check", "verdict", "select", "complete", "render")
OPTIONAL = ("clean", "verdict", "complete")


@dataclass
class Context:
    """What the stages read: the parsed question, the sources offered to the model, and the
    components that judge (the embedder, the trust settings, the model's yes/no verdicts)."""

    intent: Intent
    evidence: Sequence[Evidence]
    embedder: Embedder
    trust: Trust
    confirm: Confirm | None = None  # does this source's paper answer the which-paper question?
    entail: Entail | None = None  # what does the cited abstract say of the sentence?
    audit: au.Audit | None = None  # the model's stance on each statement, after the answer's prompt
    answering: Answering | None = None  # the answer judge bound to the question (None: not used)
    selection: Selection | None = None  # the selector and the signals read before generation


@dataclass
class Work:
    """The answer being made from one draft."""

    draft: str
    text: str = ""
    checked: Checked | None = None
    sentences: list[AnswerSentence] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    refusal: Refusal | None = None
    stances: list[str] | None = None  # the model's verdict on each shown sentence (None: not asked)
    verdict_skipped: bool = False  # the cascade did not ask: no verdict could change the decision
    selected: dict | None = None  # the `select` stage's features, decision and candidates
    trace: list[Step] = field(default_factory=list)

    def note(self, stage: str, decision: str, sentence: str = "", reason: str = "") -> None:
        self.trace.append(Step(stage, decision, sentence, reason))


class Clean:
    """Drops what is no claim: echoed markup, "by X et al.", list numbers, pointers at the sources."""

    name = "clean"

    def __call__(self, work: Work, ctx: Context) -> None:
        titles = [t for ev in ctx.evidence for t in (ev.paper.title, ev.paper.display_title) if t]
        numbered = {ev.number: ev.paper.title for ev in ctx.evidence if ev.paper.title}
        markers = numbered if ctx.intent.asks_for_paper else None
        work.text = clean_draft(work.text, titles, paper_markers=markers)
        kept = {strip_markers(s) for s in tx.sentences(work.text)}
        changed = [s for s in tx.sentences(work.draft) if strip_markers(s) not in kept]
        for sentence in changed:
            work.note(self.name, "rewritten", sentence, "no claim, or a pointer at the sources")
        if not changed:
            work.note(self.name, "unchanged", "", "nothing to drop before checking")


class CheckSentences:
    """Every sentence against the source it cites (rag.answer.trust.answers.check_answer)."""

    name = "check"

    def __call__(self, work: Work, ctx: Context) -> None:
        checked = check_answer(
            work.text, ctx.evidence, ctx.embedder, ctx.trust, ctx.intent, ctx.confirm, ctx.entail
        )
        work.checked, work.sentences, work.citations = checked, checked.sentences, checked.citations
        for s in checked.sentences:
            if not s.claim:
                work.note(self.name, "kept", s.text, "no claim to check")
            elif any(c.name == "paper_fit" and c.passed for c in s.checks):
                work.note(
                    self.name, "quoted", s.text, next(c.detail for c in s.checks if c.name == "paper_fit")
                )
            elif s.attributed:
                work.note(self.name, "moved", s.text, "backed by another offered source than the one cited")
            else:
                work.note(self.name, "kept", s.text, f"passed {', '.join(c.name for c in s.checks)}")
        for s in checked.removed:
            work.note(self.name, "removed", s.text, s.why_not or "no source backs it")
        if checked.invented:
            work.note(
                self.name, "dropped markers", "", f"{checked.invented} pointed at sources never offered"
            )


class JudgedInContext:
    """The model's verdict on each checked sentence against the source it cites (`audit`):
    contradicted, removed with the source's sentence (or, `trust.on_contradiction` "mark", shown
    and marked with it); unstated, marked; supported, kept."""

    name = "verdict"

    def __call__(self, work: Work, ctx: Context) -> None:
        assert work.checked is not None, "verdict runs after check"
        asked = au.statements(work.sentences, work.citations, ctx.evidence)
        if ctx.audit is None or not asked:
            work.note(self.name, "skipped", "", "no model" if asked else "nothing the model needs to judge")
            return
        if ctx.selection is not None and not ctx.selection.verdict_matters(work, ctx):
            work.verdict_skipped = True
            work.note(self.name, "skipped", "", "the verdict cannot change the selector's decision")
            return
        work.stances = []
        offered = {ev.number: ev for ev in ctx.evidence}
        against: dict[int, list[str]] = {}  # sentence index -> why it is contradicted
        for st, said in zip(asked, ctx.audit(asked)):
            sentence, ev = work.sentences[st.index], offered[st.source]
            work.stances.append(said.value if said is not None else "")
            where = ev.short_title
            if said is Stance.CONTRADICTED:
                quote = au.contradicted_by(st.text, ev)
                against.setdefault(st.index, []).append(f"{where} says otherwise: “{quote}”")
            elif said is Stance.UNSTATED:
                sentence.checks.append(Check(self.name, False, f"{where} does not state it"))
                work.note(self.name, "unstated", sentence.text, f"{where} does not state it")
            elif said is Stance.SUPPORTED:
                sentence.checks.append(Check(self.name, True))
                work.note(self.name, "supported", sentence.text, f"{where} states it")
        if not against:
            work.note(self.name, "kept", "", f"no statement contradicted ({len(asked)} judged)")
        elif ctx.trust.settings.on_contradiction == "mark":
            for i, why in against.items():
                work.sentences[i].checks.append(Check(self.name, False, "; ".join(why)))
                work.note(self.name, "disputed", work.sentences[i].text, "; ".join(why))
        else:
            self.remove(work, against)

    def remove(self, work: Work, against: dict[int, list[str]]) -> None:
        checked = work.checked
        assert checked is not None
        for i in sorted(against):
            s = work.sentences[i]
            failed = Check(self.name, False, "; ".join(against[i]))
            checked.removed.append(AnswerSentence(s.text, [], False, s.score, False, [*s.checks, failed]))
            work.note(self.name, "removed", s.text, failed.detail)
        kept = [s for i, s in enumerate(work.sentences) if i not in against]
        work.citations = compact(kept, work.citations)
        work.sentences = checked.sentences = kept
        checked.citations = work.citations
        if not any(s.supported for s in kept):
            checked.supported = []  # nothing backed is left: `no_supported_sentence` refuses
        checked.text = render_text(kept, work.citations)


class Complete:
    """Quoted evidence for the parts of the question the answer leaves out (extractive, so faithful)."""

    name = "complete"

    def __call__(self, work: Work, ctx: Context) -> None:
        before = len(work.sentences)
        shown = {id(s) for s in work.sentences}
        work.sentences, work.citations = complete(
            ctx.intent, work.sentences, work.citations, ctx.evidence, ctx.embedder
        )
        added = [s for s in work.sentences if id(s) not in shown]
        for s in added:
            work.note(self.name, "added", s.text, "quoted for a part of the question left out")
        if len(work.sentences) - len(added) < before:
            work.note(self.name, "merged", "", "a sentence that only listed the papers, now each described")
        if not added and len(work.sentences) == before:
            work.note(self.name, "unchanged", "", "every part of the question has an answer")


class Render:
    """The shown text, markers in reading order after each sentence (or the title it names)."""

    name = "render"

    def __call__(self, work: Work, ctx: Context) -> None:
        work.text = render_text(work.sentences, work.citations) if work.checked else work.text
        work.note(
            self.name, "rendered", "", f"{len(work.sentences)} sentences, {len(work.citations)} sources"
        )


_ALL = {
    stage.name: stage
    for stage in (
        Clean(),
        CheckSentences(),
        JudgedInContext(),
        Select(),
        Complete(),
        Render(),
    )
}


def pipeline_of(names: Sequence[str] = STAGES) -> list:
    """The stages in their fixed order, with the optional ones not in `names` left out."""
    unknown = sorted(set(names) - set(STAGES))
    if unknown:
        raise ValueError(f"unknown answer stage(s) {', '.join(unknown)}; choose from {', '.join(STAGES)}")
    return [_ALL[n] for n in STAGES if n in names or n not in OPTIONAL]


def run_stages(draft: str, ctx: Context, names: Sequence[str] = STAGES) -> Work:
    """The draft through the stages; a refusal ends the answer after its stage."""
    work = Work(draft=draft, text=draft)
    for stage in pipeline_of(names):
        stage(work, ctx)
        if work.refusal:
            break
    return work


def judge(
    intent: Intent,
    draft: str,
    evidence: Sequence[Evidence],
    embedder: Embedder,
    trust: Trust,
    *,
    confirm: Confirm | None = None,
    stages: Sequence[str] = STAGES,
    entail: Entail | None = None,
    audit: au.Audit | None = None,
    answering: Answering | None = None,
    selection: Selection | None = None,
) -> dict:
    """The `Answer` fields for a finished draft: checked sentences, or a refusal."""
    ctx = Context(intent, evidence, embedder, trust, confirm, entail, audit, answering, selection)
    return answer_fields(run_stages(draft, ctx, stages))


def answer_fields(work: Work) -> dict:
    """The `Answer` fields of a finished `Work`."""
    removed = work.checked.removed if work.checked else []
    fields: dict = dict(removed=removed, trace=work.trace, selected=work.selected)
    if work.refusal:
        return fields | refusal_fields(work.refusal)
    invented = work.checked.invented if work.checked else 0
    return fields | dict(
        text=work.text, citations=work.citations, sentences=work.sentences, invented_citations=invented
    )


def refusal_fields(refusal: Refusal) -> dict:
    return dict(text=REFUSAL, abstained=True, abstain_code=refusal.code, abstain_reason=refusal.reason)
