"""What happens to a draft after the model wrote it: an ordered list of named stages, each a small
class with one job, each appending what it did to the answer's trace (stage, sentence, decision,
reason), so "why was this sentence removed?" has an answer.

  clean     drop echoed markup, author attributions, list enumerators and sentences that only
            point at the sources (`clean.clean_draft`)
  check     check every sentence against the source it cites: keep it, give it to another source
            that backs it, split it into clauses, or remove it with its failed checks
            (`trust.check_answer`)
  verdict   the model, after the answer's cached prompt, judges each checked sentence against the
            source it cites: a contradicted one is marked with the source's sentence (or removed,
            `trust.on_contradiction`), an unstated one marked; each verdict is in the trace (`audit`)
  answered  when the answer judge finds a shown evidence sentence that answers the question and no
            answer sentence that does (or, asked about several subjects, a subject's source the
            answer leaves out), that sentence quoted with its citation; a draft that declined is
            then no refusal (`answered.quotes_needed`)
  refuse    the abstention rules on the checked answer (`trust.Trust.after_generation`)
  complete  quote the evidence for each part of the question the answer leaves out, and name the
            paper a which-paper answer does not (`complete.complete`)
  wanted    an answer without the kind of thing the question asks for (a number, asked "how
            many") gets the cited paper's sentence that gives it, quoted, or is refused
            (`complete.lacks_wanted`, `complete.complete_wanted`)
  select    one decision over every signal (rag/answer/select/): show the checked draft, quote
            the sentence of the question's paper that answers, or refuse naming the nearest
            sentence; replaces `answered`, `refuse` and `wanted`, which remain for comparison
  render    the shown text with its markers renumbered in reading order

`clean`, `verdict`, `answered`, `refuse`, `complete` and `wanted` can be switched off by name (settings `answer_stages`, eval
`--ablation`); `check` and `render` make the answer and always run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rag import text as tx
from rag.answer import audit as au
from rag.answer.answered import Answering, add_quotes, quotes_needed
from rag.answer.citations import compact, render_text, strip_markers
from rag.answer.clean import clean_draft
from rag.answer.complete import complete, complete_wanted, lacks_wanted
from rag.answer.prompts import REFUSAL
from rag.answer.select.stage import Select, Selection
from rag.answer.trust import Checked, Confirm, Entail, Refusal, Stance, Trust, check_answer
from rag.index.embedding import Embedder
from rag.questions import Intent
from rag.search.evidence import Evidence
from rag.types import AnswerSentence, Check, Citation, Step

STAGES = ("clean", "check", "verdict", "select", "answered", "refuse", "complete", "wanted", "render")
OPTIONAL = ("clean", "verdict", "select", "answered", "refuse", "complete", "wanted")
# The chain of rules the selector replaced, kept to measure against (eval config `rules`): with
# these stages (and `trust.whole_sentences` false) an answer is made as before the selector.
RULE_STAGES = ("clean", "check", "verdict", "answered", "refuse", "complete", "wanted", "render")


@dataclass
class Context:
    """What the stages read: the parsed question, the sources offered to the model, and the
    components that judge (the embedder, the trust settings, the model's yes/no verdicts)."""

    intent: Intent
    evidence: Sequence[Evidence]
    embedder: Embedder
    trust: Trust
    confirm: Confirm | None = None  # does this source's paper answer the which-paper question?
    grade: Callable[[Checked], bool | None] | None = None  # does the checked answer answer?
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
    judged: bool | None = None
    quoted: bool = False  # the `answered` stage quoted evidence: a declining draft is overruled
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


class Refuse:
    """The abstention rules: refuse when the checked answer is not one."""

    name = "refuse"

    def __call__(self, work: Work, ctx: Context) -> None:
        assert work.checked is not None, "refuse runs after check"
        grades: list[bool | None] = []

        def graded(checked: Checked) -> bool | None:
            grades.append(ctx.grade(checked) if ctx.grade else None)
            return grades[-1]

        # A draft that declined while its evidence answers was answered by a quote (`answered`).
        draft = render_text(work.sentences, work.citations) if work.quoted else work.draft
        work.refusal = ctx.trust.after_generation(draft, work.checked, ctx.intent, graded)
        work.judged = grades[0] if grades else None
        if work.refusal:
            work.note(self.name, "refused", "", f"{work.refusal.code}: {work.refusal.reason}")
        else:
            work.note(self.name, "answered", "", f"no rule refused ({', '.join(ctx.trust.rules)})")


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


class Answered:
    """The evidence sentence that answers, quoted, when the answer does not (`answered.py`)."""

    name = "answered"

    def __call__(self, work: Work, ctx: Context) -> None:
        checked = work.checked
        assert checked is not None, "answered runs after check"
        if ctx.answering is None:
            work.note(self.name, "skipped", "", "the answer judge is off")
            return
        keep = ctx.trust.settings.answer_keep
        quotes = quotes_needed(ctx.intent, work.sentences, work.citations, ctx.evidence, ctx.answering, keep)
        if not quotes:
            work.note(self.name, "answered", "", "the answer answers, or no shown sentence does")
            return
        work.sentences, work.citations = add_quotes(quotes, work.sentences, work.citations)
        checked.sentences, checked.citations = work.sentences, work.citations
        checked.supported += [q.sentence.text for q in quotes]
        checked.text = render_text(work.sentences, work.citations)
        work.quoted = True
        for q, s in zip(quotes, work.sentences[-len(quotes) :]):
            work.note(self.name, "added", s.text, q.why)


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


class AnswersWhatIsAsked:
    """Asked for an amount, an answer with no number is no answer, however true its sentences: it
    gets the cited paper's sentence that gives one, quoted, or is refused when none does."""

    name = "wanted"

    def __call__(self, work: Work, ctx: Context) -> None:
        wants = ctx.intent.wants.value
        if not lacks_wanted(ctx.intent, " ".join(strip_markers(s.text) for s in work.sentences)):
            work.note(self.name, "answered", "", f"the answer gives what is asked for ({wants})")
            return
        quoted = complete_wanted(ctx.intent, work.sentences, work.citations, ctx.evidence)
        if quoted is not None:
            work.sentences.append(quoted)
            work.note(self.name, "added", quoted.text, f"quoted: the answer gave no {wants}")
            return
        work.refusal = Refusal("lacks_wanted", f"(a {wants})")
        work.note(self.name, "refused", "", f"lacks_wanted: {work.refusal.reason}")


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
        Answered(),
        Refuse(),
        Complete(),
        AnswersWhatIsAsked(),
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
    gate: Refusal | None = None,
    grade: Callable[[Checked], bool | None] | None = None,
    confirm: Confirm | None = None,
    stages: Sequence[str] = STAGES,
    entail: Entail | None = None,
    audit: au.Audit | None = None,
    answering: Answering | None = None,
    selection: Selection | None = None,
) -> dict:
    """The `Answer` fields for a finished draft: checked sentences, or a refusal. `gate` is the
    refusal a rule made before generation (the eval drafts anyway, so one stored draft can be
    judged under every rule set)."""
    if gate:
        return refusal_fields(gate) | dict(
            trace=[Step("screen", "refused", "", f"{gate.code}: {gate.reason}")]
        )
    ctx = Context(intent, evidence, embedder, trust, confirm, grade, entail, audit, answering, selection)
    return answer_fields(run_stages(draft, ctx, stages))


def answer_fields(work: Work) -> dict:
    """The `Answer` fields of a finished `Work`."""
    removed = work.checked.removed if work.checked else []
    fields: dict = dict(judged=work.judged, removed=removed, trace=work.trace, selected=work.selected)
    if work.refusal:
        return fields | refusal_fields(work.refusal)
    invented = work.checked.invented if work.checked else 0
    return fields | dict(
        text=work.text, citations=work.citations, sentences=work.sentences, invented_citations=invented
    )


def refusal_fields(refusal: Refusal) -> dict:
    return dict(text=REFUSAL, abstained=True, abstain_code=refusal.code, abstain_reason=refusal.reason)
