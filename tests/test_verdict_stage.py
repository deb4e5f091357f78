"""The `verdict` stage: the model judges each checked sentence against the source it cites, in one
more turn of the answer's own conversation (the fake model labels statements by a rule here; the
real model's turn is in tests/integration/test_default_model.py)."""

from rag.answer import audit as au
from rag.answer.audit import AUDIT_HEAD
from tests.conftest import make_pipeline

QUESTION = "How does knowledge entropy change during pretraining?"
# Paraphrases (not copies), so the model is asked about each.
TRUE = "Knowledge entropy keeps falling while pretraining goes on [1]."
FALSE = "Lower entropy helps the model acquire and retain knowledge [1]."


def _labels(contradicted: str = "", unstated: str = ""):
    def label(statement: str) -> str:
        if contradicted and contradicted in statement:
            return "CONTRADICTED"
        return "UNSTATED" if unstated and unstated in statement else "SUPPORTED"

    return label


def _pipeline(indexed, embedder, draft: str, on_contradiction="remove", **labels):
    pipeline, llm = make_pipeline(
        # Every sentence kept by the sentence decision: the verdict is what these tests are about.
        indexed,
        embedder,
        [draft],
        keep_threshold=0.0,
        on_contradiction=on_contradiction,
    )
    llm.verdict = _labels(**labels)
    return pipeline, llm


def test_a_contradicted_sentence_is_removed_with_the_sentence_of_its_source(indexed, embedder):
    pipeline, llm = _pipeline(indexed, embedder, f"{TRUE} {FALSE}", contradicted="helps")
    answer = pipeline.ask(QUESTION)
    assert not answer.abstained and "helps" not in answer.text and "falling" in answer.text
    (removed,) = [s for s in answer.removed if "helps" in s.text]
    assert "says otherwise" in removed.why_not and "impairs knowledge acquisition" in removed.why_not
    assert any(t.stage == "verdict" and t.decision == "removed" for t in answer.trace)
    # Without the stage, every sentence kept by the sentence decision, the contradiction is shown.
    checks_only, _ = make_pipeline(
        indexed,
        embedder,
        [f"{TRUE} {FALSE}"],
        answer_stages=["clean", "check", "select", "complete", "render"],
        keep_threshold=0.0,
    )
    assert "helps" in checks_only.ask(QUESTION).text


def test_by_default_a_contradicted_sentence_is_shown_marked_with_the_sentence_of_its_source(
    indexed, embedder
):
    pipeline, _ = _pipeline(
        indexed, embedder, f"{TRUE} {FALSE}", on_contradiction="mark", contradicted="helps"
    )
    answer = pipeline.ask(QUESTION)
    (marked,) = [s for s in answer.sentences if "helps" in s.text]
    assert "says otherwise" in marked.doubted and "impairs knowledge acquisition" in marked.doubted
    assert not answer.removed and any(t.decision == "disputed" for t in answer.trace)
    assert "Not confirmed by the cited source (1)" in __import__("ui.render").render.render_answer(
        answer, "m"
    )


def test_the_verdict_reads_the_answers_prompt_with_the_statements_after_it(indexed, embedder):
    pipeline, llm = _pipeline(indexed, embedder, f"{TRUE} {FALSE}")
    pipeline.ask(QUESTION)
    first, second = llm.verdict_prompts  # one statement a call
    (system, user) = llm.prompts[0]
    for turn in (first, second):
        assert turn[0] == system and turn[1]["content"].startswith(user["content"])  # the cached prompt first
    added = [turn[1]["content"][len(user["content"]) :] for turn in (first, second)]
    assert AUDIT_HEAD in added[0] and "[1]" in added[0] and "Knowledge entropy keeps falling" in added[0]
    assert "Lower entropy helps" in added[1]
    assert f"{TRUE} {FALSE}" not in first[1]["content"]  # the draft is judged, not shown as the model's own


def test_an_unstated_sentence_is_shown_and_marked(indexed, embedder):
    pipeline, _ = _pipeline(indexed, embedder, f"{TRUE} {FALSE}", unstated="falling")
    answer = pipeline.ask(QUESTION)
    (marked,) = [s for s in answer.sentences if "falling" in s.text]
    assert [c.detail for c in marked.checks if c.name == "verdict"] == [
        "“Knowledge Entropy Decay” does not state it"
    ]
    assert any(t.stage == "verdict" and t.decision == "unstated" for t in answer.trace)


def test_every_sentence_contradicted_leaves_nothing_backed_and_the_answer_is_refused(indexed, embedder):
    pipeline, _ = _pipeline(indexed, embedder, FALSE, contradicted="helps")
    answer = pipeline.ask(QUESTION)
    assert answer.abstained and not answer.sentences


def test_a_sentence_copied_from_its_source_needs_no_model(indexed, embedder):
    copied = "Knowledge entropy declines steadily as pretraining advances [1]."
    pipeline, llm = _pipeline(indexed, embedder, copied)
    answer = pipeline.ask(QUESTION)
    assert not answer.abstained and not llm.verdict_prompts
    # One word changed is not a copy.
    pipeline, llm = _pipeline(indexed, embedder, copied.replace("declines", "decreases"))
    assert not pipeline.ask(QUESTION).abstained and llm.verdict_prompts


def test_a_sentence_citing_two_papers_is_judged_against_each():
    from rag.search.evidence import evidence_for
    from rag.types import AnswerSentence, Citation, Paper
    from tests.fakes import FakeEmbedder

    a = Paper(id="a", title="A", abstract="Method A uses sparse attention.")
    b = Paper(id="b", title="B", abstract="Method B uses sparse attention too.")
    evidence = [evidence_for(a, FakeEmbedder(), 1), evidence_for(b, FakeEmbedder(), 2)]
    citations = [Citation(n, p.id, p.title, "", [], "", 0, 0, 1.0) for n, p in ((1, a), (2, b))]
    sentence = AnswerSentence("Both methods rely on sparse attention [1][2].", [1, 2], True, 1.0)
    asked = au.statements([sentence], citations, evidence)
    assert [(s.index, s.source) for s in asked] == [(0, 1), (0, 2)]


def test_a_reply_that_is_no_label_is_no_verdict():
    from tests.fakes import FakeLLM

    statement = au.Statement(0, 1, "X holds.")
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    said = au.ask(FakeLLM(verdict=lambda s: "MAYBE"), messages, [statement])
    assert said == [None]
    assert au.ask(FakeLLM(verdict=lambda s: "CONTRADICTED"), messages, [statement])[0].value == "contradicted"


def test_the_page_shows_an_unstated_sentence_under_its_own_heading(indexed, embedder):
    from ui.render import render_answer

    pipeline, _ = _pipeline(indexed, embedder, f"{TRUE} {FALSE}", unstated="falling")
    page = render_answer(pipeline.ask(QUESTION), "m1")
    assert "Not confirmed by the cited source (1)" in page and "does not state it" in page


def test_a_restatement_keeps_its_sources_words_in_order_and_drops_no_negation():
    from rag.search.evidence import evidence_for
    from rag.types import Paper
    from tests.fakes import FakeEmbedder

    paper = Paper(
        id="x", title="T",
        abstract="Finally, we propose a sampling-based method that solves this joint learning task. "
        "It reduces text-to-3D time to 10 minutes and image-to-3D time to 30 seconds. Noisy SVGD does not collapse.",
    )  # fmt: skip
    ev = evidence_for(paper, FakeEmbedder(), 1)
    assert au._copied("The paper proposes a sampling-based method that solves this joint learning task.", ev)
    assert au._copied("Noisy SVGD does not collapse.", ev)
    # Asked of the model: a number moved to the other quantity, an added "only", a dropped negation.
    assert not au._copied("It reduces text-to-3D time to 30 seconds and image-to-3D time to 10 minutes.", ev)
    assert not au._copied("The paper proposes a sampling-based method that only solves this joint task.", ev)
    assert not au._copied("Noisy SVGD does collapse.", ev)


def test_an_answer_none_of_whose_sentences_its_source_confirms_is_a_refusal(indexed, embedder):
    pipeline, _ = _pipeline(indexed, embedder, TRUE, unstated="falling")
    answer = pipeline.ask(QUESTION)
    assert answer.abstained and answer.abstain_code == "draft_unconfirmed"
    assert "confirmed none" in answer.selected["decision"]["why"][0]
    # One sentence confirmed beside it: the answer stands, the other marked.
    pipeline, _ = _pipeline(indexed, embedder, f"{TRUE} {FALSE}", unstated="falling")
    assert not pipeline.ask(QUESTION).abstained
